"""Awards: table hands (engine.settle_hand by the pool's rule pack), level awards and mystery hits.

Each award is one transaction on the locked, folded level (_locked_award), written by _settle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from halls import money
from halls.actors import Actor, actor_label
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType, PoolHit
from halls.money import HUNDRED
from jackpots import engine
from jackpots.models import (
    Award,
    LedgerMove,
    MoveKind,
    Pool,
    PoolLevel,
    PoolSettlement,
    SettlementKind,
)
from jackpots.poker import HandRank
from jackpots.services import folding, notify
from jackpots.services.common import (
    as_decimal,
    cents,
    display,
    draw_must_hit_by,
    fingerprint,
    level_state,
    pool_pack,
    record,
)
from jackpots.services.locks import lock_levels
from jackpots.sources import PoolSource

ZERO = Decimal(0)


@dataclass(frozen=True)
class AwardLine:
    award_id: int
    order: int
    source: str
    seat: str
    hand: str
    category: str
    discard: bool
    amount: Decimal  # paid to the winner (whole cents)
    from_meter: Decimal
    from_operator: Decimal  # OP-23: what the meter lacked, paid by the operator
    basis: Decimal | None
    note: str


@dataclass(frozen=True)
class AwardResult:
    settlement_id: int | None  # None: no hand of the call wins anything (nothing written)
    pool_id: int
    level_id: int
    kind: str
    meter_before: Decimal
    meter_after_payouts: Decimal
    meter_after: Decimal  # after the reset
    kept_fraction: Decimal
    reset_from_reserve: Decimal
    operator_seed: Decimal
    lines: tuple[AwardLine, ...]
    created_at: datetime | None
    replayed: bool = False

    @property
    def total_paid(self) -> Decimal:
        return sum((line.amount for line in self.lines), ZERO)

    def paid_to(self, seat: str | int) -> Decimal:
        return sum((line.amount for line in self.lines if line.seat == str(seat)), ZERO)


@dataclass(frozen=True)
class _Pay:
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


def _labels(context: dict[str, Any]) -> dict[str, Any]:
    """A winner's or a hand's labels as stored with the award: a PoolSource as its text ("table:12")."""
    return {str(k): str(v) if isinstance(v, PoolSource) else v for k, v in context.items()}


def _result(settlement: PoolSettlement, replayed: bool) -> AwardResult:
    lines = tuple(
        AwardLine(
            award_id=a.pk,
            order=a.order,
            source=a.source,
            seat=a.seat,
            hand=a.hand,
            category=a.category,
            discard=a.discard,
            amount=a.amount,
            from_meter=a.from_meter,
            from_operator=a.from_operator,
            basis=a.basis,
            note=a.note,
        )
        for a in settlement.awards.order_by("order")
    )
    return AwardResult(
        settlement_id=settlement.pk,
        pool_id=settlement.pool_id,
        level_id=settlement.level_id,
        kind=settlement.kind,
        meter_before=settlement.meter_before,
        meter_after_payouts=settlement.meter_after_payouts,
        meter_after=settlement.meter_after,
        kept_fraction=settlement.kept_fraction,
        reset_from_reserve=settlement.reset_from_reserve,
        operator_seed=settlement.operator_seed,
        lines=lines,
        created_at=settlement.created_at,
        replayed=replayed,
    )


def _replay(pool: Pool, key: str, print_: str) -> AwardResult | None:
    """The first result of a repeated key (nothing written); the same key for another request is refused."""
    previous = PoolSettlement.objects.filter(pool=pool, idempotency_key=key).first()
    if previous is None:
        return None
    if previous.fingerprint != print_:
        raise Conflict(
            gettext("Idempotency key %(key)r was used for another award.") % {"key": key},
            code="idempotency_key_reused",
        )
    return _result(previous, replayed=True)


def _check_key(key: Any) -> str:
    if not isinstance(key, str) or not key.strip() or len(key) > 100:
        raise InvalidInput(
            gettext("An award needs an idempotency key of 1–100 characters."), code="idempotency_key_required"
        )
    return key


def _write_awards(
    settlement: PoolSettlement,
    pool: Pool,
    level: PoolLevel,
    pays: Sequence[_Pay],
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
    level: PoolLevel, new_state: engine.LevelState, reseeded: bool, pays: Sequence[_Pay], at: datetime
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
    pays: Sequence[_Pay],
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


def _settle(
    *,
    pool: Pool,
    level: PoolLevel,
    state: engine.LevelState,
    meter_after_payouts: Decimal,
    pays: Sequence[_Pay],
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
    return settlement, new_state


def _target_level(levels: list[PoolLevel], level: PoolLevel | None) -> PoolLevel:
    if level is None:
        return levels[0]
    for candidate in levels:
        if candidate.pk == level.pk:
            return candidate
    raise InvalidInput(
        gettext("Level %(pk)s is not a level of this pool.") % {"pk": level.pk}, code="unknown_level"
    )


def _locked_award(
    pool: Pool,
    key: str,
    print_: str,
    level: PoolLevel | None,
    actor: Actor,
    pay: Callable[[PoolLevel, engine.LevelState], AwardResult],
) -> AwardResult:
    """Run `pay` on the folded target level under the pool's level locks, once per idempotency key."""
    try:
        with transaction.atomic():
            replay = _replay(pool, key, print_)
            if replay is not None:
                return replay
            levels = lock_levels(pool.pk)  # near-simultaneous hits on a level queue here, in arrival order
            replay = _replay(pool, key, print_)  # settled while we waited for the lock
            if replay is not None:
                return replay
            folding.fold_locked(pool, levels, actor=actor)
            target = _target_level(levels, level)
            return pay(target, level_state(target))
    except IntegrityError:
        # The same key settled concurrently: answer as the first did.
        replay = _replay(pool, key, print_)
        if replay is None:
            raise
        return replay


