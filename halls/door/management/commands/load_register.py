"""Load a prohibited-access register's file (its shape: halls.door.registerfile's docstring).

    manage.py load_register rgiaj-0042.csv                      # into the register its header names
    manage.py load_register rgiaj-0042.csv --create "RGIAJ"     # creating that register the first time
    manage.py load_register rgiaj-0042.csv --by operator        # audited under a user

All or nothing: a refused file changes nothing, and the refusal names the line and the problem.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from halls.actors import Actor
from halls.door.services import registers
from halls.errors import DomainError


class Command(BaseCommand):
    help = "Load a prohibited-access register's file (all or nothing)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The register file.")
        parser.add_argument("--create", metavar="NAME", help="Create the register named in the header.")
        parser.add_argument("--by", default="", help="The username the load is audited under.")

    def handle(self, *args: Any, **options: Any) -> None:
        actor: Actor = "load_register"
        if options["by"]:
            user = User.objects.filter(username=options["by"]).first()
            if user is None:
                raise CommandError(_("No user %(username)s.") % {"username": options["by"]})
            actor = user
        path = Path(options["file"])
        try:
            stream = path.open("rb")
        except OSError as exc:
            why = {"file": path, "why": exc.strerror}
            raise CommandError(_("Cannot read %(file)s: %(why)s") % why) from exc
        with stream:
            try:
                version = registers.load_register_file(
                    stream=stream, actor=actor, create_name=options["create"]
                )
            except DomainError as exc:
                raise CommandError(exc.message) from exc
        self.stdout.write(
            _("Register %(code)s version %(version)d loaded: %(count)d entries.")
            % {"code": version.register.code, "version": version.number, "count": version.entry_count}
        )
