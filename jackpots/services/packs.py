"""A pool's rule pack with its authorised paytable (OP-30): the rows stored on the pool, checked and built."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils.translation import gettext as _

from halls.errors import InvalidInput
from jackpots.models import Pool
from jackpots.poker import SEVENS, HandCategory, SevensCombination
from jackpots.rulepacks import (
    FixedAmount,
    MultipleOfBet,
    Paytable,
    PaytableRow,
    PercentOfMeter,
    RulePack,
    TiePolicy,
    get_pack,
)

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
