"""What meters show: the live amount per level (folded + unfolded, capped at the ceiling, whole cents DOWN),
hits and payouts. Read-only and cheap: the unfolded part is only the rows since the last fold.

The must-hit-by value is never part of a meter. Screens poll `changed_pools_since` (a few index range
scans) and read `pool_meters` for the pools that changed; `pool.contributed` is never an event.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import money
from halls.fields import MoneyField
from jackpots.models import (
    Award,
    Contribution,
    LedgerMove,
    LevelKind,
    ParameterChange,
    Pool,
    PoolLevel,
    PoolSettlement,
)
from jackpots.services.amounts import display

ZERO = Decimal(0)
LAST_HITS = 25


@dataclass(frozen=True)
class HitView:
    at: datetime
    level_id: int
    level_name: str
    kind: str
    source: str
    seat: str
    hand: str
    category: str
    amount: Decimal

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.at.isoformat(),
            "level": self.level_id,
            "level_name": self.level_name,
            "kind": self.kind,
            "source": self.source,
            "seat": self.seat,
            "hand": self.hand,
            "category": self.category,
            "amount": str(self.amount),
        }


@dataclass(frozen=True)
class LevelMeter:
    level_id: int
    position: int
    name: str
    kind: str
    amount: Decimal  # live, capped at the ceiling, whole cents rounded down
    seed: Decimal
    ceiling: Decimal | None
    reserve: Decimal  # the hidden reserve (whole cents down): for staff, not for players' screens
    overflow: Decimal  # total overflowed above the ceiling so far (whole cents down)
    hits: int
    total_paid: Decimal
    last_hits: tuple[HitView, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "level": self.level_id,
            "position": self.position,
            "name": self.name,
            "kind": self.kind,
            "amount": str(self.amount),
            "seed": str(display(self.seed)),
            "ceiling": None if self.ceiling is None else str(display(self.ceiling)),
            "reserve": str(self.reserve),
            "overflow": str(self.overflow),
            "hits": self.hits,
            "total_paid": str(self.total_paid),
            "last_hits": [hit.as_dict() for hit in self.last_hits],
        }


@dataclass(frozen=True)
class PoolMeter:
    pool_id: int
    code: str
    name: str
    currency: str
    venue_id: int | None
    network_id: int | None
    rule_pack: str
    carousel_bet: Decimal | None
    active: bool
    levels: tuple[LevelMeter, ...]
    last_hits: tuple[HitView, ...]  # the pool's last 25 hits, all levels, newest first
    as_of: datetime

    def as_dict(self) -> dict[str, Any]:
        return {
            "pool": self.pool_id,
            "code": self.code,
            "name": self.name,
            "currency": self.currency,
            "venue": self.venue_id,
            "network": self.network_id,
            "rule_pack": self.rule_pack,
            "carousel_bet": None if self.carousel_bet is None else str(self.carousel_bet),
            "active": self.active,
            "levels": [level.as_dict() for level in self.levels],
            "last_hits": [hit.as_dict() for hit in self.last_hits],
            "as_of": self.as_of.isoformat(),
        }


def _unfolded(field: str) -> Coalesce:
    sums = (
        Contribution.objects.filter(level_id=OuterRef("pk"), id__gt=OuterRef("folded_through"))
        .order_by()
        .values("level_id")
        .annotate(total=Sum(field))
        .values("total")
    )
    return Coalesce(Subquery(sums, output_field=_meter_field()), ZERO, output_field=_meter_field())


def _meter_field() -> MoneyField[Any, Any]:
    return MoneyField(max_digits=money.METER_DIGITS, decimal_places=money.METER_PLACES)


def _live_amount(level: PoolLevel, unfolded: Decimal) -> Decimal:
    if level.kind == LevelKind.FIXED:
        return level.amount
    return level.amount + money.under_ceiling(level.amount, unfolded, level.ceiling)


def _hits(awards: Iterable[Award], names: dict[int, str]) -> tuple[HitView, ...]:
    return tuple(
        HitView(
            at=a.created_at,
            level_id=a.level_id,
            level_name=names.get(a.level_id, ""),
            kind=a.settlement.kind,
            source=a.source,
            seat=a.seat,
            hand=a.hand,
            category=a.category,
            amount=a.amount,
        )
        for a in awards
    )


def pool_meters(pool_ids: Iterable[int]) -> dict[int, PoolMeter]:
    """Meters of several pools: one query for the levels with their unfolded sums, then the hits."""
    ids = sorted(set(pool_ids))
    if not ids:
        return {}
    pools = {p.pk: p for p in Pool.objects.filter(pk__in=ids)}
    levels = list(
        PoolLevel.objects.filter(pool_id__in=pools)
        .annotate(unfolded_meter=_unfolded("to_meter"), unfolded_reserve=_unfolded("to_reserve"))
        .order_by("pool_id", "position")
    )
    names = {level.pk: level.name for level in levels}
    as_of = timezone.now()
    meters: dict[int, PoolMeter] = {}
    for pool_id, pool in pools.items():
        level_meters = []
        for level in (lv for lv in levels if lv.pool_id == pool_id):
            recent = (
                Award.objects.filter(level_id=level.pk, amount__gt=0)
                .select_related("settlement")
                .order_by("-id")
            )
            level_meters.append(
                LevelMeter(
                    level_id=level.pk,
                    position=level.position,
                    name=level.name,
                    kind=level.kind,
                    amount=display(_live_amount(level, level.unfolded_meter)),
                    seed=level.seed,
                    ceiling=level.ceiling,
                    reserve=display(level.reserve + level.unfolded_reserve),
                    overflow=display(level.overflow_total),
                    hits=level.hits,
                    total_paid=level.total_paid,
                    last_hits=_hits(recent[:LAST_HITS], names),
                )
            )
        pool_hits = (
            Award.objects.filter(pool_id=pool_id, amount__gt=0).select_related("settlement").order_by("-id")
        )
        meters[pool_id] = PoolMeter(
            pool_id=pool_id,
            code=pool.code,
            name=pool.name,
            currency=pool.currency,
            venue_id=pool.venue_id,
            network_id=pool.network_id,
            rule_pack=pool.rule_pack,
            carousel_bet=pool.carousel_bet,
            active=pool.active,
            levels=tuple(level_meters),
            last_hits=_hits(pool_hits[:LAST_HITS], names),
            as_of=as_of,
        )
    return meters


def live_levels(pool_ids: Iterable[int]) -> dict[int, tuple[tuple[str, Decimal], ...]]:
    """Each pool's levels (name, live amount) in position order, as `pool_meters` shows them (capped at the
    ceiling, whole cents down), in ONE query: no hits, no reserve. For readers several times a second (the
    machines' progressive broadcast, the wide-area levels), where `pool_meters`' two queries a level for
    the last hits would be most of the work."""
    ids = sorted(set(pool_ids))
    if not ids:
        return {}
    found: dict[int, list[tuple[str, Decimal]]] = {}
    rows = (
        PoolLevel.objects.filter(pool_id__in=ids)
        .annotate(unfolded_meter=_unfolded("to_meter"))
        .order_by("pool_id", "position")
        .values_list("pool_id", "name", "kind", "amount", "ceiling", "unfolded_meter")
    )
    for pool_id, name, kind, amount, ceiling, unfolded in rows:  # tuples: no model built per level
        live = amount if kind == LevelKind.FIXED else amount + money.under_ceiling(amount, unfolded, ceiling)
        found.setdefault(pool_id, []).append((name, display(live)))
    return {pool_id: tuple(levels) for pool_id, levels in found.items()}


def pool_meter(pool: Pool | int) -> PoolMeter:
    pool_id = pool if isinstance(pool, int) else int(pool.pk)
    meters = pool_meters([pool_id])
    if pool_id not in meters:
        from halls.errors import NotFound

        raise NotFound(_("No pool %(pool_id)s.") % {"pool_id": pool_id}, code="unknown_pool")
    return meters[pool_id]


@dataclass(frozen=True)
class MeterCursor:
    """Where a poller stands: the last id seen in each table that changes what a meter shows."""

    contribution: int = 0
    settlement: int = 0
    move: int = 0
    change: int = 0


def _max_id(model: Any) -> int:
    return int(model.objects.order_by("-id").values_list("id", flat=True).first() or 0)


def meter_cursor() -> MeterCursor:
    """The cursor for "now": start polling from here."""
    return MeterCursor(
        _max_id(Contribution), _max_id(PoolSettlement), _max_id(LedgerMove), _max_id(ParameterChange)
    )


def changed_pools_since(cursor: MeterCursor | None) -> tuple[set[int], MeterCursor]:
    """Pools whose meter may have changed since `cursor`, and the cursor to pass next time.

    `None` answers every active pool and the current cursor. Each table is one index range scan over
    the rows written since the last poll. Ids are allocated before commit, so a row committed late may
    be reported one poll late or, rarely, missed: publishers also refresh every pool now and then.
    """
    if cursor is None:
        return set(Pool.objects.filter(active=True).values_list("pk", flat=True)), meter_cursor()
    changed: set[int] = set()
    ids = []
    for model, since in (
        (Contribution, cursor.contribution),
        (PoolSettlement, cursor.settlement),
        (LedgerMove, cursor.move),
        (ParameterChange, cursor.change),
    ):
        table = model._meta.db_table
        with connection.cursor() as db:
            db.execute(f"SELECT pool_id, MAX(id) FROM {table} WHERE id > %s GROUP BY pool_id", [since])  # noqa: S608
            rows = db.fetchall()
        changed.update(int(r[0]) for r in rows)
        ids.append(max([since, *(int(r[1]) for r in rows)]))
    return changed, MeterCursor(*ids)
