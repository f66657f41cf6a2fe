"""Propose loading a prohibited-access register's file (its shape: halls.door.registerfile's docstring).

    manage.py load_register rgiaj-0042.csv --by ana                      # into the register its header names
    manage.py load_register rgiaj-0042.csv --by ana --create "RGIAJ"     # creating it the first time
    manage.py load_register rgiaj-0042.csv --by ana --venue 3            # where the installation has several

Four eyes (halls.foureyes, kind ``door.register_load``): the file is checked and proposed under the
operator named by ``--by``; it loads when another operator of the venue approves the proposal with their
own password (the /proposals/ page, the admin or POST /api/proposals/{id}/approve/). The approval reads
the file again from the same path and loads it only if its SHA-256 is still the proposed one; all or
nothing: a refused file changes nothing, and the refusal names the line and the problem.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from halls.door.services import proposal_kinds
from halls.errors import DomainError
from halls.models import Venue
from halls.services import proposals


class Command(BaseCommand):
    help = "Propose loading a prohibited-access register's file; a second operator approves it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The register file.")
        parser.add_argument("--create", metavar="NAME", help="Create the register named in the header.")
        parser.add_argument("--by", required=True, help="The operator who proposes the load (username).")
        parser.add_argument("--venue", type=int, help="The venue whose operators decide (when several).")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["by"]).first()
        if user is None:
            raise CommandError(_("No user %(username)s.") % {"username": options["by"]})
        venues = Venue.objects.filter(pk=options["venue"]) if options["venue"] else Venue.objects.all()
        if venues.count() != 1:
            raise CommandError(_("Name the venue with --venue (its operators approve the load)."))
        path = Path(options["file"])
        try:
            proposal = proposals.propose(
                venue=venues.get(),
                kind=proposal_kinds.REGISTER_LOAD,
                target=f"register-file:{path.name}"[:120],
                params={"path": str(path), "create_name": options["create"] or ""},
                actor=user,
            )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            _(
                "Proposal %(pk)d: register %(code)s version %(version)d, SHA-256 %(sha)s. It loads when "
                "another operator approves it with their own password."
            )
            % {
                "pk": proposal.pk,
                "code": proposal.params["register"],
                "version": proposal.params["version"],
                "sha": proposal.params["sha256"],
            }
        )
