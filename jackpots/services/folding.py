"""Folding: bring the unfolded contributions into the level rows, with ceilings, overflows and mystery hits.

`fold_locked` runs inside the caller's transaction with the pool's levels locked (locks.lock_levels: the
level rows FOR UPDATE, then the pool's advisory lock EXCLUSIVE). That lock waited for every contributor
in flight (each holds the pool's advisory lock SHARED from before its row's id is drawn until its
commit), so no uncommitted contribution with a lower id can appear after the fold, and `folded_through`
is a safe watermark. Levels are folded by position; what overflows to the next level is added to it
first (an ``overflow_in`` move). Overflow moves are written once per fold and level.

A must-hit-by (mystery) level whose meter would reach its secret value is folded row by row, so the
contribution that crossed it is found; it wins the meter (whole cents; the fraction stays), the level
resets (reserve first, then operator seed), a new secret value is drawn, and folding goes on with the
next rows, all in the same transaction (services.settlements records the hit like any award).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Max, OuterRef, Subquery, Sum
from django.utils.timezone import now

from halls.actors import Actor, actor_label
from jackpots import engine
from jackpots.models import Contribution, LedgerMove, MoveKind, Pool, PoolLevel
from jackpots.services import settlements
from jackpots.services.levels import level_state
from jackpots.services.locks import lock_levels
from jackpots.sources import PoolSource

ZERO = Decimal(0)


@dataclass
class _Moves:
    overflow_to_reserve: Decimal = ZERO
    overflow_to_next: Decimal = ZERO
    extra: list[tuple[str, Decimal]] = field(default_factory=list)


@dataclass(frozen=True)
class FoldResult:
    pool_id: int
    folded: int  # contribution rows folded in
    mystery_hits: int


def fold(pool: Pool | int, *, actor: Actor = "system") -> FoldResult:
    """Fold one pool in its own transaction (the beat task, tests, the benchmark)."""
    pool_obj = pool if isinstance(pool, Pool) else Pool.objects.get(pk=pool)
    with transaction.atomic():
        levels = lock_levels(pool_obj.pk)
        return fold_locked(pool_obj, levels, actor=actor)


def fold_locked(pool: Pool, levels: list[PoolLevel], *, actor: Actor) -> FoldResult:
    """Fold every level of the pool; `levels` are locked FOR UPDATE and sorted by position.

    The level objects are updated in place and saved when they changed.
    """
    folded = 0
    hits = 0
    carry = ZERO  # overflow from the previous level, folded into this one first
    for index, level in enumerate(levels):
        pending = Contribution.objects.filter(level_id=level.pk, id__gt=level.folded_through)
        agg = pending.aggregate(m=Sum("to_meter"), r=Sum("to_reserve"), last=Max("id"), n=Count("id"))
        count = agg["n"] or 0
        if not count and not carry:
            continue
        offered = (agg["m"] or ZERO) + carry
        hidden = agg["r"] or ZERO
        state = level_state(level)
        moves = _Moves()
        if carry:
            moves.extra.append((MoveKind.OVERFLOW_IN, carry))
        mhb = state.must_hit_by
        could_hit = mhb is not None and _reaches(state, offered, mhb)
        if not could_hit:
            state = _apply(state, offered, hidden, moves)
        else:
            state, level_hits = _fold_rows(pool, level, state, carry, pending, moves, actor)
            hits += level_hits
        if count:
            level.folded_through = int(agg["last"])
            folded += count
        _write(pool, level, state, moves, actor)
        carry = moves.overflow_to_next
        if carry and index == len(levels) - 1:  # pragma: no cover - creation refuses it
            raise RuntimeError("the last level cannot overflow to a next level")
    return FoldResult(pool_id=pool.pk, folded=folded, mystery_hits=hits)


def _reaches(state: engine.LevelState, offered: Decimal, mhb: Decimal) -> bool:
    return state.amount + state.takes(offered) >= mhb


def _apply(
    state: engine.LevelState, to_meter: Decimal, to_reserve: Decimal, moves: _Moves
) -> engine.LevelState:
    result = engine.apply_contribution(state, to_meter, to_reserve)
    moves.overflow_to_reserve += result.overflow_to_reserve
    moves.overflow_to_next += result.overflow_to_next_level
    return result.level


def _fold_rows(
    pool: Pool,
    level: PoolLevel,
    state: engine.LevelState,
    carry: Decimal,
    pending: object,
    moves: _Moves,
    actor: Actor,
) -> tuple[engine.LevelState, int]:
    """Row by row, so the contribution that reaches the secret value is the one that wins it."""
    hits = 0
    if carry:
        result = engine.apply_contribution(state, carry, ZERO)
        moves.overflow_to_reserve += result.overflow_to_reserve
        moves.overflow_to_next += result.overflow_to_next_level
        state = result.level
        if result.must_hit:
            state = _pay_mystery(pool, level, state, 0, None, moves, actor)
            hits += 1
    rows = pending.order_by("id").values_list("id", "to_meter", "to_reserve", "source")  # type: ignore[attr-defined]
    for row_id, to_meter, to_reserve, source in rows.iterator():
        result = engine.apply_contribution(state, to_meter, to_reserve)
        moves.overflow_to_reserve += result.overflow_to_reserve
        moves.overflow_to_next += result.overflow_to_next_level
        state = result.level
        if result.must_hit:
            state = _pay_mystery(pool, level, state, row_id, PoolSource.parse(source), moves, actor)
            hits += 1
    return state, hits


def _pay_mystery(
    pool: Pool,
    level: PoolLevel,
    state: engine.LevelState,
    contribution_id: int,
    source: PoolSource | None,
    moves: _Moves,
    actor: Actor,
) -> engine.LevelState:
    """Award the meter to the contribution that reached the secret value (services.settlements records it)."""
    return settlements.pay_mystery(pool, level, state, contribution_id, source, actor)


def _write_moves(pool: Pool, level: PoolLevel, moves: _Moves, actor: Actor) -> None:
    at = now()
    who = actor_label(actor)
    rows = [
        LedgerMove(pool=pool, level=level, kind=kind, amount=amount, actor=who, created_at=at)
        for kind, amount in moves.extra
        if amount
    ]
    moves.extra.clear()
    if moves.overflow_to_reserve:
        rows.append(
            LedgerMove(
                pool=pool,
                level=level,
                kind=MoveKind.OVERFLOW_TO_RESERVE,
                amount=moves.overflow_to_reserve,
                actor=who,
                created_at=at,
            )
        )
        level.overflow_total += moves.overflow_to_reserve
    if rows:
        LedgerMove.objects.bulk_create(rows)


def _write(pool: Pool, level: PoolLevel, state: engine.LevelState, moves: _Moves, actor: Actor) -> None:
    _write_moves(pool, level, moves, actor)
    if moves.overflow_to_next:
        LedgerMove.objects.create(
            pool=pool,
            level=level,
            kind=MoveKind.OVERFLOW_TO_NEXT,
            amount=moves.overflow_to_next,
            actor=actor_label(actor),
            created_at=now(),
        )
        level.overflow_total += moves.overflow_to_next
    level.amount = state.amount
    level.reserve = state.reserve
    level.must_hit_by = state.must_hit_by
    level.version += 1
    level.updated_at = now()
    level.save(
        update_fields=[
            "amount",
            "reserve",
            "must_hit_by",
            "folded_through",
            "overflow_total",
            "hits",
            "total_paid",
            "version",
            "updated_at",
        ]
    )


@dataclass(frozen=True)
class Unfolded:
    pools: list[int]  # pools with contributions not folded yet, in id order
    oldest_at: datetime | None  # when the oldest of those contributions was made (the fold lag's start)


def unfolded() -> Unfolded:
    """What a fold tick needs, in ONE query: the first unfolded row of each level with any (one index
    probe per level), its pool and its time."""
    first = Contribution.objects.filter(level_id=OuterRef("pk"), id__gt=OuterRef("folded_through")).order_by(
        "id"
    )
    rows = (
        PoolLevel.objects.annotate(first_at=Subquery(first.values("created_at")[:1]))
        .filter(first_at__isnull=False)
        .values_list("pool_id", "first_at")
    )
    found = list(rows)
    return Unfolded(
        pools=sorted({pool_id for pool_id, _ in found}), oldest_at=min((at for _, at in found), default=None)
    )


def pools_to_fold() -> list[int]:
    """Pools with contributions not folded yet."""
    return unfolded().pools
