"""Verify the tamper evidence of a live hall: each venue's audit chain, every pool's seals, each venue's
cashier ledger against what its audit entries sealed, the anchors.

Exit status 0 when everything verifies, 1 when anything does not (the first bad link of each chain is
named: venue, pool or ledger, its position, what is wrong; of a ledger, the first transaction that
differs). ``--json`` prints the report as JSON.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from halls.errors import DomainError
from halls.services.verify import verify_audit


class Command(BaseCommand):
    help = (
        "Verify audit chains, pool seals, cashier ledgers and the anchors, in one snapshot; exit 1 when bad."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--venue", type=int, action="append", help="a venue id (repeatable); all by default"
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = verify_audit(venue_ids=options["venue"])
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2))
        else:
            for chain in report.chains:
                where = f"{chain.kind} {chain.id} ({chain.name})"
                if chain.ok:
                    extra = f", {chain.legacy} unkeyed" if chain.legacy else ""
                    anchored = f", anchored at {chain.anchored_seq}" if chain.anchored_seq else ""
                    self.stdout.write(
                        _("ok   %(where)s: %(length)s links%(extra)s%(anchored)s")
                        % {"where": where, "length": chain.length, "extra": extra, "anchored": anchored}
                    )
                else:
                    self.stdout.write(
                        _("BAD  %(where)s: first bad link %(first_bad_seq)s: %(reason)s")
                        % {"where": where, "first_bad_seq": chain.first_bad_seq, "reason": chain.reason}
                    )
        if not report.ok:
            raise SystemExit(1)
