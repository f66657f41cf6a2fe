"""For each rule pack with a paytable: hands with known cards pay exactly as spec §6 says, through the
table services on PostgreSQL (open, bets, cards, settle -> the engine's award_hand); meter 10,000 €, bet 1 €.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from jackpots.rulepacks import PACKS
from jackpots.services.readmodels.meters import pool_meter
from jackpots.tables.models import HandState, SeatBet, SeatPayout
from tests.jackpots.tables.conftest import BET, METER, meter, payouts, play

D = Decimal

ROYAL_S, ROYAL_H, ROYAL_D = "AS KS QS JS TS", "AH KH QH JH TH", "AD KD QD JD TD"
SF_K, SF_8 = "KS QS JS TS 9S", "8H 7H 6H 5H 4H"
SF_9_H, SF_9_S = "9H 8H 7H 6H 5H", "9S 8S 7S 6S 5S"
FOUR_3 = "3H 3S 3D 3C 6C"
FOUR_Q = "QH QS QD QC 2D"
FULL = "KH KD KC 2S 2H"
FLUSH = "3C 7C 9C JC QC"
STRAIGHT = "5D 6C 7H 8S 9D"
PAIR = "AC AD 4H 8D TD"

PACKS_WITH_PAYTABLE = sorted(code for code, pack in PACKS.items() if not pack.paytable.from_authorisation)


def test_every_pack_with_a_paytable_is_played_here() -> None:
    """The scenarios below cover every regulated variant whose paytable the regulation gives."""
    assert set(PACKS_WITH_PAYTABLE) == set(SCENARIOS)


# pack -> [(cards by seat, {"discards", "extra", "community", "game"}, expected (seat, paid) in payment order,
#           expected meter after the payments)]
SCENARIOS: dict[str, list[tuple[dict[int, str], dict[str, object], list[tuple[int, str]], str]]] = {
    # §6.2 ML art. 61: royal the whole carousel, equal parts; straight flush 10 %; nothing else.
    "ML_PSD_CARRUSEL": [
        ({1: ROYAL_S}, {}, [(1, "10000.00")], "0"),
        ({1: ROYAL_S, 4: ROYAL_H}, {}, [(1, "5000.00"), (4, "5000.00")], "0"),
        ({2: SF_K}, {}, [(2, "1000.00")], "9000"),
        ({2: FOUR_3, 3: FULL, 5: PAIR}, {}, [], "10000"),
    ],
    # §6.3 ML art. 62.2: royal the accumulated amount, straight flush 10 %; the first five cards count,
    # so a player who bought an extra card keeps the pool bet (entered: the five dealt cards).
    "ML_PSD_PROGRESIVO": [
        ({1: ROYAL_S}, {}, [(1, "10000.00")], "0"),
        ({3: SF_8}, {"extra": [3]}, [(3, "1000.00")], "9000"),
    ],
    # §6.4 CT ep. 10.VII.b: as Melilla's progresivo.
    "CT_PSD_PROGRESSIU": [
        ({6: ROYAL_D}, {}, [(6, "10000.00")], "0"),
        ({1: SF_K, 2: SF_8}, {}, [(1, "1000.00"), (2, "900.00")], "8100"),
    ],
    # §6.5 AN96: 10 % only to the HIGHEST straight flush (the lower one is recorded with 0); Flush above
    # Full (OP-24) pays nothing here.
    "AN96_PSD_CARRUSEL": [
        ({1: SF_8, 2: SF_K}, {}, [(2, "1000.00"), (1, "0.00")], "9000"),
        ({1: ROYAL_H, 2: ROYAL_S}, {}, [(1, "5000.00"), (2, "5000.00")], "0"),
        ({1: FLUSH, 2: FULL}, {}, [], "10000"),
    ],
    # §6.6 AN10, the worked examples, and the multiples of the bet.
    "AN10_PSD_CARRUSEL": [
        ({1: ROYAL_S, 2: ROYAL_H}, {}, [(1, "5000.00"), (2, "5000.00")], "0"),
        ({1: SF_8, 2: SF_K}, {}, [(2, "1000.00"), (1, "900.00")], "8100"),
        ({3: SF_9_H, 5: SF_9_S}, {}, [(3, "500.00"), (5, "500.00")], "9000"),
        ({4: FOUR_3}, {}, [(4, "300.00")], "9700"),
        ({1: STRAIGHT, 2: FULL, 3: FLUSH, 4: PAIR}, {}, [(2, "100.00"), (3, "50.00"), (1, "30.00")], "9820"),
        ({1: SF_K, 2: FOUR_3}, {}, [(1, "1000.00"), (2, "300.00")], "8700"),
    ],
    # §6.7 EU 11.VI.1: royal the whole jackpot; SF 10 %, four 5 %, highest first on the remainder; equal
    # straight flushes each 10 % of the hand's starting meter; an extra card bought forfeits the bet.
    "EU_PSD_JACKPOT": [
        ({1: FOUR_3, 2: SF_K}, {}, [(2, "1000.00"), (1, "450.00")], "8550"),
        ({1: SF_9_H, 2: SF_9_S}, {}, [(1, "1000.00"), (2, "1000.00")], "8000"),
        ({4: ROYAL_S}, {}, [(4, "10000.00")], "0"),
        ({1: FOUR_Q, 2: FOUR_3}, {}, [(1, "500.00"), (2, "475.00")], "9025"),
        ({1: ROYAL_H, 2: SF_K}, {"extra": [1]}, [(2, "1000.00")], "9000"),
    ],
    # §6.8 EU draw poker, fixed jackpot: no-discard prizes always before discard prizes (JP-EU12-14).
    "EU_PCD_JACKPOT_FIXED": [
        ({1: SF_K, 2: FOUR_3}, {"discards": [1]}, [(2, "500.00"), (1, "95.00")], "9405"),
        ({1: ROYAL_S}, {}, [(1, "10000.00")], "0"),
        ({1: ROYAL_S, 2: ROYAL_H}, {"discards": [1, 2]}, [(1, "1000.00"), (2, "1000.00")], "8000"),
    ],
    # §6.8 progressive, b.1: the croupier keys in the hand's total; prizes as the fixed one.
    "EU_PCD_JACKPOT_PROGRESSIVE_MANUAL": [
        ({1: ROYAL_S, 2: FOUR_3}, {"discards": [1]}, [(2, "500.00"), (1, "950.00")], "8550"),
        ({1: SF_9_H, 2: SF_9_S}, {}, [(1, "1000.00"), (2, "1000.00")], "8000"),
    ],
    # §6.8 progressive, b.2: each seat's chip slot contributes.
    "EU_PCD_JACKPOT_PROGRESSIVE_AUTOMATIC": [
        ({1: ROYAL_S}, {}, [(1, "10000.00")], "0"),
        ({3: FOUR_Q}, {"discards": [3]}, [(3, "50.00")], "9950"),
    ],
    # §6.9 AN10 interconnection of the poker modalities: a tripóquer table's three cards plus the two
    # community cards make the five-card hand, paid by the AN10 carousel.
    "AN10_POKER_INTERCONNECTED": [
        # The royal takes the whole carousel; the full house (100 × the bet) is then paid by the operator.
        (
            {1: "AH KH QH", 2: "JS TD TC"},
            {"game": "tripoquer", "community": "JH TH"},
            [(1, "10000.00"), (2, "100.00")],
            "0",
        ),
        (
            {1: "9S 8S 7S", 2: "4D 4C 2H"},
            {"game": "tripoquer", "community": "6S 5S"},
            [(1, "1000.00")],
            "9000",
        ),
        ({1: SF_K, 2: FULL}, {}, [(1, "1000.00"), (2, "100.00")], "8900"),
    ],
    # §6.11.3 AN10 bolsa: only the highest combination of each hand; 2 / 10 / 100 / 200 to 1 and the bolsa.
    "AN10_BJ_BOLSA": [
        (
            {1: "7H 7H", 2: "7C 2D", 3: "7S 7D 7S", 4: "KH 7H", 5: "7D 7C"},
            {},
            [(3, "200.00"), (1, "100.00"), (5, "10.00"), (2, "2.00")],
            "9688",
        ),
        ({2: "7S 7S 7S"}, {}, [(2, "10000.00")], "0"),
    ],
    # §6.11.4 EU apuesta acumulada: two suited sevens 50 to 1 (OP-20).
    "EU_BJ_APUESTA_ACUMULADA": [
        ({1: "7H 7H", 2: "7C", 3: "7D 7S 7D"}, {}, [(3, "200.00"), (1, "50.00"), (2, "2.00")], "9748"),
        ({6: "7C 7C 7C"}, {}, [(6, "10000.00")], "0"),
    ],
}

CASES = [
    pytest.param(pack, cards, options, expected, after, id=f"{pack}-{n}")
    for pack, scenarios in SCENARIOS.items()
    for n, (cards, options, expected, after) in enumerate(scenarios)
]


@pytest.mark.parametrize(("pack", "cards", "options", "expected", "after"), CASES)
def test_known_cards_pay_as_the_spec_says(casino, pack, cards, options, expected, after) -> None:
    house = casino(PACKS[pack].jurisdiction)
    game = options.get("game")
    table = house.table(pack, **({"game": game} if game else {}))
    hand = play(
        table,
        house.croupier,
        cards,
        discards=options.get("discards", ()),
        extra=options.get("extra", ()),
        community=options.get("community"),
    )
    assert hand.state == HandState.SETTLED
    assert payouts(hand) == [(seat, D(amount)) for seat, amount in expected]
    assert hand.meter_before == (METER if expected else None)
    if expected:
        assert hand.meter_after_payouts == D(after)
        # Below its seed, the meter is reset (reserve first, then an operator seed, OP-23).
        assert meter(table.pool) == max(D(after), table.pool.levels.get().seed)
    else:
        assert meter(table.pool) == METER
    for payout in SeatPayout.objects.filter(hand=hand):
        assert payout.amount == payout.amount.quantize(D("0.01"))
        assert payout.award.amount == payout.amount
        assert payout.award.seat == str(payout.seat)


def test_worked_example_two_straight_flushes_read_back_through_the_hand(casino) -> None:
    """§6.6: SF K-high (A) and SF 8-high (B): A 1,000 → meter 9,000; B 10 % of 9,000 = 900 → 8,100."""
    house = casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL")
    hand = play(table, house.croupier, {1: SF_8, 7: SF_K})
    rows = {p.seat: p for p in SeatPayout.objects.filter(hand=hand)}
    assert (rows[7].order, rows[7].amount, rows[7].basis) == (0, D("1000.00"), METER)
    assert (rows[1].order, rows[1].amount, rows[1].basis) == (1, D("900.00"), D("9000"))
    assert hand.settlement is not None
    assert hand.settlement.meter_after_payouts == D("8100")


def test_a_forfeited_bet_still_contributed_but_wins_nothing(casino) -> None:
    """JP-EU11-09: the purchase forfeits the jackpot bet; the bet itself was made and stays in the pool."""
    house = casino("EU")
    table = house.table("EU_PSD_JACKPOT", rate=D("0.5"))
    hand = play(table, house.croupier, {1: ROYAL_S}, extra=[1])
    bet = SeatBet.objects.get(hand=hand, seat=1)
    assert (bet.extra_card, bet.forfeited, bet.forfeit_reason) == (True, True, "extra_card_purchase")
    assert payouts(hand) == []
    assert pool_meter(table.pool).levels[0].amount == METER + BET / 2


def test_tripoquer_with_its_authorised_three_card_paytable(casino) -> None:
    """§6.9 / OP-30: tripóquer's own carousel pays once the authorised paytable is loaded (three-card
    ranking: a straight beats a flush, three of a kind beats a straight)."""
    house = casino("AN10")
    paytable = [
        {"category": "straight_flush", "percent": "100"},
        {"category": "three_of_a_kind", "multiple": "30"},
        {"category": "straight", "multiple": "5"},
        {"category": "flush", "multiple": "4"},
    ]
    table = house.table("AN10_TRIPOQUER_CARRUSEL", paytable=paytable)
    hand = play(
        table, house.croupier, {1: "QS JS TS", 2: "8D 8C 8H", 3: "4H 5C 6D", 4: "2C 9C KC", 5: "AH AD 3C"}
    )
    assert payouts(hand) == [(1, D("10000.00")), (2, D("30.00")), (3, D("5.00")), (4, D("4.00"))]


def test_a_royal_flush_split_leaves_the_fraction_and_resets_to_the_seed(casino) -> None:
    """Three equal royals cannot share 10,000.01 € in whole cents: each gets 3,333.33, a cent stays."""
    house = casino("ML")
    table = house.table("ML_PSD_CARRUSEL", start=D("10000.01"))
    hand = play(table, house.croupier, {1: ROYAL_S, 2: ROYAL_H, 3: ROYAL_D})
    assert payouts(hand) == [(1, D("3333.33")), (2, D("3333.33")), (3, D("3333.33"))]
    assert hand.meter_after_payouts == D("0.02")
