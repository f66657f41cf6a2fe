"""The central operator's command for a venue's link credential: issue, rotate, revoke (each audited),
printing the lines the venue's settings need (the secret is shown this once)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from halls.errors import DomainError
from halls.link.services import credentials
from halls.models import Venue


class Command(BaseCommand):
    help = "Issue, rotate or revoke a venue's link credential at the central (by the venue's licence number)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["issue", "rotate", "revoke"])
        parser.add_argument(
            "licence_number", help="The venue's licence number (its identity on the network)."
        )
        parser.add_argument(
            "--grace-seconds",
            type=float,
            default=None,
            help="rotate: seconds the old credential keeps working (HALL_LINK_ROTATION_GRACE_SECONDS).",
        )
        parser.add_argument(
            "--central-url",
            default="",
            help="The central's URL as the venue reaches it (for the printed lines).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.HALL_ROLE != "central":
            raise CommandError(_("Link credentials are issued at the central (HALL_ROLE=central)."))
        venue = Venue.objects.filter(licence_number=options["licence_number"]).first()
        if venue is None:
            raise CommandError(_("No venue with licence number %(n)s.") % {"n": options["licence_number"]})
        actor = "link_credential command"
        try:
            if options["action"] == "revoke":
                count = credentials.revoke(venue=venue, actor=actor)
                self.stdout.write(
                    _("%(count)s credentials of %(venue)s revoked.") % {"count": count, "venue": venue.name}
                )
                return
            if options["action"] == "issue":
                issued = credentials.issue(venue=venue, actor=actor)
            else:
                grace = options["grace_seconds"]
                issued = credentials.rotate(
                    venue=venue, actor=actor, grace=timedelta(seconds=grace) if grace is not None else None
                )
        except DomainError as refusal:
            raise CommandError(refusal.message) from refusal
        self.stdout.write(
            _("Settings of the venue %(venue)s (the secret is not shown again):") % {"venue": venue.name}
        )
        self.stdout.write("HALL_ROLE=venue")
        self.stdout.write(f"HALL_CENTRAL_URL={options['central_url'] or 'https://<central>'}")
        self.stdout.write(f"HALL_LINK_VENUE={venue.licence_number}")
        self.stdout.write(f"HALL_LINK_KEY={issued.key}")
        self.stdout.write(f"HALL_LINK_SECRET={issued.secret}")
