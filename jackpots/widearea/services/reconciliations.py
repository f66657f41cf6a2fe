"""The reconciliations of wide-area pools as the operator and the inspector read them (a read model:
nothing here writes): each reconciliation of a venue's meters recorded at this installation (at the
central, one per venue's meters message; at a venue, one per answer of the central), newest first, with
the totals each record held per level and the differences found, by the check that found them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from typing import Any

from django.utils.translation import gettext_lazy as _

from halls import access, money
from halls.models import Role
from jackpots.widearea import core
from jackpots.widearea.models import (
    CheckChoice,
    ReconciliationState,
    Side,
    WideAreaDifference,
    WideAreaPool,
    WideAreaReconciliation,
)

LISTED = 200  # the newest reconciliations listed (filters narrow them)
RECORDS = ("stated", "received", "applied", "ledger")
PARTS = {
    "count": _("Contributions counted"),
    "bet": _("Played"),
    "to_meter": _("To the meter"),
    "to_reserve": _("To the reserve"),
    "house": _("House's share"),
}


@dataclass(frozen=True)
class ShownDifference:
    kind: str
    check: str
    level: str
    field: str
    part: str
    venue: Decimal
    central: Decimal
    delta: Decimal

    @property
    def is_count(self) -> bool:
        return self.field == "count"

    @classmethod
    def of(cls, d: WideAreaDifference) -> ShownDifference:
        return cls(
            kind=d.kind,
            check=check_label(d.kind),
            level=d.level,
            field=d.field,
            part=str(PARTS.get(d.field, d.field)),
            venue=d.venue_value,
            central=d.central_value,
            # The one place a shown difference's delta is computed (core's, as the link tells it).
            delta=core.Difference(d.level, d.field, d.venue_value, d.central_value).delta,
        )


@dataclass(frozen=True)
class LevelTotals:
    """One level's totals as each record held them (None: the record has nothing of the level)."""

    level: str
    totals: dict[str, core.LevelSums | None]


@dataclass(frozen=True)
class Listed:
    row: WideAreaReconciliation
    levels: list[LevelTotals]
    differences: list[WideAreaDifference] = field(default_factory=list)

    @cached_property
    def shown(self) -> list[ShownDifference]:
        """The differences as shown and answered (the page's table and `as_payload`), made once."""
        return [ShownDifference.of(d) for d in self.differences]

    @property
    def state_label(self) -> str:
        return str(ReconciliationState(self.row.state).label)

    def as_payload(self) -> dict[str, Any]:
        row = self.row
        return {
            "id": row.pk,
            "side": row.side,
            "pool": row.pool_code,
            "venue": {"id": row.venue_id, "licence": row.venue.licence_number, "name": row.venue.name},
            "sequence": row.key,
            "through": row.through,
            "reconciled_at": row.reconciled_at.isoformat(),
            "state": row.state,
            "totals": {name: getattr(row, name) for name in RECORDS},
            "differences": [
                {
                    "check": d.kind,
                    "level": d.level,
                    "field": d.field,
                    "venue": money.text(d.venue),
                    "central": money.text(d.central),
                    "delta": money.text(d.delta),
                }
                for d in self.shown
            ],
        }

    def as_feed(self) -> dict[str, Any]:
        """The reconciliation as the authority's node receives it (feed kind widearea.reconciled): what
        the API answers, less this installation's row ids (the venue by its licence)."""
        payload = self.as_payload()
        del payload["id"]
        payload["venue"] = payload["venue"]["licence"]
        return payload


def reader_venue_ids(user: access.AnyUser) -> list[int]:
    """The venues whose reconciliations `user` reads: where they hold the inspector's role (the operator
    holds every role; inside a read, so does the inspector, and the read is marked as an inspector's): one
    query, however many venues the reader holds roles in."""
    return access.venue_ids_with(user, Role.INSPECTOR)


def filters(params: Mapping[str, Any]) -> tuple[str, str, int | None]:
    """The side, pool and venue a reader asked for (the query's `side`, `pool`, `venue`); a side not known
    is the default one, a venue not a number none."""
    side = str(params.get("side") or "")
    if side not in Side.values:
        side = default_side()
    pool = str(params.get("pool") or "").strip()[:40]
    venue = str(params.get("venue") or "")
    venue_id = int(venue) if venue.isdigit() and len(venue) < 10 else None
    return side, pool, venue_id


def default_side() -> str:
    """The central's reconciliations where this installation is a wide-area pool's central; else the
    venue's."""
    return Side.CENTRAL if WideAreaPool.objects.exists() else Side.VENUE


def _levels(row: WideAreaReconciliation) -> list[LevelTotals]:
    parsed = {name: core.sums_from_payload(getattr(row, name) or {}) for name in RECORDS}
    names = sorted({level for sums in parsed.values() for level in sums})
    return [LevelTotals(name, {r: parsed[r].get(name) for r in RECORDS}) for name in names]


def listed(
    *,
    venue_ids: Iterable[int],
    side: str,
    pool: str = "",
    venue_id: int | None = None,
    limit: int = LISTED,
) -> list[Listed]:
    """The reconciliations of the venues `venue_ids` (the reader's), of one `side`, optionally of one
    pool and one venue, newest first, each with its differences (two queries)."""
    rows = WideAreaReconciliation.objects.filter(side=side, venue_id__in=list(venue_ids)).select_related(
        "venue"
    )
    if pool:
        rows = rows.filter(pool_code=pool)
    if venue_id is not None:
        rows = rows.filter(venue_id=venue_id)
    return _with_differences(list(rows.order_by("-reconciled_at", "-pk")[:limit]))


def of(row: WideAreaReconciliation) -> Listed:
    """One reconciliation as `listed` shows it (its differences as recorded)."""
    (item,) = _with_differences([row])
    return item


def _with_differences(found: list[WideAreaReconciliation]) -> list[Listed]:
    """Each of `found` with its differences, by check, level and part (one query)."""
    by_row: dict[int, list[WideAreaDifference]] = {r.pk: [] for r in found}
    for difference in WideAreaDifference.objects.filter(reconciliation_id__in=by_row).order_by(
        "kind", "level", "field", "pk"
    ):
        assert difference.reconciliation_id is not None
        by_row[difference.reconciliation_id].append(difference)
    return [Listed(r, _levels(r), by_row[r.pk]) for r in found]


def pools_of(venue_ids: Sequence[int], side: str) -> list[str]:
    """The pools the reader's reconciliations are of (the page's filter)."""
    return sorted(
        set(
            WideAreaReconciliation.objects.filter(side=side, venue_id__in=list(venue_ids)).values_list(
                "pool_code", flat=True
            )
        )
    )


def check_label(kind: str) -> str:
    return str(CheckChoice(kind).label) if kind in CheckChoice.values else kind
