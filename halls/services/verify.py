"""Verify the tamper evidence of venues on a live system: audit chains, pools' seals, against the anchors.

Everything is read in one snapshot (``audit.snapshot``): a chain growing while it is read is seen as it was
at one instant, so an intact chain on a busy hall verifies as intact. The anchors are read first, outside
it (see ``anchors.read_all``). The report names each chain's first bad link and what is wrong with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pgtrigger
from django.db import connection
from django.utils.translation import gettext as _

from halls import hooks, sqlite_triggers
from halls.chains import Anchor, ChainReport
from halls.errors import NotFound
from halls.models import Venue
from halls.services import anchors, audit


@dataclass(frozen=True)
class AuditReport:
    chains: list[ChainReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(chain.ok for chain in self.chains)

    @property
    def first_bad(self) -> ChainReport | None:
        return next((chain for chain in self.chains if not chain.ok), None)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "chains": [chain.as_dict() for chain in self.chains]}


def _missing(kind: str, chain_id: int, anchor: Anchor) -> ChainReport:
    return ChainReport(
        kind, chain_id, f"{kind} {chain_id}", False, 0, 1, None,
        f"anchored at {anchor.seq} links on {anchor.at}, but the chain is gone from the database",
        anchored_seq=anchor.seq,
    )  # fmt: skip


def _trigger_problems() -> list[ChainReport]:
    """The append-only triggers (PostgreSQL): one switched off or dropped is reported while it stays so.

    An owner who switches a trigger off, edits and switches it back on leaves no trace here; what was
    sealed or chained before the edit still shows it, and the key and anchors stop a recomputation.
    """
    if connection.vendor == "sqlite":
        off = sqlite_triggers.missing(connection.alias)
        if not off:
            return []
        return [
            ChainReport("triggers", 0, "append-only triggers", False, 0, reason=f"missing: {', '.join(off)}")
        ]
    expected = {(model._meta.db_table, trigger.get_pgid(model)) for model, trigger in pgtrigger.registered()}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE t.tgname LIKE 'pgtrigger_%%' AND t.tgenabled <> 'D'"
        )
        enabled = set(cursor.fetchall())
    off = sorted(f"{table}.{name}" for table, name in expected - enabled)
    if not off:
        return []
    reason = f"append-only triggers switched off or missing: {', '.join(off)}"
    return [ChainReport("triggers", 0, "append-only triggers", False, 0, reason=reason)]


def verify_audit(*, venue_ids: list[int] | None = None) -> AuditReport:
    """Verify the given venues (all when None): each audit chain, every pool's seals, the anchors."""
    files = anchors.read_all()  # first: everything anchored here is in the snapshot below
    latest = {key: f.latest for key, f in files.items() if f.latest is not None}
    chains: list[ChainReport] = []
    with audit.snapshot():
        venues = Venue.objects.order_by("pk")
        if venue_ids is not None:
            venues = venues.filter(pk__in=venue_ids)
        found = {v.pk: v for v in venues}
        for venue_id in venue_ids or list(found):
            venue = found.get(venue_id)
            anchor = latest.get(("venue", venue_id))
            if venue is None:
                if anchor is None:
                    raise NotFound(_("No venue %(venue_id)s.") % {"venue_id": venue_id}, code="unknown_venue")
                chains.append(_missing("venue", venue_id, anchor))
                continue
            check = audit.verify_chain(venue_id, anchor)
            chains.append(
                ChainReport(
                    "venue",
                    venue_id,
                    venue.name,
                    check.ok,
                    check.entries,
                    check.first_bad_seq,
                    check.first_bad_id,
                    check.reason,
                    check.legacy,
                    anchor.seq if anchor else None,
                )
            )
        for verifier in hooks.chain_verifiers():
            chains.extend(verifier(venue_ids, latest))
        chains.extend(_trigger_problems())
    if venue_ids is None:
        # A chain anchored outside but verified by nobody: its rows (and owner) were deleted.
        seen = {(c.kind, c.id) for c in chains}
        chains.extend(
            _missing(kind, cid, a) for (kind, cid), a in sorted(latest.items()) if (kind, cid) not in seen
        )
    for (kind, cid), f in sorted(files.items()):
        if f.problem and (venue_ids is None or any((c.kind, c.id) == (kind, cid) for c in chains)):
            chains.append(ChainReport("anchors", cid, f"anchors of {kind} {cid}", False, 0, reason=f.problem))
    return AuditReport(chains)
