"""Export every chain's head (and the hash at its latest anchored position) for scripts/verify_anchors.py."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from halls.services import anchors


class Command(BaseCommand):
    help = "Print (or write to --out) every chain's head as JSON, for scripts/verify_anchors.py --heads."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", help="a file to write (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        text = json.dumps(anchors.export_heads(), indent=2, sort_keys=True) + "\n"
        if options["out"]:
            with open(options["out"], "w", encoding="utf-8") as out:
                out.write(text)
        else:
            self.stdout.write(text, ending="")
