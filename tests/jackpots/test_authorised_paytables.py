"""Packs whose paytable comes from the authorisation (OP-30): loaded when rankable, refused otherwise."""

from __future__ import annotations

from decimal import Decimal

import pytest

from halls.errors import InvalidInput
from jackpots.poker import SEVENS
from jackpots.rulepacks import get_pack
from jackpots.services.packs import with_authorised_paytable

SEVENS_ROWS = [{"category": "three_sevens_same_suit", "multiple": "500"}]


def test_blackjack_pack_takes_the_sevens_ordering_from_its_authorised_rows():
    pack = with_authorised_paytable(get_pack("ML_BJ_PROGRESIVO"), SEVENS_ROWS)
    assert pack.ordering is SEVENS
    assert pack.paytable.rows[0].prize.multiple == Decimal(500)  # type: ignore[union-attr]


def test_poker_rows_for_a_pack_without_ranking_are_refused_with_a_4xx():
    with pytest.raises(InvalidInput) as refused:
        with_authorised_paytable(
            get_pack("CT_BJ_APOSTES_ACUMULADES"), [{"category": "royal_flush", "percent": "100"}]
        )
    assert refused.value.code == "bad_paytable"
    assert "sevens" in refused.value.message