def _hand_pays(settlement: engine.Settlement) -> list[_Pay]:
    return [
        _Pay(
            amount=p.amount,
            from_meter=p.from_meter,
            from_operator=p.from_operator,
            basis=p.basis,
            note=p.note,
            seat=str(p.seat),
            category=p.rank.category.value,
            discard=p.discard,
        )
        for p in settlement.payouts
    ]


def _no_award(pool: Pool, target: PoolLevel, state: engine.LevelState) -> AwardResult:
    """A hand that wins nothing: nothing is written."""
    return AwardResult(
        settlement_id=None,
        pool_id=pool.pk,
        level_id=target.pk,
        kind=SettlementKind.HAND,
        meter_before=state.amount,
        meter_after_payouts=state.amount,
        meter_after=state.amount,
        kept_fraction=ZERO,
        reset_from_reserve=ZERO,
        operator_seed=ZERO,
        lines=(),
        created_at=None,
    )


def award_hand(
    *,
    pool: Pool,
    winners: Sequence[engine.Winner | tuple[Any, HandRank, bool]],
    idempotency_key: str,
    actor: Actor,
    context: dict[str, Any] | None = None,
    level: PoolLevel | None = None,
) -> AwardResult:
    """Pay one table hand's pool prizes by the pool's rule pack (engine.settle_hand) on the folded meter.

    `winners`: engine.Winner(seat, rank, discard) for every seat whose pool bet stands (the table app
    applies pool_bet_stands / first-five-cards rules before). `context`: {"table", "hand", "source"} as
    labels, stored with the awards and announced. `level`: default the pool's first level. Bet: the
    pool's stipulated bet (OP-37). Hands without a paytable row win nothing; if none wins, nothing is
    written and the result has no lines.
    """
    key = _check_key(idempotency_key)
    context = _labels(context or {})
    pack = pool_pack(pool)
    if pack is None:
        raise InvalidInput(
            gettext("Pool %(code)s has no table rule pack: award_level pays it.") % {"code": pool.code},
            code="no_rule_pack",
        )
    hands = [engine.Winner(*w) for w in winners]
    print_ = fingerprint(
        {
            "hand": [
                [str(w.seat), w.rank.category.value, list(w.rank.tiebreak), bool(w.discard)] for w in hands
            ],
            "context": context,
            "level": level.pk if level else None,
        }
    )
    bet = pool.carousel_bet or ZERO

    def pay(target: PoolLevel, state: engine.LevelState) -> AwardResult:
        try:
            settlement = engine.settle_hand(pack, state.amount, bet, hands)
        except ValueError as exc:
            raise InvalidInput(
                gettext("These hands cannot be settled: %(exc)s.") % {"exc": exc}, code="bad_winners"
            ) from None
        if not settlement.payouts:
            return _no_award(pool, target, state)
        row, _ = _settle(
            pool=pool,
            level=target,
            state=state,
            meter_after_payouts=settlement.meter_after,
            pays=_hand_pays(settlement),
            kind=SettlementKind.HAND,
            key=key,
            print_=print_,
            context=context,
            bet=pool.carousel_bet,
            kept=settlement.kept_fraction,
            actor=actor,
        )
        return _result(row, replayed=False)

    return _locked_award(pool, key, print_, level, actor, pay)


