"""Read or set forward a venue's lab clock (halls.services.venueclock), for certification labs and tests.

    manage.py lab_clock 3                                  # the venue's time, the real time, the offset
    manage.py lab_clock 3 --to 2026-12-07T20:01:00+01:00   # set it to an instant
    manage.py lab_clock 3 --forward 1d2h30m                # or so far forward (d, h, m, s)

Refused in production (HALL_ENV=production): there is no lab clock there.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from halls.actors import Actor
from halls.errors import DomainError
from halls.models import Venue
from halls.services import venueclock

SPAN = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def forward_span(text: str) -> timedelta:
    """'1d2h30m' → a timedelta; anything else (nothing, a sign, another unit) is refused."""
    found = SPAN.match(text.strip())
    if found is None or not any(found.groups()):
        raise CommandError(_("--forward takes days, hours, minutes, seconds: 1d2h30m, 90m, 45s."))
    days, hours, minutes, seconds = (int(g or 0) for g in found.groups())
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


class Command(BaseCommand):
    help = "Read or set forward a venue's lab clock (never in production)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("venue", type=int, help="The venue's id.")
        moves = parser.add_mutually_exclusive_group()
        moves.add_argument("--to", help="An instant with its offset, ISO 8601: 2026-12-07T20:01:00+01:00.")
        moves.add_argument("--forward", help="How far forward: 1d2h30m, 90m, 45s.")
        parser.add_argument("--by", default="", help="The username the move is audited under.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not venueclock.enabled():
            raise CommandError(_("There is no lab clock in production."))
        venue = Venue.objects.filter(pk=options["venue"]).first()
        if venue is None:
            raise CommandError(_("No venue %(venue_id)s.") % {"venue_id": options["venue"]})
        actor: Actor = "lab_clock"
        if options["by"]:
            user = User.objects.filter(username=options["by"]).first()
            if user is None:
                raise CommandError(_("No user %(username)s.") % {"username": options["by"]})
            actor = user
        to: datetime | None = None
        if options["to"]:
            try:
                to = datetime.fromisoformat(options["to"])
            except ValueError:
                raise CommandError(_("--to takes an ISO 8601 instant with its offset.")) from None
        forward = forward_span(options["forward"]) if options["forward"] else None
        if to is not None or forward is not None:
            try:
                venueclock.move(venue=venue, actor=actor, to=to, forward=forward)
            except DomainError as exc:
                raise CommandError(f"{exc.code}: {exc.message}") from exc
        self.stdout.write(json.dumps(venueclock.reading(venue)))
