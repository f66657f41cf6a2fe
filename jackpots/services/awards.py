"""Awards: table hands (engine.settle_hand by the pool's rule pack) and level awards (a fold's mystery hits:
services.settlements.pay_mystery).

Each award is one transaction on the locked, folded level (_locked_award), written by
services.settlements.settle (which also writes the mystery hits a fold finds).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext

from halls import money
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput
from halls.money import HUNDRED
from jackpots import engine
from jackpots.models import (
    Pool,
    PoolLevel,
    PoolSettlement,
    SettlementKind,
)
from jackpots.poker import HandRank
from jackpots.services import folding
from jackpots.services.amounts import as_decimal, cents
from jackpots.services.auditing import fingerprint
from jackpots.services.levels import level_state
from jackpots.services.locks import lock_levels
from jackpots.services.packs import pool_pack
from jackpots.services.settlements import Pay, settle
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


def _hand_pays(settlement: engine.Settlement) -> list[Pay]:
    return [
        Pay(
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
        row, _ = settle(
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
) -> tuple[Pay, Decimal]:
    """The payout on the folded meter and the fraction of a cent the meter keeps."""
    kept = ZERO
    if fixed is not None:
        from_meter = min(fixed, money.cents_down(state.amount))
        pay = Pay(
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
        pay = Pay(
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
        row, _ = settle(
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
