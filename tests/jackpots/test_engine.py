"""Pool arithmetic: contributions, settlement of a hand by each jurisdiction's rule, reset, balance."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halls.money import ContributionSplit, cents_down, split_contribution
from jackpots.engine import (
    LevelState,
    OverflowTarget,
    PoolTotals,
    Settlement,
    Winner,
    apply_contribution,
    apply_settlement,
    balance_identity,
    draw_must_hit_by,
    meets_min_return,
    reset_after_award,
    settle_hand,
)
from jackpots.poker import AN96, SEVENS, STANDARD, Card, HandOrdering, HandRank, Suit, rank_hand, rank_sevens
from jackpots.rulepacks import (
    AN10_BJ_BOLSA,
    AN10_PSD_CARRUSEL,
    AN10_TRIPOQUER_CARRUSEL,
    AN96_PSD_CARRUSEL,
    EU_BJ_APUESTA_ACUMULADA,
    EU_PCD_JACKPOT_FIXED,
    EU_PCD_JACKPOT_PROGRESSIVE_MANUAL,
    EU_PSD_JACKPOT,
    ML_BJ_PROGRESIVO,
    ML_PSD_CARRUSEL,
    ML_PSD_PROGRESIVO,
    JackpotKind,
    RulePack,
)

D = Decimal
METER = D("10000")  # the meter of every worked example in spec §6.6 and §6.7
BET = D("1")

ROYAL_S, ROYAL_H, ROYAL_D = "AS KS QS JS TS", "AH KH QH JH TH", "AD KD QD JD TD"
SF_K, SF_8 = "KS QS JS TS 9S", "8H 7H 6H 5H 4H"
SF_9_H, SF_9_S = "9H 8H 7H 6H 5H", "9S 8S 7S 6S 5S"
FOUR_9 = "9H 9S 9D 9C 5H"


def hand(cards: str, ordering: HandOrdering = STANDARD) -> HandRank:
    return rank_hand(cards, ordering)


def paid(settlement: Settlement) -> list[tuple[object, Decimal]]:
    """(seat, amount) in payment order."""
    return [(p.seat, p.amount) for p in settlement.payouts]


# --- worked examples, spec §6.6 (AN10, meter 10.000 €) ----------------------------------------------------


def test_an10_two_royal_flushes_share_the_whole_carousel() -> None:
    s = settle_hand(AN10_PSD_CARRUSEL, METER, BET, [("A", hand(ROYAL_S), False), ("B", hand(ROYAL_H), False)])
    assert paid(s) == [("A", D("5000.00")), ("B", D("5000.00"))]
    assert s.meter_after == 0
    # ... and the carousel is re-seeded to at least 5.000 × the bet (OP-23): reserve first, then operator.
    level = LevelState(seed=AN10_PSD_CARRUSEL.minimum_seed(BET), amount=METER, reserve=D("1200"))
    reset = reset_after_award(apply_settlement(level, s))
    assert reset.level.amount == D("5000")
    assert (reset.from_reserve, reset.operator_seed) == (D("1200"), D("3800"))
    assert reset.level.reserve == 0


@pytest.mark.parametrize("order", [("A", "B"), ("B", "A")])
def test_an10_straight_flush_k_high_then_8_high_on_the_remainder(order: tuple[str, str]) -> None:
    hands = {"A": hand(SF_K), "B": hand(SF_8)}
    s = settle_hand(AN10_PSD_CARRUSEL, METER, BET, [(seat, hands[seat], False) for seat in order])
    assert paid(s) == [("A", D("1000.00")), ("B", D("900.00"))]
    assert [p.basis for p in s.payouts] == [D("10000"), D("9000")]
    assert s.meter_after == D("8100")


def test_an10_two_equal_straight_flushes_share_one_ten_percent() -> None:
    s = settle_hand(AN10_PSD_CARRUSEL, METER, BET, [("A", hand(SF_9_H), False), ("B", hand(SF_9_S), False)])
    assert paid(s) == [("A", D("500.00")), ("B", D("500.00"))]
    assert s.meter_after == D("9000")


def test_an10_four_of_a_kind_pays_300_times_the_bet_off_the_meter() -> None:
    s = settle_hand(AN10_PSD_CARRUSEL, METER, D("1.00"), [("A", hand(FOUR_9), False)])
    assert paid(s) == [("A", D("300.00"))]
    assert s.meter_after == METER - 300
    assert s.from_operator == 0


def test_an10_full_flush_and_straight_pay_their_multiples_highest_first() -> None:
    winners = [
        ("straight", hand("AS KH QD JC TS"), False),
        ("flush", hand("AH JH 8H 4H 2H"), False),
        ("full", hand("3S 3H 3D KC KS"), False),
        ("nothing", hand("AS AH KD QC JS"), False),  # three of a kind is not on the paytable
    ]
    s = settle_hand(AN10_PSD_CARRUSEL, METER, D("2"), winners)
    assert paid(s) == [("full", D("200.00")), ("flush", D("100.00")), ("straight", D("60.00"))]
    assert s.meter_after == D("9640")


# --- worked example, spec §6.7 (EU póquer sin descarte, meter 10.000 €) ------------------------------------


@pytest.mark.parametrize("order", [("A", "B"), ("B", "A")])
def test_eu_straight_flush_then_four_of_a_kind_on_the_remainder(order: tuple[str, str]) -> None:
    hands = {"A": hand(SF_K), "B": hand(FOUR_9)}
    s = settle_hand(EU_PSD_JACKPOT, METER, BET, [(seat, hands[seat], False) for seat in order])
    assert paid(s) == [("A", D("1000.00")), ("B", D("450.00"))]
    assert s.meter_after == D("8550")


def test_eu_equal_straight_flushes_each_get_ten_percent_of_the_hands_start() -> None:
    s = settle_hand(EU_PSD_JACKPOT, METER, BET, [("A", hand(SF_9_H), False), ("B", hand(SF_9_S), False)])
    assert paid(s) == [("A", D("1000.00")), ("B", D("1000.00"))]
    assert s.meter_after == D("8000")
    # With a higher straight flush paid first, the equal ones still take 10 % of the hand's start (OP-26).
    s = settle_hand(
        EU_PSD_JACKPOT,
        METER,
        BET,
        [("A", hand(SF_9_H), False), ("B", hand(SF_9_S), False), ("K", hand(SF_K), False)],
    )
    assert paid(s) == [("K", D("1000.00")), ("A", D("1000.00")), ("B", D("1000.00"))]
    assert s.meter_after == D("7000")


def test_eu_equal_hands_share_the_meter_when_it_cannot_cover_each_percentage() -> None:
    sf9 = hand(SF_9_H)
    winners = [(seat, sf9, False) for seat in range(12)]  # a pool across many tables
    s = settle_hand(EU_PSD_JACKPOT, D("100.00"), BET, winners)
    assert {p.amount for p in s.payouts} == {D("8.33")}
    assert s.meter_after == D("0.04")


def test_eu_several_royal_flushes_share_the_jackpot_op28() -> None:
    winners = [("A", hand(ROYAL_S), False), ("B", hand(ROYAL_H), False), ("C", hand(ROYAL_D), False)]
    s = settle_hand(EU_PSD_JACKPOT, METER, BET, winners)
    assert paid(s) == [("A", D("3333.33")), ("B", D("3333.33")), ("C", D("3333.33"))]
    assert s.meter_after == D("0.01")  # the cent that cannot be split stays in the pool
    assert s.kept_fraction == D("0.01")


# --- AN96, other jurisdictions, payment order ---------------------------------------------------------------


def test_an96_pays_only_the_highest_straight_flush() -> None:
    winners = [("B", hand(SF_8, AN96), False), ("A", hand(SF_K, AN96), False)]
    s = settle_hand(AN96_PSD_CARRUSEL, METER, BET, winners)
    assert paid(s) == [("A", D("1000.00")), ("B", D("0.00"))]
    assert "only the highest" in s.payouts[1].note
    assert s.meter_after == D("9000")


def test_an96_equal_highest_straight_flushes_share_the_single_prize() -> None:
    winners = [
        ("A", hand(SF_9_H, AN96), False),
        ("B", hand(SF_9_S, AN96), False),
        ("C", hand(SF_8, AN96), False),
    ]
    s = settle_hand(AN96_PSD_CARRUSEL, METER, BET, winners)
    assert paid(s) == [("A", D("500.00")), ("B", D("500.00")), ("C", D("0.00"))]


def test_melilla_royal_takes_the_pool_and_a_straight_flush_the_ten_percent() -> None:
    s = settle_hand(ML_PSD_PROGRESIVO, D("2345.6789"), BET, [("A", hand(SF_K), False)])
    assert paid(s) == [("A", D("234.56"))]
    assert s.meter_after == D("2111.1189")
    assert s.kept_fraction == D("0.00789")
    s = settle_hand(ML_PSD_CARRUSEL, D("2345.6789"), BET, [("A", hand(ROYAL_S), False)])
    assert paid(s) == [("A", D("2345.67"))]
    assert s.meter_after == D("0.0089")


def test_royal_flush_first_then_straight_flush_on_what_remains_op23() -> None:
    s = settle_hand(
        AN10_PSD_CARRUSEL, METER, BET, [("sf", hand(SF_K), False), ("royal", hand(ROYAL_S), False)]
    )
    assert paid(s) == [("royal", D("10000.00")), ("sf", D("0.00"))]


def test_fixed_prizes_the_meter_cannot_cover_are_paid_by_the_operator_op23() -> None:
    winners = [("royal", hand(ROYAL_S), False), ("four", hand(FOUR_9), False)]
    s = settle_hand(AN10_PSD_CARRUSEL, D("10000.0049"), BET, winners)
    assert paid(s) == [("royal", D("10000.00")), ("four", D("300.00"))]
    four = s.payouts[1]
    assert (four.from_meter, four.from_operator) == (D("0.00"), D("300.00"))
    assert "operator pays" in four.note
    assert s.from_meter == D("10000.00")
    assert s.from_operator == D("300.00")
    assert s.meter_after == D("0.0049")


def test_eu_draw_poker_pays_no_discard_hands_before_discard_hands() -> None:
    winners = [
        ("royal after discard", hand(ROYAL_H), True),
        ("four", hand(FOUR_9), False),
        ("sf after discard", hand(SF_K), True),
    ]
    s = settle_hand(EU_PCD_JACKPOT_PROGRESSIVE_MANUAL, METER, BET, winners)
    # four: 5 % of 10000; then the discard royal 10 % of 9500; then the discard SF 1 % of 8550.
    assert paid(s) == [
        ("four", D("500.00")),
        ("royal after discard", D("950.00")),
        ("sf after discard", D("85.50")),
    ]
    assert s.meter_after == D("8464.50")
    optional_off = settle_hand(
        EU_PCD_JACKPOT_PROGRESSIVE_MANUAL.without_discard_payments(), METER, BET, winners
    )
    assert paid(optional_off) == [("four", D("500.00"))]


def test_eu_fixed_jackpot_pays_on_its_fixed_value_and_is_restored() -> None:
    level = LevelState.opened(EU_PCD_JACKPOT_FIXED.minimum_seed(D("5")), kind=JackpotKind.FIXED)
    assert level.amount == D("10000")
    s = settle_hand(EU_PCD_JACKPOT_FIXED, level.amount, D("5"), [("A", hand(SF_K), False)])
    assert paid(s) == [("A", D("1000.00"))]
    reset = reset_after_award(apply_settlement(level, s))
    assert reset.level.amount == D("10000")
    assert reset.operator_seed == D("1000.00")


def test_blackjack_bolsa_pays_the_highest_sevens_only() -> None:
    winners = []
    for seat, cards in enumerate(["7H 7H 7H", "7H 7S 7D", "7D 7D", "7D 7C", "7C 2D"]):
        rank = rank_sevens(cards)
        assert rank is not None
        winners.append((seat, rank, False))
    s = settle_hand(AN10_BJ_BOLSA, D("3000"), D("1"), winners)
    assert paid(s) == [(0, D("3000.00")), (1, D("200.00")), (2, D("100.00")), (3, D("10.00")), (4, D("2.00"))]
    assert s.from_operator == D("312.00")
    s = settle_hand(EU_BJ_APUESTA_ACUMULADA, D("2000"), D("1"), winners[2:3])
    assert paid(s) == [(2, D("50.00"))]


# --- refusals -----------------------------------------------------------------------------------------------


def test_settlement_refuses_inconsistent_input() -> None:
    with pytest.raises(ValueError, match="twice"):
        settle_hand(AN10_PSD_CARRUSEL, METER, BET, [("A", hand(SF_K), False), ("A", hand(SF_8), False)])
    with pytest.raises(ValueError, match="ranked under"):
        settle_hand(AN10_PSD_CARRUSEL, METER, BET, [("A", hand(SF_K, AN96), False)])
    with pytest.raises(ValueError, match="no discarding"):
        settle_hand(AN10_PSD_CARRUSEL, METER, BET, [("A", hand(SF_K), True)])
    with pytest.raises(ValueError, match="authorisation"):
        settle_hand(AN10_TRIPOQUER_CARRUSEL, METER, BET, [])
    with pytest.raises(ValueError, match="authorisation"):
        settle_hand(ML_BJ_PROGRESIVO, METER, BET, [])
    with pytest.raises(TypeError, match="Decimal"):
        settle_hand(AN10_PSD_CARRUSEL, 10000.0, BET, [])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"multiple of 0\.01"):
        settle_hand(AN10_PSD_CARRUSEL, METER, D("0.005"), [])
    level = LevelState.opened(D("100"))
    s = settle_hand(AN10_PSD_CARRUSEL, D("50"), BET, [])
    with pytest.raises(ValueError, match="level holds"):
        apply_settlement(level, s)


def test_winner_tuples_and_named_winners_are_the_same() -> None:
    as_tuples = settle_hand(EU_PSD_JACKPOT, METER, BET, [("A", hand(SF_K), False)])
    as_winners = settle_hand(EU_PSD_JACKPOT, METER, BET, [Winner("A", hand(SF_K))])
    assert as_tuples == as_winners
    assert as_tuples.paid_to("A") == D("1000.00")
    assert as_tuples.paid_to("nobody") == 0


# --- contributions, levels, reset ---------------------------------------------------------------------------


def test_split_contribution_keeps_every_fraction() -> None:
    assert split_contribution(D("1.00"), D("0.05"), D("0.01")) == ContributionSplit(
        to_meter=D("0.0500"), to_reserve=D("0.0100"), house=D("0.9400")
    )
    # 1/3 rates cannot be exact: the reserve and house shares round down, the meter takes the rest.
    third = D(1) / D(3)
    split = split_contribution(D("0.50"), third, third)
    assert split.to_reserve == split.house == D("0.166666")
    assert split.to_meter == D("0.166668")
    assert sum(split) == D("0.50")


def test_split_contribution_refuses_bad_input() -> None:
    with pytest.raises(TypeError):
        split_contribution(1.0, D("0.1"), D("0"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at most 1"):
        split_contribution(D("1"), D("0.7"), D("0.4"))
    with pytest.raises(ValueError, match=">= 0"):
        split_contribution(D("1"), D("-0.1"), D("0"))
    with pytest.raises(ValueError, match=r"multiple of 0\.01"):
        split_contribution(D("1.001"), D("0.1"), D("0"))


def test_level_state_validates_its_parameters() -> None:
    with pytest.raises(ValueError, match="below the seed"):
        LevelState.opened(D("100"), ceiling=D("99"))
    with pytest.raises(ValueError, match="between seed"):
        LevelState.opened(D("100"), ceiling=D("200"), must_hit_by=D("201"))
    with pytest.raises(ValueError, match="between seed"):
        LevelState.opened(D("100"), must_hit_by=D("99.99"))
    with pytest.raises(ValueError, match="fixed"):
        LevelState.opened(D("100"), must_hit_by=D("150"), kind=JackpotKind.FIXED)
    with pytest.raises(ValueError, match="multiple of"):
        LevelState.opened(D("100.0000001"))
    with pytest.raises(ValueError, match=">= 0"):
        LevelState(seed=D("1"), amount=D("-1"))


def test_contribution_overflows_past_the_ceiling() -> None:
    level = LevelState(seed=D("100"), amount=D("199.99"), ceiling=D("200"))
    result = apply_contribution(level, D("0.05"), D("0.01"))
    assert result.level.amount == D("200")
    assert (result.added_to_meter, result.overflow_to_reserve) == (D("0.01"), D("0.04"))
    assert result.level.reserve == D("0.05")
    to_next = apply_contribution(
        LevelState(seed=D("100"), amount=D("200"), ceiling=D("200"), overflow=OverflowTarget.NEXT_LEVEL),
        D("0.05"),
    )
    assert to_next.level.amount == D("200")
    assert to_next.overflow_to_next_level == D("0.05")
    assert to_next.overflow_to_reserve == to_next.level.reserve == 0


def test_a_fixed_level_never_grows() -> None:
    level = LevelState.opened(D("2000"), kind=JackpotKind.FIXED)
    result = apply_contribution(level, D("0.25"), D("0.05"))
    assert result.level.amount == D("2000")
    assert result.level.reserve == D("0.30")


def test_must_hit_by_is_flagged_when_the_meter_reaches_it() -> None:
    level = LevelState(seed=D("100"), amount=D("149.90"), ceiling=D("200"), must_hit_by=D("150.00"))
    assert not apply_contribution(level, D("0.09")).must_hit
    assert apply_contribution(level, D("0.10")).must_hit


def test_reset_leaves_a_meter_still_above_its_seed_alone() -> None:
    level = LevelState(seed=D("5000"), amount=D("8100"), reserve=D("10"))
    reset = reset_after_award(level)
    assert reset.level == level
    assert reset.from_reserve == reset.operator_seed == 0


def test_reset_keeps_the_reserve_beyond_what_the_seed_needs() -> None:
    reset = reset_after_award(LevelState(seed=D("5000"), amount=D("0.0049"), reserve=D("6000")))
    assert reset.level.amount == D("5000")
    assert reset.from_reserve == D("4999.9951")
    assert reset.level.reserve == D("1000.0049")
    assert reset.operator_seed == 0


def counting_bytes(values: list[int]) -> Callable[[int], bytes]:
    feed: Iterator[int] = iter(values)

    def rng(n: int) -> bytes:
        return next(feed).to_bytes(n, "big")

    return rng


def test_draw_must_hit_by_covers_every_cent_and_rejects_out_of_range_draws() -> None:
    # 1.00 .. 1.04 is five cents: 3 bits; 7 and 5 are rejected, then 4 -> 1.04.
    assert draw_must_hit_by(D("1.00"), D("1.04"), counting_bytes([7, 5, 4])) == D("1.04")
    assert draw_must_hit_by(D("1.00"), D("1.04"), counting_bytes([0])) == D("1.00")
    assert draw_must_hit_by(D("0.995"), D("1.009"), counting_bytes([0])) == D("1.00")
    with pytest.raises(ValueError, match="no whole cent"):
        draw_must_hit_by(D("1.001"), D("1.009"))
    draws = {draw_must_hit_by(D("5000"), D("5000.03")) for _ in range(200)}  # the OS CSPRNG
    assert draws == {D("5000.00"), D("5000.01"), D("5000.02"), D("5000.03")}


def test_min_return_is_compared_exactly() -> None:
    pack = AN10_TRIPOQUER_CARRUSEL
    assert meets_min_return(pack, prizes_paid=D("60"), meter_increase=D("10"), amounts_bet=D("100"))
    assert not meets_min_return(pack, prizes_paid=D("60"), meter_increase=D("9.99"), amounts_bet=D("100"))
    assert meets_min_return(AN10_PSD_CARRUSEL, prizes_paid=D(0), meter_increase=D(0), amounts_bet=D("100"))


def test_balance_identity() -> None:
    b = balance_identity(
        seeds=D("5000"), contributions=D("12.5"), amount=D("4000"), awards=D("1000"), reserve_moves=D("12.5")
    )
    assert b.holds
    assert b.difference == 0
    assert not balance_identity(
        seeds=D("1"), contributions=D("0"), amount=D("0"), awards=D("0"), reserve_moves=D("0")
    ).holds


# --- properties ---------------------------------------------------------------------------------------------

suits = st.sampled_from(list(Suit))


def _straight_flush(high: int, suit: Suit) -> list[Card]:
    return [Card(14 if r == 1 else r, suit) for r in range(high, high - 5, -1)]


five_card_hands = st.one_of(
    suits.map(lambda s: _straight_flush(14, s)),
    st.builds(_straight_flush, st.integers(5, 13), suits),
    st.builds(
        lambda quad, kicker, suit: [Card(quad, s) for s in Suit] + [Card(kicker, suit)],
        st.integers(2, 14),
        st.integers(2, 14),
        suits,
    ).filter(lambda cards: cards[0].rank != cards[4].rank),
    st.lists(
        st.sampled_from([Card(r, s) for r in range(2, 15) for s in Suit]), min_size=5, max_size=5, unique=True
    ),
)
sevens_hands = st.lists(
    st.sampled_from([Card(7, s) for s in Suit] + [Card(13, Suit.SPADES)]), min_size=1, max_size=3
)

SETTLEABLE = [
    AN10_PSD_CARRUSEL,
    AN96_PSD_CARRUSEL,
    EU_PSD_JACKPOT,
    EU_PCD_JACKPOT_PROGRESSIVE_MANUAL,
    ML_PSD_CARRUSEL,
    AN10_BJ_BOLSA,
]
money_2 = st.decimals(min_value=0, max_value=10**7, places=2)
meters = st.decimals(min_value=0, max_value=10**7, places=6)
rates = st.decimals(min_value=0, max_value=D("0.5"), places=4)


@st.composite
def winners_for(draw: st.DrawFn, pack: RulePack, max_size: int = 6) -> list[Winner]:
    winners = []
    for seat in range(draw(st.integers(0, max_size))):
        if pack.ordering is SEVENS:
            rank = rank_sevens(draw(sevens_hands))
            if rank is None:
                continue
        else:
            assert pack.ordering is not None
            rank = rank_hand(draw(five_card_hands), pack.ordering)
        discard = pack.discard_paytable is not None and draw(st.booleans())
        winners.append(Winner(seat, rank, discard))
    return winners


@given(
    st.data(), st.sampled_from(SETTLEABLE), meters, st.decimals(min_value=D("0.01"), max_value=100, places=2)
)
def test_payouts_are_whole_cents_and_never_exceed_the_meter(
    data: st.DataObject, pack: RulePack, meter: Decimal, bet: Decimal
) -> None:
    winners = data.draw(winners_for(pack))
    s = settle_hand(pack, meter, bet, winners)
    assert s.meter_before == meter
    for p in s.payouts:
        assert p.amount == cents_down(p.amount) >= 0
        assert p.from_meter == cents_down(p.from_meter) >= 0
        assert p.amount == p.from_meter + p.from_operator
    assert s.from_meter <= meter
    assert s.meter_after == meter - s.from_meter >= 0
    assert s.kept_fraction >= 0
    # Payment order: within each phase the hands come highest first.
    phases = itertools.groupby(s.payouts, key=lambda p: p.discard and pack.discard_paytable is not None)
    for _, group in phases:
        ranks = [p.rank for p in group]
        assert ranks == sorted(ranks, reverse=True)


@given(split_args=st.tuples(money_2, rates, rates))
def test_split_contribution_adds_up_and_never_overpays_the_house(
    split_args: tuple[Decimal, Decimal, Decimal],
) -> None:
    bet, meter_rate, reserve_rate = split_args
    split = split_contribution(bet, meter_rate, reserve_rate)
    assert split.to_meter + split.to_reserve + split.house == bet
    assert split.house <= bet * (1 - meter_rate - reserve_rate)
    assert split.to_reserve <= bet * reserve_rate
    assert split.to_meter >= bet * meter_rate
    assert min(split) >= 0


@dataclass(frozen=True)
class Contribute:
    bet: Decimal


@dataclass(frozen=True)
class Hand:
    winners: list[Winner]


@st.composite
def pool_histories(draw: st.DrawFn) -> tuple[RulePack, LevelState, Decimal, Decimal, list[Contribute | Hand]]:
    pack = draw(st.sampled_from(SETTLEABLE))
    seed = draw(st.decimals(min_value=0, max_value=10_000, places=2))
    kind = draw(st.sampled_from(list(JackpotKind)))
    ceiling = None
    if kind is JackpotKind.PROGRESSIVE and draw(st.booleans()):
        ceiling = seed + draw(st.decimals(min_value=0, max_value=100, places=4))
    level = LevelState.opened(
        seed,
        reserve=draw(st.decimals(min_value=0, max_value=1000, places=4)),
        ceiling=ceiling,
        overflow=draw(st.sampled_from(list(OverflowTarget))),
        kind=kind,
    )
    meter_rate, reserve_rate = draw(rates), draw(rates)
    ops = draw(
        st.lists(
            st.one_of(
                st.builds(Contribute, st.decimals(min_value=D("0.01"), max_value=50, places=2)),
                st.builds(Hand, winners_for(pack, max_size=4)),
            ),
            max_size=25,
        )
    )
    return pack, level, meter_rate, reserve_rate, ops


@settings(max_examples=200)
@given(pool_histories())
def test_balance_identity_holds_exactly_over_any_history(
    history: tuple[RulePack, LevelState, Decimal, Decimal, list[Contribute | Hand]],
) -> None:
    pack, level, meter_rate, reserve_rate, ops = history
    totals = PoolTotals.opening(level)
    bet = D("1.00")
    for op in ops:
        before = level.amount
        if isinstance(op, Contribute):
            split = split_contribution(op.bet, meter_rate, reserve_rate)
            result = apply_contribution(level, split.to_meter, split.to_reserve)
            level, totals = result.level, totals.with_contribution(result)
            assert level.amount >= before  # contributions never lower a meter
            if level.ceiling is not None:
                assert level.amount <= max(level.ceiling, before)
        else:
            settlement = settle_hand(pack, level.amount, bet, op.winners)
            assert settlement.from_meter <= level.amount
            level, totals = apply_settlement(level, settlement), totals.with_settlement(settlement)
            assert totals.meter_balance(level).holds  # holds between the award and the reset too
            reset = reset_after_award(level)
            level, totals = reset.level, totals.with_reset(reset)
        # Only an award takes a meter below its seed, and the reset of the same transaction restores it.
        assert level.amount >= level.seed
        assert level.reserve >= 0
        meter_balance = totals.meter_balance(level)
        assert meter_balance.holds, meter_balance
        assert totals.reserve_balance(level).holds
    # The whole pool: everything that came in is on a meter, in the reserve, paid, or passed upward.
    pool_in = totals.seeds + totals.contributions + totals.reserve_in
    pool_out = level.amount + level.reserve + totals.awards + totals.overflow_to_next_level
    assert pool_in == pool_out