def _checked_prize(amount: Decimal | None, percent: Decimal | None) -> tuple[Decimal | None, Decimal | None]:
    """Exactly one of a fixed amount (in cents) or a percentage in (0, 100]."""
    if (amount is None) == (percent is None):
        raise InvalidInput(
            gettext("Give either a fixed amount or a percentage of the meter."),
            code="award_amount_or_percent",
        )
    fixed = None if amount is None else cents("amount", amount, code="bad_amount")
    pct = None
    if percent is not None:
        pct = as_decimal("percent", percent, code="bad_percent")
        if pct <= 0 or pct > HUNDRED:
            raise InvalidInput(
                gettext("The percentage must be above 0 and at most 100, got %(pct)s.") % {"pct": pct},
                code="bad_percent",
            )
    return fixed, pct


def _level_pay(
    state: engine.LevelState, fixed: Decimal | None, pct: Decimal | None, context: dict[str, Any]
) -> tuple[_Pay, Decimal]:
    """The payout on the folded meter and the fraction of a cent the meter keeps."""
    kept = ZERO
    if fixed is not None:
        from_meter = min(fixed, money.cents_down(state.amount))
        pay = _Pay(
            amount=fixed,
            from_meter=from_meter,
            from_operator=fixed - from_meter,  # the meter pays what it holds, the operator the rest
            basis=None,
            note=f"fixed prize {fixed}"
            + (f"; operator pays {fixed - from_meter}" if fixed > from_meter else ""),
        )
    else:
        assert pct is not None
        raw = money.percent_of(state.amount, pct)
        paid = money.cents_down(raw)
        kept = raw - paid
        pay = _Pay(
            amount=paid,
            from_meter=paid,
            from_operator=ZERO,
            basis=state.amount,
            note=f"{pct} % of the meter {state.amount}",
        )
    pay = dataclasses.replace(
        pay,
        source=str(context.get("source", "")),
        seat=str(context.get("seat", "")),
        hand=str(context.get("hand", "")),
        category=str(context.get("category", "")),
    )
    return pay, kept


def award_level(
    *,
    level: PoolLevel,
    amount: Decimal | None = None,
    percent: Decimal | None = None,
    winner: dict[str, Any],
    idempotency_key: str,
    actor: Actor,
) -> AwardResult:
    """Pay a non-poker winner (a machine, a bingo program): a fixed `amount` (the meter pays what it holds,
    the operator the rest) or `percent` of the folded meter (100 = the whole meter, whole cents, the
    fraction stays). `winner`: {"source", "seat", "hand", ...} labels kept with the award. A second hit
    right after is paid from the reset amount.
    """
    key = _check_key(idempotency_key)
    fixed, pct = _checked_prize(amount, percent)
    if not isinstance(winner, dict):
        raise InvalidInput(
            gettext("The winner is a dict of labels (source, seat, hand ...)."), code="bad_winner"
        )
    context = _labels(winner)
    pool = Pool.objects.select_related("network").get(pk=level.pool_id)
    print_ = fingerprint({"level": level.pk, "amount": fixed, "percent": pct, "winner": context})

    def pay(target: PoolLevel, state: engine.LevelState) -> AwardResult:
        line, kept = _level_pay(state, fixed, pct, context)
        row, _ = _settle(
            pool=pool,
            level=target,
            state=state,
            meter_after_payouts=state.amount - line.from_meter,
            pays=[line],
            kind=SettlementKind.LEVEL,
            key=key,
            print_=print_,
            context=context,
            bet=None,
            kept=kept,
            actor=actor,
        )
        return _result(row, replayed=False)

    return _locked_award(pool, key, print_, level, actor, pay)


def pay_mystery(
    pool: Pool, level: PoolLevel, state: engine.LevelState, contribution_id: int, source: str, actor: Actor
) -> engine.LevelState:
    """Inside a fold: the contribution `contribution_id` reached the secret value and wins the meter."""
    paid = money.cents_down(state.amount)
    key = f"mystery:{level.pk}:{contribution_id}:{level.version}:{level.hits}"
    context = {"source": source, "contribution": contribution_id, "must_hit_by": True}
    _, new_state = _settle(
        pool=pool,
        level=level,
        state=state,
        meter_after_payouts=state.amount - paid,
        pays=[
            _Pay(
                amount=paid,
                from_meter=paid,
                from_operator=ZERO,
                basis=state.amount,
                note="must-hit-by value reached",
                source=source,
                seat=source.partition("/")[2],
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
