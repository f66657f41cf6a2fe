"""Make the portal's live read model (LiveGame, LiveSession) again from the stored feed messages: after a
restore, or to check it (the intake keeps it as it accepts messages; this gives the same rows)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from halls.regulator.models import Installation
from halls.regulator.services import livemodel


class Command(BaseCommand):
    help = "Rebuild the live page's read model from the stored feed messages (HALL_ROLE=regulator)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("uids", nargs="*", help="installation ids (all when none)")

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.HALL_ROLE != "regulator":
            raise CommandError(f"HALL_ROLE={settings.HALL_ROLE}: the live read model is a regulator's.")
        ids = None
        if options["uids"]:
            found = dict(Installation.objects.filter(uid__in=options["uids"]).values_list("uid", "pk"))
            unknown = sorted(set(options["uids"]) - set(found))
            if unknown:
                raise CommandError(f"no installation {', '.join(unknown)} is registered here.")
            ids = list(found.values())
        done = livemodel.rebuild(ids)
        self.stdout.write(
            f"rebuilt the live read model of {done.installations} installations: "
            f"{done.games} games, {done.sessions} sessions"
        )
