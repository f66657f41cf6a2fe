"""Settlements: how an award is written (its awards, the meter's decrement, the reset and its moves, the
audit entry and the hall screens' hit), for every kind of award: table hands and level awards
(services.awards) and the mystery hits a fold finds (services.folding, inside the fold's transaction).

Awards fold the level before paying (awards imports folding); a fold pays a mystery hit here (folding
imports this module): one direction, no circle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone

from halls import money
from halls.actors import Actor, actor_label
from halls.eventtypes import EventType, PoolHit
from jackpots import engine
from jackpots.models import Award, LedgerMove, MoveKind, Pool, PoolLevel, PoolSettlement, SettlementKind
from jackpots.services import feed, notify
from jackpots.services.amounts import display
from jackpots.services.auditing import fingerprint, record
from jackpots.services.levels import draw_must_hit_by
from jackpots.sources import PoolSource

ZERO = Decimal(0)


@dataclass(frozen=True)
class Pay:
    amount: Decimal
    from_meter: Decimal
    from_operator: Decimal
    basis: Decimal | None
    note: str
    seat: str = ""
    category: str = ""
    discard: bool = False
    source: str = ""
    hand: str = ""


def _write_awards(
    settlement: PoolSettlement,
    pool: Pool,
    level: PoolLevel,
    pays: Sequence[Pay],
    context: dict[str, Any],
    at: datetime,
) -> None:
    """One Award row per payout, in payment order."""
    Award.objects.bulk_create(
        Award(
            settlement=settlement,
            pool=pool,
            level=level,
            order=order,
            source=p.source or str(context.get("source", "")),
            seat=p.seat,
            hand=p.hand or str(context.get("hand", "")),
            category=p.category,
            discard=p.discard,
            amount=p.amount,
            from_meter=p.from_meter,
            from_operator=p.from_operator,
            basis=p.basis,
            note=p.note[:200],
            created_at=at,
        )
        for order, p in enumerate(pays)
    )


def _write_reset_moves(
    settlement: PoolSettlement,
    pool: Pool,
    level: PoolLevel,
    reset: engine.ResetResult,
    who: str,
    at: datetime,
) -> None:
    """The reset's ledger moves: reserve to the meter first, then the operator's seed (OP-23)."""
    moves = []
    if reset.from_reserve:
        moves.append((MoveKind.RESERVE_TO_METER, reset.from_reserve))
    if reset.operator_seed:
        moves.append((MoveKind.OPERATOR_SEED, reset.operator_seed))
    LedgerMove.objects.bulk_create(
        LedgerMove(pool=pool, level=level, kind=k, amount=a, settlement=settlement, actor=who, created_at=at)
        for k, a in moves
    )


def _save_level(
    level: PoolLevel, new_state: engine.LevelState, reseeded: bool, pays: Sequence[Pay], at: datetime
) -> engine.LevelState:
    """The level after the award and reset, saved; its state with the (re)drawn must-hit-by value."""
    paid = [p for p in pays if p.amount > 0]
    level.amount = new_state.amount
    level.reserve = new_state.reserve
    if reseeded or level.must_hit_by is None:
        level.must_hit_by = draw_must_hit_by(level, new_state.amount)
    new_state = dataclasses.replace(new_state, must_hit_by=level.must_hit_by)
    level.hits += len(paid)
    level.total_paid += sum((p.amount for p in paid), ZERO)
    level.version += 1
    level.updated_at = at
    level.save()
    return new_state


def _announce_hits(
    pool: Pool,
    settlement: PoolSettlement,
    level: PoolLevel,
    kind: str,
    context: dict[str, Any],
    pays: Sequence[Pay],
    new_amount: Decimal,
    at: datetime,
) -> None:
    """One PoolHit per paid payout, in payment order."""
    for order, p in enumerate(pays):
        if p.amount <= 0:
            continue
        hit = PoolHit(
            **notify.head(pool),
            settlement=settlement.pk,
            order=order,
            level=level.pk,
            level_name=level.name,
            kind=kind,
            source=p.source or str(context.get("source", "")),
            table=context.get("table"),
            label=context.get("label", ""),
            seat=p.seat,
            hand=p.hand or str(context.get("hand", "")),
            category=p.category,
            amount=p.amount,
            new_amount=display(new_amount),
            at=at,
        )
        notify.emit(pool, EventType.POOL_HIT, hit)


def settle(
    *,
    pool: Pool,
    level: PoolLevel,
    state: engine.LevelState,
    meter_after_payouts: Decimal,
    pays: Sequence[Pay],
    kind: str,
    key: str,
    print_: str,
    context: dict[str, Any],
    bet: Decimal | None,
    kept: Decimal,
    actor: Actor,
) -> tuple[PoolSettlement, engine.LevelState]:
    """Write one settlement: awards, the meter decrement, the reset and its moves; update `level` in place."""
    at = timezone.now()
    who = actor_label(actor)
    after = dataclasses.replace(state, amount=meter_after_payouts)
    # back to the seed: reserve first, the shortfall an operator seed (OP-23)
    reset = engine.reset_after_award(after)
    new_state = reset.level
    reseeded = new_state.amount != after.amount
    if reseeded:
        level.must_hit_by = None  # redrawn below, once the level holds its new amount
    settlement = PoolSettlement.objects.create(
        pool=pool,
        level=level,
        kind=kind,
        idempotency_key=key,
        fingerprint=print_,
        context=context,
        bet=bet,
        meter_before=state.amount,
        meter_after_payouts=meter_after_payouts,
        meter_after=new_state.amount,
        kept_fraction=kept,
        reset_from_reserve=reset.from_reserve,
        operator_seed=reset.operator_seed,
        created_at=at,
        actor=who,
    )
    _write_awards(settlement, pool, level, pays, context, at)
    _write_reset_moves(settlement, pool, level, reset, who, at)
    new_state = _save_level(level, new_state, reseeded, pays, at)
    summary = {
        "settlement": settlement.pk,
        "level": level.pk,
        "level_name": level.name,
        "kind": kind,
        "context": context,
        "meter_before": state.amount,
        "meter_after": new_state.amount,
        "reset_from_reserve": reset.from_reserve,
        "operator_seed": reset.operator_seed,
        "payouts": [
            {"seat": p.seat, "category": p.category, "amount": p.amount, "from_operator": p.from_operator}
            for p in pays
        ],
    }
    record(pool, actor, "pool.awarded", settlement, summary)
    _announce_hits(pool, settlement, level, kind, context, pays, new_state.amount, at)
    # The authority's feed: the award, where it was won, the meter before and after it.
    paid = sum((p.amount for p in pays), ZERO)
    feed.awarded(pool=pool, level=level, settlement=settlement, paid=paid, after=new_state.amount)
    return settlement, new_state


# The source a mystery hit names when no contribution reached the secret value: what the level below
# overflowed into it did.
OVERFLOW = "overflow"


def pay_mystery(
    pool: Pool,
    level: PoolLevel,
    state: engine.LevelState,
    contribution_id: int,
    source: PoolSource | None,
    actor: Actor,
) -> engine.LevelState:
    """Inside a fold: the contribution `contribution_id` from `source` reached the secret value and wins the
    meter (`source` None, contribution 0: the overflow from the level below reached it). The award names the
    source and, as its seat, where in the member the bet was made (``"hand:40/seat:3"``, "" for none)."""
    paid = money.cents_down(state.amount)
    key = f"mystery:{level.pk}:{contribution_id}:{level.version}:{level.hits}"
    text = OVERFLOW if source is None else str(source)
    context = {"source": text, "contribution": contribution_id, "must_hit_by": True}
    _, new_state = settle(
        pool=pool,
        level=level,
        state=state,
        meter_after_payouts=state.amount - paid,
        pays=[
            Pay(
                amount=paid,
                from_meter=paid,
                from_operator=ZERO,
                basis=state.amount,
                note="must-hit-by value reached",
                source=text,
                seat="" if source is None else source.where,
            )
        ],
        kind=SettlementKind.MYSTERY,
        key=key,
        print_=fingerprint(context),
        context=context,
        bet=None,
        kept=state.amount - paid,
        actor=actor,
    )
    return new_state
