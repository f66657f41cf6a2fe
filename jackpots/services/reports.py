"""The balancing report and the pool's ledger recall. Read-only."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from halls.cashier.services import readmodels as cashier_readmodels
from halls.errors import InvalidInput
from jackpots import engine
from jackpots.models import (
    Award,
    Contribution,
    LedgerMove,
    MoveKind,
    ParameterChange,
    Pool,
    PoolLevel,
    PoolSettlement,
)
from jackpots.services.packs import pool_pack

ZERO = Decimal(0)


@dataclass(frozen=True)
class LevelBalance:
    level_id: int
    name: str
    opening: Decimal
    seeds: Decimal  # opening seed (when the period starts at the beginning) + operator seeds
    contributions: Decimal  # meter shares offered (including what overflowed)
    overflow_in: Decimal
    corrections: Decimal  # signed
    awards: Decimal  # paid from the meter
    overflow_to_reserve: Decimal
    overflow_to_next: Decimal
    reserve_to_meter: Decimal
    closing: Decimal
    closing_from_ledger: Decimal
    recorded: bool  # closing is the engine's recorded state (the period runs to now)
    # Reserve
    opening_reserve: Decimal
    reserve_in: Decimal  # reserve shares of contributions + opening reserve funding in the period
    closing_reserve: Decimal
    closing_reserve_from_ledger: Decimal
    # Context
    bets: Decimal
    house: Decimal
    contribution_count: int
    operator_prizes: Decimal  # OP-23 shortfalls paid outside the pool
    prizes_paid: Decimal  # to players, incl. operator parts
    hits: int

    @property
    def reserve_moves(self) -> Decimal:
        return self.overflow_to_reserve + self.overflow_to_next - self.reserve_to_meter

    @property
    def left(self) -> Decimal:
        return self.opening + self.seeds + self.contributions + self.overflow_in + self.corrections

    @property
    def right(self) -> Decimal:
        return self.closing + self.awards + self.reserve_moves

    @property
    def meter_holds(self) -> bool:
        return self.left == self.right and self.closing == self.closing_from_ledger

    @property
    def reserve_holds(self) -> bool:
        left = self.opening_reserve + self.reserve_in + self.overflow_to_reserve
        right = self.closing_reserve + self.reserve_to_meter
        return left == right and self.closing_reserve == self.closing_reserve_from_ledger

    @property
    def holds(self) -> bool:
        return self.meter_holds and self.reserve_holds

    def as_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items()}
        data.update(
            reserve_moves=self.reserve_moves,
            left=self.left,
            right=self.right,
            meter_holds=self.meter_holds,
            reserve_holds=self.reserve_holds,
            holds=self.holds,
        )
        return {k: (str(v) if isinstance(v, Decimal) else v) for k, v in data.items()}


@dataclass(frozen=True)
class BalanceReport:
    pool_id: int
    code: str
    currency: str
    start: datetime | None
    end: datetime | None
    generated_at: datetime
    levels: tuple[LevelBalance, ...]
    min_return: Decimal | None = None  # tripóquer: the guaranteed return (spec §6.9)
    meets_min_return: bool | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def holds(self) -> bool:
        return all(level.holds for level in self.levels)

    def as_dict(self) -> dict[str, Any]:
        return {
            "pool": self.pool_id,
            "code": self.code,
            "currency": self.currency,
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
            "generated_at": self.generated_at.isoformat(),
            "holds": self.holds,
            "min_return": None if self.min_return is None else str(self.min_return),
            "meets_min_return": self.meets_min_return,
            "levels": [level.as_dict() for level in self.levels],
        }


def _snapshot() -> None:
    """One snapshot for every query of the report (must be the transaction's first statement)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")


def _window(start: datetime | None, end: datetime | None) -> tuple[Q, Q]:
    """(before the period, inside the period) as filters on created_at."""
    before = Q(created_at__lt=start) if start else Q(pk__in=[])
    inside = Q()
    if start:
        inside &= Q(created_at__gte=start)
    if end:
        inside &= Q(created_at__lt=end)
    return before, inside


def _sums(qs: QuerySet[Any], fields: dict[str, str], before: Q, inside: Q) -> dict[int, dict[str, Any]]:
    aggregates: dict[str, Any] = {}
    for name, column in fields.items():
        aggregates[f"pre_{name}"] = Sum(column, filter=before, default=ZERO)
        aggregates[f"in_{name}"] = Sum(column, filter=inside, default=ZERO)
    rows = qs.order_by().values("level_id").annotate(**aggregates, in_count=Count("id", filter=inside))
    return {row["level_id"]: row for row in rows}


_Moves = dict[str, dict[str, Decimal]]  # kind -> {"pre": before the period, "in": inside it}


def _hit_counts(pool: Pool, inside: Q) -> dict[int, int]:
    """Paid awards in the period, per level."""
    return dict(
        Award.objects.filter(pool_id=pool.pk, amount__gt=0)
        .filter(inside)
        .order_by()
        .values("level_id")
        .annotate(n=Count("id"))
        .values_list("level_id", "n")
    )


def _move_sums(pool: Pool, before: Q, inside: Q) -> dict[int, _Moves]:
    """Ledger moves summed per level and kind, before and inside the period (missing ones are zero)."""
    moves: dict[int, _Moves] = defaultdict(lambda: defaultdict(lambda: {"pre": ZERO, "in": ZERO}))
    for row in (
        LedgerMove.objects.filter(pool_id=pool.pk)
        .order_by()
        .values("level_id", "kind")
        .annotate(
            pre=Sum("amount", filter=before, default=ZERO), inn=Sum("amount", filter=inside, default=ZERO)
        )
    ):
        moves[row["level_id"]][row["kind"]] = {"pre": row["pre"], "in": row["inn"]}
    return moves


def _meter_total(m: _Moves, c: dict[str, Any], a: dict[str, Any], part: str) -> Decimal:
    return Decimal(
        m[MoveKind.OPENING_SEED][part]
        + m[MoveKind.OPERATOR_SEED][part]
        + m[MoveKind.RESERVE_TO_METER][part]
        + m[MoveKind.OVERFLOW_IN][part]
        + m[MoveKind.CORRECTION][part]
        + c.get(f"{part}_meter", ZERO)
        - a.get(f"{part}_meter", ZERO)
        - m[MoveKind.OVERFLOW_TO_RESERVE][part]
        - m[MoveKind.OVERFLOW_TO_NEXT][part]
    )


def _reserve_total(m: _Moves, c: dict[str, Any], part: str) -> Decimal:
    return Decimal(
        m[MoveKind.OPENING_RESERVE][part]
        + c.get(f"{part}_reserve", ZERO)
        + m[MoveKind.OVERFLOW_TO_RESERVE][part]
        - m[MoveKind.RESERVE_TO_METER][part]
    )


def _level_balance(
    level: PoolLevel,
    c: dict[str, Any],
    a: dict[str, Any],
    m: _Moves,
    hits: int,
    recorded: tuple[Decimal, Decimal] | None,
) -> LevelBalance:
    """One level's balance; `recorded` is its (meter, reserve) state now, None for a period that ended."""
    opening = _meter_total(m, c, a, "pre")
    closing_ledger = opening + _meter_total(m, c, a, "in")
    opening_reserve = _reserve_total(m, c, "pre")
    closing_reserve_ledger = opening_reserve + _reserve_total(m, c, "in")
    closing, closing_reserve = recorded if recorded is not None else (closing_ledger, closing_reserve_ledger)
    return LevelBalance(
        level_id=level.pk,
        name=level.name,
        opening=opening,
        seeds=m[MoveKind.OPENING_SEED]["in"] + m[MoveKind.OPERATOR_SEED]["in"],
        contributions=c.get("in_meter", ZERO),
        overflow_in=m[MoveKind.OVERFLOW_IN]["in"],
        corrections=m[MoveKind.CORRECTION]["in"],
        awards=a.get("in_meter", ZERO),
        overflow_to_reserve=m[MoveKind.OVERFLOW_TO_RESERVE]["in"],
        overflow_to_next=m[MoveKind.OVERFLOW_TO_NEXT]["in"],
        reserve_to_meter=m[MoveKind.RESERVE_TO_METER]["in"],
        closing=closing,
        closing_from_ledger=closing_ledger,
        recorded=recorded is not None,
        opening_reserve=opening_reserve,
        reserve_in=m[MoveKind.OPENING_RESERVE]["in"] + c.get("in_reserve", ZERO),
        closing_reserve=closing_reserve,
        closing_reserve_from_ledger=closing_reserve_ledger,
        bets=c.get("in_bet", ZERO),
        house=c.get("in_house", ZERO),
        contribution_count=c.get("in_count", 0),
        operator_prizes=a.get("in_operator", ZERO),
        prizes_paid=a.get("in_paid", ZERO),
        hits=hits,
    )


def _level_balances(
    pool: Pool, start: datetime | None, end: datetime | None, to_now: bool
) -> list[LevelBalance]:
    """Every level's balance, all sums read in this order from one snapshot (the caller's transaction)."""
    before, inside = _window(start, end)
    levels = list(PoolLevel.objects.filter(pool=pool).order_by("position"))
    contributions = _sums(
        Contribution.objects.filter(pool_id=pool.pk),
        {"meter": "to_meter", "reserve": "to_reserve", "bet": "bet", "house": "house"},
        before,
        inside,
    )
    awards = _sums(
        Award.objects.filter(pool_id=pool.pk),
        {"meter": "from_meter", "operator": "from_operator", "paid": "amount"},
        before,
        inside,
    )
    hits = _hit_counts(pool, inside)
    moves = _move_sums(pool, before, inside)
    unfolded = _unfolded(levels) if to_now else {}
    balances = []
    for level in levels:
        recorded = None
        if to_now:  # the folded row plus the contributions not folded into it yet
            pending_meter, pending_reserve = unfolded.get(level.pk, (ZERO, ZERO))
            recorded = (level.amount + pending_meter, level.reserve + pending_reserve)
        balances.append(
            _level_balance(
                level,
                contributions.get(level.pk, {}),
                awards.get(level.pk, {}),
                moves[level.pk],
                hits.get(level.pk, 0),
                recorded,
            )
        )
    return balances


def _min_return(pool: Pool, balances: list[LevelBalance]) -> tuple[Decimal | None, bool | None]:
    """The pack's guaranteed return and whether the period met it (None where the pack has none)."""
    pack = pool_pack(pool)
    min_return = pack.min_return if pack else None
    meets = None
    if pack is not None and min_return is not None and balances:
        first = balances[0]
        meets = engine.meets_min_return(
            pack,
            prizes_paid=sum((b.prizes_paid for b in balances), ZERO),
            meter_increase=sum((b.closing - b.opening for b in balances), ZERO),
            amounts_bet=first.bets,
        )
    return min_return, meets


def balance(pool: Pool, start: datetime | None = None, end: datetime | None = None) -> BalanceReport:
    """Each level's period, proved exactly from one snapshot (REPEATABLE READ):

    opening + seeds + contributions + overflow in + corrections
        = closing + awards + overflow out (to reserve, to next level) - reserve moved to the meter;
    opening reserve + reserve shares + overflow to reserve = closing reserve + reserve moved to the meter.

    `closing` is the level's recorded state when the period runs to now (the report checks the ledger
    against the engine's meter); for a period that ended earlier, the ledger's own total at its end.
    """
    if start and end and end <= start:
        raise InvalidInput(_("The period ends before it starts."), code="bad_period")
    now = timezone.now()
    to_now = end is None or end >= now
    outer = connection.in_atomic_block
    with transaction.atomic():
        if not outer:  # inside a caller's transaction its snapshot rules (and SET would fail)
            _snapshot()
        balances = _level_balances(pool, start, end, to_now)
    min_return, meets = _min_return(pool, balances)
    return BalanceReport(
        pool_id=pool.pk,
        code=pool.code,
        currency=pool.currency,
        start=start,
        end=end,
        generated_at=now,
        levels=tuple(balances),
        min_return=min_return,
        meets_min_return=meets,
    )


def _unfolded(levels: list[PoolLevel]) -> dict[int, tuple[Decimal, Decimal]]:
    result = {}
    for level in levels:
        agg = Contribution.objects.filter(level_id=level.pk, id__gt=level.folded_through).aggregate(
            m=Sum("to_meter", default=ZERO), r=Sum("to_reserve", default=ZERO)
        )
        result[level.pk] = (agg["m"], agg["r"])
    return result


# --- recall ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerPage:
    """A pool's history, newest first: awards (with their settlements), moves, parameter changes and the
    latest contributions. `before` pages back through contributions by id."""

    settlements: list[dict[str, Any]]
    moves: list[dict[str, Any]]
    changes: list[dict[str, Any]]
    contributions: list[dict[str, Any]]
    next_before: int | None


def ledger(pool: Pool, *, limit: int = 100, before: int | None = None) -> LedgerPage:
    limit = max(1, min(limit, 1000))
    contributions = Contribution.objects.filter(pool_id=pool.pk)
    if before:
        contributions = contributions.filter(pk__lt=before)
    rows = list(
        contributions.order_by("-id").values(
            "id",
            "level_id",
            "source",
            "bet",
            "to_meter",
            "to_reserve",
            "house",
            "idempotency_key",
            "actor",
            "created_at",
        )[:limit]
    )
    recent = list(PoolSettlement.objects.filter(pool=pool).order_by("-id")[:limit])
    awards = {s.pk: list(s.awards.order_by("order")) for s in recent}
    # What the cashier paid of each award (halls.cashier, keyed by the pool's award: no app imported).
    paid = cashier_readmodels.pool_award_payouts(a.pk for rows in awards.values() for a in rows)
    settlements = [
        {
            "id": s.pk,
            "level": s.level_id,
            "kind": s.kind,
            "context": s.context,
            "bet": s.bet,
            "meter_before": s.meter_before,
            "meter_after_payouts": s.meter_after_payouts,
            "meter_after": s.meter_after,
            "kept_fraction": s.kept_fraction,
            "reset_from_reserve": s.reset_from_reserve,
            "operator_seed": s.operator_seed,
            "actor": s.actor,
            "created_at": s.created_at,
            "awards": [
                {
                    "order": a.order,
                    "source": a.source,
                    "seat": a.seat,
                    "hand": a.hand,
                    "category": a.category,
                    "discard": a.discard,
                    "amount": a.amount,
                    "from_meter": a.from_meter,
                    "from_operator": a.from_operator,
                    "basis": a.basis,
                    "note": a.note,
                    "payouts": paid.get(a.pk, []),
                }
                for a in awards[s.pk]
            ],
        }
        for s in recent
    ]
    moves = list(
        LedgerMove.objects.filter(pool_id=pool.pk)
        .order_by("-id")
        .values(
            "id",
            "level_id",
            "kind",
            "amount",
            "settlement_id",
            "reason",
            "authorised_by",
            "actor",
            "created_at",
        )[:limit]
    )
    changes = list(
        ParameterChange.objects.filter(pool_id=pool.pk)
        .order_by("-id")
        .values("id", "level_id", "old", "new", "authorisation_ref", "actor", "changed_at")[:limit]
    )
    next_before = rows[-1]["id"] if len(rows) == limit else None
    return LedgerPage(
        settlements=[_plain(s) for s in settlements],
        moves=[_plain(m) for m in moves],
        changes=[_plain(c) for c in changes],
        contributions=[_plain(r) for r in rows],
        next_before=next_before,
    )


def _plain(value: Any) -> Any:
    """Money as strings (never floats), recursively."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
