"""Helpers the pool services share: the venues a pool's audit goes to, money checks, the pack."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.utils.translation import gettext as _

from halls import money
from halls.actors import Actor
from halls.errors import InvalidInput
from halls.services import audit
from jackpots import engine
from jackpots.models import Pool, PoolLevel
from jackpots.poker import SEVENS, HandCategory, SevensCombination
from jackpots.rulepacks import (
    FixedAmount,
    JackpotKind,
    MultipleOfBet,
    Paytable,
    PaytableRow,
    PercentOfMeter,
    RulePack,
    TiePolicy,
    get_pack,
)

ZERO = Decimal(0)


def audit_venue_ids(pool: Pool) -> list[int]:
    """A venue pool audits in its venue's chain; a network pool in every member venue's, in id order."""
    if pool.venue_id is not None:
        return [pool.venue_id]
    assert pool.network_id is not None
    return sorted(pool.network.venues.values_list("pk", flat=True))  # type: ignore[union-attr]


def record(pool: Pool, actor: Actor, action: str, obj: Any, data: Mapping[str, Any]) -> None:
    audit.record_across(
        venue_ids=audit_venue_ids(pool), actor=actor, action=action, obj=obj, data={"pool": pool.pk, **data}
    )


def as_decimal(name: str, value: Any, *, code: str) -> Decimal:
    """A finite Decimal from a Decimal, int or numeric string (never a float)."""
    if isinstance(value, bool | float):
        raise InvalidInput(
            _("%(name)s must be an exact amount (Decimal or string), not %(value)r.")
            % {"name": name, "value": value},
            code=code,
        )
    try:
        amount = value if isinstance(value, Decimal) else Decimal(str(value))
    except (InvalidOperation, ValueError, TypeError):
        raise InvalidInput(
            _("%(name)s %(value)r is not a number.") % {"name": name, "value": value}, code=code
        ) from None
    if not amount.is_finite():
        raise InvalidInput(
            _("%(name)s %(value)r is not a finite amount.") % {"name": name, "value": value}, code=code
        )
    return amount


def _parsed(name: str, value: Any, *, code: str, **rules: Any) -> Decimal:
    try:
        return money.parse(name, value, **rules)
    except money.MoneyError as exc:
        raise InvalidInput(f"{exc}.", code=code) from None


def cents(name: str, value: Any, *, code: str, positive: bool = True) -> Decimal:
    """Whole cents (>= 0; > 0 when `positive`), at the cents' scale."""
    return money.cents(_parsed(name, value, code=code, places=money.CENT_PLACES, positive=positive))


def meter_amount(name: str, value: Any, *, code: str) -> Decimal:
    """An amount >= 0 with at most the meter's decimals."""
    return _parsed(name, value, code=code, places=money.METER_PLACES)


def fingerprint(data: Any) -> str:
    text = json.dumps(data, cls=DjangoJSONEncoder, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def display(amount: Decimal) -> Decimal:
    """What a screen may show: whole cents, rounded down (never more than the pool holds)."""
    return money.cents_down(amount)


# --- the pool's rule pack, with its authorised paytable (OP-30) ------------------------------------------

_CATEGORIES: dict[str, HandCategory | SevensCombination] = {
    **{c.value: c for c in HandCategory},
    **{c.value: c for c in SevensCombination},
}


def paytable_from_rows(rows: list[dict[str, Any]]) -> Paytable:
    """Rows as stored in Pool.authorised_paytable, e.g. ``[{"category": "royal_flush", "percent": "100",
    "ties": "share_one"}, {"category": "full_house", "multiple": "100"}]`` (or ``"amount": "50.00"``).
    """
    built: list[PaytableRow] = []
    try:
        for row in rows:
            category = _CATEGORIES[str(row["category"])]
            prize: PercentOfMeter | MultipleOfBet | FixedAmount
            if "percent" in row:
                prize = PercentOfMeter(Decimal(str(row["percent"])))
            elif "multiple" in row:
                prize = MultipleOfBet(Decimal(str(row["multiple"])))
            else:
                prize = FixedAmount(Decimal(str(row["amount"])))
            built.append(PaytableRow(category, prize, TiePolicy(row.get("ties", TiePolicy.SHARE_ONE))))
        return Paytable(tuple(built))
    except (KeyError, ValueError, TypeError, InvalidOperation) as exc:
        raise InvalidInput(
            _("The authorised paytable is not valid: %(exc)s.") % {"exc": exc}, code="bad_paytable"
        ) from None


def with_authorised_paytable(pack: RulePack, rows: list[dict[str, Any]]) -> RulePack:
    """``pack`` with the authorised rows. A pack whose combinations the authorisation defines (ML and CT
    blackjack, OP-30) takes the sevens ordering when the rows are sevens combinations; anything else is
    refused, since the engine could not rank the hands."""
    paytable = paytable_from_rows(rows)
    ordering = pack.ordering
    if ordering is None:
        categories = {row.category for row in paytable.rows}
        if not categories or not all(isinstance(c, SevensCombination) for c in categories):
            raise InvalidInput(
                _(
                    "%(code)s has no hand ranking of its own: its authorised paytable must use "
                    "the sevens combinations (%(combinations)s)."
                )
                % {
                    "code": pack.code,
                    "combinations": ", ".join(c.value for c in SevensCombination),
                },
                code="bad_paytable",
            )
        ordering = SEVENS
    try:
        return pack.with_authorised_paytable(paytable, ordering)
    except ValueError as exc:
        message = f"The authorised paytable is not valid for {pack.code}: {exc}."
        raise InvalidInput(message, code="bad_paytable") from None


def pool_pack(pool: Pool) -> RulePack | None:
    """The pool's rule pack (None for pools paid only by award_level), with the authorised paytable."""
    if not pool.rule_pack:
        return None
    pack = get_pack(pool.rule_pack)
    if pool.authorised_paytable:
        pack = with_authorised_paytable(pack, pool.authorised_paytable)
    return pack


def level_state(level: PoolLevel) -> engine.LevelState:
    return engine.LevelState(
        seed=level.seed,
        amount=level.amount,
        reserve=level.reserve,
        ceiling=level.ceiling,
        overflow=engine.OverflowTarget(level.overflow_to),
        must_hit_by=level.must_hit_by,
        kind=JackpotKind(level.kind),
    )


def draw_must_hit_by(level: PoolLevel, floor: Decimal) -> Decimal | None:
    """A new secret mystery value for the level, from max(seed, floor) to its ceiling (CSPRNG)."""
    if not level.mystery or level.ceiling is None:
        return None
    low = max(level.seed, floor)
    if low > level.ceiling:
        return None
    try:
        return engine.draw_must_hit_by(low, level.ceiling)
    except ValueError:
        return None
