"""Make the drawing workers' seed key (once) and print its public half for the web processes.

    manage.py draw_seed_key                # the key file of HALL_DRAW_SEED_KEY_FILE, made if missing
    manage.py draw_seed_key --file PATH    # another file (e.g. /etc/hall/draw-seed.key before deploying)

Prints HALL_DRAW_SEED_PUBLIC_KEY=<64 hex> and the key's id: put the line in the web processes' environment,
and give the file only to the workers (deploy/README.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from bingo.draws import seedbox


class Command(BaseCommand):
    help = "Make the drawing workers' seed key if missing and print its public key."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--file", default=settings.HALL_DRAW_SEED_KEY_FILE, help="the key file")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        existed = path.exists()
        key = seedbox.read_key_file(path) if existed else seedbox.new_key_file(path)
        public = key.public_key()
        self.stdout.write(f"HALL_DRAW_SEED_PUBLIC_KEY={seedbox.public_bytes(public).hex()}")
        self.stdout.write(f"# key {seedbox.key_id(public)} in {path} ({'kept' if existed else 'made now'})")
