"""A venue's notices from the central (latest first); at the central, `--send` one to a venue."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.translation import gettext as _

from halls.link.services import notices
from halls.models import Venue


class Command(BaseCommand):
    help = "List the central's notices to this venue, or (at the central) --send one to a venue."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--send", nargs=2, metavar=("LICENCE_NUMBER", "TEXT"), help="Central: send a notice."
        )
        parser.add_argument("--level", choices=notices.LEVELS, default="info")
        parser.add_argument("--limit", type=int, default=20)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["send"]:
            if settings.HALL_ROLE != "central":
                raise CommandError(_("Notices are sent by the central (HALL_ROLE=central)."))
            licence, text = options["send"]
            venue = Venue.objects.filter(licence_number=licence).first()
            if venue is None:
                raise CommandError(_("No venue with licence number %(n)s.") % {"n": licence})
            entry = notices.send(venue=venue, text=text, level=options["level"], actor="link_notices command")
            self.stdout.write(
                _("Notice %(seq)s sent on %(stream)s.") % {"seq": entry.sequence, "stream": entry.stream}
            )
            return
        shown = 0
        for notice in notices.recent(limit=options["limit"]):
            when = timezone.localtime(notice.received_at).strftime("%Y-%m-%d %H:%M:%S")
            self.stdout.write(f"{when} [{notice.level}] {notice.text}")
            shown += 1
        if not shown:
            self.stdout.write(_("No notice from the central."))
