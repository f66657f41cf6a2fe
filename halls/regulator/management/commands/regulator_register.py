"""Register an installation of the region at this regulator's node, with its public key (the output of
`manage.py feed_identity` on the installation)."""

from __future__ import annotations

import getpass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from halls.errors import DomainError
from halls.regulator.services import registry


def _coordinate(text: str | None) -> Decimal | None:
    if text is None:
        return None
    try:
        return Decimal(text)
    except InvalidOperation:
        raise CommandError(f"{text!r} is not a coordinate.") from None


class Command(BaseCommand):
    help = "Register (or update) an installation at this regulator's node (HALL_ROLE=regulator)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("uid", help="its installation id (16 hex digits: feed_identity's)")
        parser.add_argument("name")
        parser.add_argument("kind", choices=["venue", "central"])
        parser.add_argument("jurisdiction", help="its jurisdiction's code (ML, CT, ...)")
        parser.add_argument("public_key", help="its Ed25519 public key: 64 hex digits")
        parser.add_argument("--licence", default="", help="a venue's licence number")
        parser.add_argument("--silence-seconds", type=int, default=0, help="its own silence window")
        parser.add_argument("--latitude")
        parser.add_argument("--longitude")
        parser.add_argument("--replace-key", action="store_true", help="accept a new key for a known id")
        parser.add_argument(
            "--by", default=getpass.getuser(), help="who registers it (recorded; the system user by default)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.HALL_ROLE != "regulator":
            raise CommandError(
                f"HALL_ROLE={settings.HALL_ROLE}: installations register at a regulator's node."
            )
        try:
            installation = registry.register(
                uid=options["uid"],
                name=options["name"],
                kind=options["kind"],
                licence_number=options["licence"],
                jurisdiction=options["jurisdiction"],
                public_key=options["public_key"],
                silence_seconds=options["silence_seconds"],
                latitude=_coordinate(options["latitude"]),
                longitude=_coordinate(options["longitude"]),
                replace_key=options["replace_key"],
                actor=options["by"],
            )
        except DomainError as refusal:
            raise CommandError(refusal.message) from refusal
        self.stdout.write(
            f"registered {installation.uid} ({installation.name}),"
            f" next message {installation.accepted_sequence + 1}"
        )
