"""Generate the caller's voice clips (bingo.traditional.voicefiles) into HALL_VOICE_DIR: `make voice`, at
install time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from bingo.traditional.voicefiles import VoiceBuildError, build


class Command(BaseCommand):
    help = "Generate the caller's voice clips (espeak-ng, Spanish) into HALL_VOICE_DIR; only what changed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="regenerate every clip")
        parser.add_argument("--dir", default=None, help="output directory (default: HALL_VOICE_DIR)")

    def handle(self, *args: Any, **options: Any) -> None:
        directory = Path(options["dir"] or settings.HALL_VOICE_DIR)
        try:
            report = build(
                directory,
                engine=settings.HALL_VOICE_ENGINE,
                voice=settings.HALL_VOICE_NAME,
                force=options["force"],
            )
        except VoiceBuildError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"voice: {report.generated} clips generated, {report.kept} kept, in {report.directory}"
        )
