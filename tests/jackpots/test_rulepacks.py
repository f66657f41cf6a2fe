"""The jurisdiction variants of spec §6 as data: each pack says what its seed article says."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from halls.models import Jurisdiction as HallJurisdiction
from jackpots.poker import AN96, SEVENS, STANDARD, THREE_CARD, HandCategory, SevensCombination
from jackpots.rulepacks import (
    AN10_BJ_BOLSA,
    AN10_POKER_INTERCONNECTED,
    AN10_PSD_CARRUSEL,
    AN10_TRIPOQUER_CARRUSEL,
    AN96_PSD_CARRUSEL,
    CT_BJ_APOSTES_ACUMULADES,
    CT_PSD_PROGRESSIU,
    EU_BJ_APUESTA_ACUMULADA,
    EU_PCD_JACKPOT_FIXED,
    EU_PCD_JACKPOT_PROGRESSIVE_AUTOMATIC,
    EU_PCD_JACKPOT_PROGRESSIVE_MANUAL,
    EU_PSD_JACKPOT,
    ML_BJ_PROGRESIVO,
    ML_PSD_CARRUSEL,
    ML_PSD_PROGRESIVO,
    PACKS,
    BetRegistration,
    FixedAmount,
    JackpotKind,
    Jurisdiction,
    MultipleOfBet,
    PaymentOrder,
    Paytable,
    PaytableRow,
    PercentOfMeter,
    Prize,
    RulePack,
    TiePolicy,
    get_pack,
    packs_for,
)

D = Decimal
C = HandCategory
S7 = SevensCombination


def _table(pack_table: Paytable | None) -> dict[object, tuple[Prize, TiePolicy]]:
    assert pack_table is not None
    return {row.category: (row.prize, row.ties) for row in pack_table.rows}


def pct(value: str) -> PercentOfMeter:
    return PercentOfMeter(D(value))


def times(value: int) -> MultipleOfBet:
    return MultipleOfBet(D(value))


# --- the registry -----------------------------------------------------------------------------------------


def test_registry_holds_every_pack_once_by_code() -> None:
    assert len(PACKS) == 15
    for code, pack in PACKS.items():
        assert pack.code == code
        assert get_pack(code) is pack
    with pytest.raises(KeyError, match="no rule pack"):
        get_pack("XX_NOTHING")
    with pytest.raises(TypeError):
        PACKS["X"] = ML_PSD_CARRUSEL  # type: ignore[index]


def test_jurisdiction_codes_match_the_halls_profile() -> None:
    assert {j.value for j in Jurisdiction} == {j.value for j in HallJurisdiction}
    assert {p.code for p in packs_for("AN96")} == {"AN96_PSD_CARRUSEL"}
    assert {p.code for p in packs_for(Jurisdiction.CT)} == {"CT_PSD_PROGRESSIU", "CT_BJ_APOSTES_ACUMULADES"}


@pytest.mark.parametrize("pack", list(PACKS.values()), ids=list(PACKS))
def test_every_pack_cites_the_spec_and_a_seed(pack: RulePack) -> None:
    assert pack.source.startswith("spec §6.")
    assert ".txt" in pack.source
    assert pack.title


def test_packs_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        AN10_PSD_CARRUSEL.min_seed_multiple = D(1)  # type: ignore[misc]


# --- póquer sin descarte ----------------------------------------------------------------------------------


def test_melilla_and_catalonia_pay_royal_whole_pool_and_straight_flush_ten_percent() -> None:
    for pack in (ML_PSD_CARRUSEL, ML_PSD_PROGRESIVO, CT_PSD_PROGRESSIU):
        assert pack.ordering is STANDARD
        assert _table(pack.paytable) == {
            C.ROYAL_FLUSH: (pct("100"), TiePolicy.SHARE_ONE),
            C.STRAIGHT_FLUSH: (pct("10"), TiePolicy.SHARE_ONE),
        }
        assert pack.max_bet_share_of_table_minimum == D("0.5")  # 62.2, 10.VII.b; art. 61 by OP-21
        assert pack.min_seed_multiple is None
    assert ML_PSD_PROGRESIVO.first_five_cards_only
    assert not CT_PSD_PROGRESSIU.first_five_cards_only
    assert ML_PSD_PROGRESIVO.registrations == (BetRegistration.SLOT_WITH_COUNTER,)


def test_andalucia_1996_pays_only_the_highest_straight_flush_and_ranks_flush_above_full() -> None:
    assert AN96_PSD_CARRUSEL.ordering is AN96
    assert _table(AN96_PSD_CARRUSEL.paytable) == {
        C.ROYAL_FLUSH: (pct("100"), TiePolicy.SHARE_ONE),
        C.STRAIGHT_FLUSH: (pct("10"), TiePolicy.HIGHEST_ONLY),
    }
    assert AN96_PSD_CARRUSEL.max_bet_share_of_table_minimum is None


def test_andalucia_2010_paytable_seed_and_eligibility() -> None:
    assert _table(AN10_PSD_CARRUSEL.paytable) == {
        C.ROYAL_FLUSH: (pct("100"), TiePolicy.SHARE_ONE),
        C.STRAIGHT_FLUSH: (pct("10"), TiePolicy.SHARE_ONE),
        C.FOUR_OF_A_KIND: (times(300), TiePolicy.SHARE_ONE),
        C.FULL_HOUSE: (times(100), TiePolicy.SHARE_ONE),
        C.FLUSH: (times(50), TiePolicy.SHARE_ONE),
        C.STRAIGHT: (times(30), TiePolicy.SHARE_ONE),
    }
    assert AN10_PSD_CARRUSEL.minimum_seed(D("1.00")) == D("5000.00")
    AN10_PSD_CARRUSEL.check_seed(D("10000"), D("2"))
    with pytest.raises(ValueError, match="below the minimum"):
        AN10_PSD_CARRUSEL.check_seed(D("9999.99"), D("2"))
    assert AN10_PSD_CARRUSEL.requires_initial_bet
    assert not AN10_PSD_CARRUSEL.pool_bet_stands(made_initial_bet=False, bought_extra_card=False)
    assert AN10_PSD_CARRUSEL.pool_bet_stands(made_initial_bet=True, bought_extra_card=True)
    assert AN10_PSD_CARRUSEL.max_pool_bet(D("10")) is None


def test_euskadi_stud_poker_jackpot() -> None:
    assert _table(EU_PSD_JACKPOT.paytable) == {
        C.ROYAL_FLUSH: (pct("100"), TiePolicy.SHARE_ONE),
        C.STRAIGHT_FLUSH: (pct("10"), TiePolicy.EACH_OF_HAND_START),
        C.FOUR_OF_A_KIND: (pct("5"), TiePolicy.EACH_OF_HAND_START),
    }
    assert EU_PSD_JACKPOT.extra_card_forfeits_pool_bet
    assert not EU_PSD_JACKPOT.pool_bet_stands(made_initial_bet=True, bought_extra_card=True)
    assert EU_PSD_JACKPOT.pool_bet_stands(made_initial_bet=False, bought_extra_card=False)


def test_half_the_table_minimum_never_rounds_up() -> None:
    assert EU_PSD_JACKPOT.max_pool_bet(D("10.00")) == D("5.00")
    assert EU_PSD_JACKPOT.max_pool_bet(D("5.01")) == D("2.50")
    EU_PSD_JACKPOT.check_pool_bet(D("2.50"), D("5.01"))
    with pytest.raises(ValueError, match="half of the table minimum"):
        EU_PSD_JACKPOT.check_pool_bet(D("2.51"), D("5.01"))
    AN10_PSD_CARRUSEL.check_pool_bet(D("1000"), D("1"))  # no cap stated for AN10


# --- póquer con descarte ----------------------------------------------------------------------------------


def test_euskadi_draw_poker_pays_no_discard_rows_then_discard_rows() -> None:
    packs = (EU_PCD_JACKPOT_FIXED, EU_PCD_JACKPOT_PROGRESSIVE_MANUAL, EU_PCD_JACKPOT_PROGRESSIVE_AUTOMATIC)
    for pack in packs:
        assert pack.payment_order is PaymentOrder.NO_DISCARD_FIRST
        assert _table(pack.paytable) == {
            C.ROYAL_FLUSH: (pct("100"), TiePolicy.SHARE_ONE),
            C.STRAIGHT_FLUSH: (pct("10"), TiePolicy.EACH_OF_HAND_START),
            C.FOUR_OF_A_KIND: (pct("5"), TiePolicy.EACH_OF_HAND_START),
        }
        assert _table(pack.discard_paytable) == {
            C.ROYAL_FLUSH: (pct("10"), TiePolicy.EACH_OF_HAND_START),
            C.STRAIGHT_FLUSH: (pct("1"), TiePolicy.EACH_OF_HAND_START),
            C.FOUR_OF_A_KIND: (pct("0.5"), TiePolicy.EACH_OF_HAND_START),
        }
        assert pack.max_bet_share_of_table_minimum == D("0.5")
        assert pack.requires_initial_bet
        assert pack.without_discard_payments().discard_paytable is None
    assert EU_PCD_JACKPOT_FIXED.kind is JackpotKind.FIXED
    assert EU_PCD_JACKPOT_FIXED.minimum_seed(D("5")) == D("10000")
    assert EU_PCD_JACKPOT_PROGRESSIVE_MANUAL.kind is JackpotKind.PROGRESSIVE
    assert EU_PCD_JACKPOT_PROGRESSIVE_MANUAL.minimum_seed(D("5")) == D("5000")
    assert EU_PCD_JACKPOT_PROGRESSIVE_MANUAL.registrations == (BetRegistration.MANUAL_HAND_TOTAL,)
    assert EU_PCD_JACKPOT_PROGRESSIVE_AUTOMATIC.registrations == (BetRegistration.AUTOMATIC_CHIP_SLOT,)


# --- tripóquer --------------------------------------------------------------------------------------------


def test_tripoquer_carousel_waits_for_its_authorised_paytable() -> None:
    pack = AN10_TRIPOQUER_CARRUSEL
    assert pack.ordering is THREE_CARD
    assert pack.paytable.from_authorisation
    assert pack.paytable.rows == ()
    assert pack.min_return == D("0.70")
    authorised = pack.with_authorised_paytable(
        Paytable(
            (PaytableRow(C.STRAIGHT_FLUSH, PercentOfMeter(D(100))), PaytableRow(C.THREE_OF_A_KIND, times(40)))
        )
    )
    assert authorised.paytable.row_for(C.THREE_OF_A_KIND) == PaytableRow(C.THREE_OF_A_KIND, times(40))
    assert authorised.ordering is THREE_CARD
    with pytest.raises(ValueError, match="placeholder"):
        pack.with_authorised_paytable(pack.paytable)
    with pytest.raises(ValueError, match="not a category"):
        pack.with_authorised_paytable(Paytable((PaytableRow(C.FULL_HOUSE, times(10)),)))


def test_interconnected_poker_uses_five_card_hands_with_two_community_cards() -> None:
    assert AN10_POKER_INTERCONNECTED.ordering is STANDARD
    assert AN10_POKER_INTERCONNECTED.community_cards == 2
    assert AN10_POKER_INTERCONNECTED.paytable == AN10_PSD_CARRUSEL.paytable
    assert AN10_POKER_INTERCONNECTED.min_return == D("0.70")


# --- blackjack --------------------------------------------------------------------------------------------


def test_andalucia_bolsa_paytable() -> None:
    assert AN10_BJ_BOLSA.ordering is SEVENS
    assert _table(AN10_BJ_BOLSA.paytable) == {
        S7.THREE_SEVENS_SAME_SUIT: (pct("100"), TiePolicy.SHARE_ONE),
        S7.THREE_SEVENS: (times(200), TiePolicy.SHARE_ONE),
        S7.TWO_SEVENS_SAME_SUIT: (times(100), TiePolicy.SHARE_ONE),
        S7.TWO_SEVENS: (times(10), TiePolicy.SHARE_ONE),
        S7.FIRST_CARD_SEVEN: (times(2), TiePolicy.SHARE_ONE),
    }
    assert AN10_BJ_BOLSA.minimum_seed(D("1")) == D("3000")
    assert AN10_BJ_BOLSA.max_bet_share_of_table_minimum is None


def test_euskadi_accumulated_bet_uses_the_spanish_50_to_1_and_is_a_floor() -> None:
    table = _table(EU_BJ_APUESTA_ACUMULADA.paytable)
    assert table[S7.TWO_SEVENS_SAME_SUIT] == (times(50), TiePolicy.SHARE_ONE)  # OP-20
    assert table[S7.THREE_SEVENS] == (times(200), TiePolicy.SHARE_ONE)
    assert EU_BJ_APUESTA_ACUMULADA.paytable.minimums
    assert EU_BJ_APUESTA_ACUMULADA.minimum_seed(D("1")) == D("2000")
    assert EU_BJ_APUESTA_ACUMULADA.max_bet_share_of_table_minimum == D("0.5")


def test_melilla_and_catalonia_blackjack_have_no_invented_numbers() -> None:
    for pack in (ML_BJ_PROGRESIVO, CT_BJ_APOSTES_ACUMULADES):
        assert pack.ordering is None
        assert pack.paytable.from_authorisation
        assert pack.paytable.rows == ()
        assert pack.min_seed_multiple is None
    assert ML_BJ_PROGRESIVO.max_bet_share_of_table_minimum == D("0.5")
    assert CT_BJ_APOSTES_ACUMULADES.max_bet_share_of_table_minimum is None
    granted = ML_BJ_PROGRESIVO.with_authorised_paytable(
        Paytable((PaytableRow(S7.FIRST_CARD_SEVEN, FixedAmount(D("5"))),)), ordering=SEVENS
    )
    assert granted.ordering is SEVENS


# --- validation -------------------------------------------------------------------------------------------


def test_paytables_and_prizes_validate_themselves() -> None:
    with pytest.raises(ValueError, match="at most once"):
        Paytable((PaytableRow(C.FLUSH, times(5)), PaytableRow(C.FLUSH, times(6))))
    with pytest.raises(ValueError, match="no rows"):
        Paytable((PaytableRow(C.FLUSH, times(5)),), from_authorisation=True)
    with pytest.raises(ValueError, match="at most 100"):
        PercentOfMeter(D("100.01"))
    with pytest.raises(ValueError, match="positive"):
        MultipleOfBet(D("-1"))
    with pytest.raises(ValueError, match="positive"):
        FixedAmount(D("NaN"))
    with pytest.raises(ValueError, match="positive"):
        PercentOfMeter(10)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs the ordering"):
        dataclasses.replace(ML_BJ_PROGRESIVO, paytable=Paytable((PaytableRow(S7.TWO_SEVENS, times(2)),)))
    with pytest.raises(ValueError, match="not a category"):
        dataclasses.replace(AN10_PSD_CARRUSEL, ordering=SEVENS)
