"""The table services: bet limits of the rule packs, bad input refused with nothing written, idempotent
retries, manual hand totals (EU b.1), the carrusel of several tables, and the open-play guard."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest

from halls.errors import Conflict, DomainError, InvalidInput
from halls.models import AuditEntry
from jackpots.models import Contribution, PoolLevel
from jackpots.rulepacks import PACKS
from jackpots.services import pools
from jackpots.services.contributions import contribute
from jackpots.services.readmodels.meters import pool_meter
from jackpots.sources import PoolSource
from jackpots.tables import rules
from jackpots.tables.models import Hand, HandState, SeatBet, SeatCards, TableState
from jackpots.tables.services import hands, tables
from tests.jackpots.tables.conftest import (
    BET,
    METER,
    make_pool,
    make_table,
    nothing_written,
    payouts,
    play,
    stands,
)

D = Decimal
SF_K, SF_8 = "KS QS JS TS 9S", "8H 7H 6H 5H 4H"
ROYAL_H = "AH KH QH JH TH"


def bet(seat: int, pool_bet: str = "1.00", initial: str = "10.00") -> rules.SeatBetInput:
    return rules.SeatBetInput(seat=seat, initial_bet=D(initial), pool_bet=D(pool_bet))


def refused(
    error: pytest.ExceptionInfo[DomainError], kind: type[DomainError], code: str, *words: str
) -> None:
    assert isinstance(error.value, kind), error.value
    assert error.value.code == code, (error.value.code, error.value.message)
    for word in words:
        assert word.lower() in error.value.message.lower(), (word, error.value.message)


def open_with_bets(table, actor, *seat_bets: rules.SeatBetInput) -> Hand:
    hand = hands.open_hand(table=table, actor=actor)
    return hands.register_bets(hand=hand, actor=actor, bets=list(seat_bets)) if seat_bets else hand


# --- bet limits -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pack", ["ML_PSD_CARRUSEL", "ML_PSD_PROGRESIVO", "CT_PSD_PROGRESSIU", "EU_PSD_JACKPOT"]
)
def test_a_pool_bet_above_half_the_table_minimum_is_refused(casino, pack) -> None:
    """PR-ML-6, PR-CT-6, JP-EU11-05 (ML art. 61 by OP-21): at most half the table minimum (10 € -> 5 €).
    These pools state no single bet, so any amount up to the cap is taken."""
    house = casino(PACKS[pack].jurisdiction)
    table = house.table(pack, bet=None)
    hand = hands.open_hand(table=table, actor=house.croupier)
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(1, "5.00"), bet(2, "5.01")])
    refused(error, InvalidInput, "pool_bet_over_limit", "seat 2", "5.01", "half of the table minimum")
    hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(1, "5.00")])
    assert SeatBet.objects.get(hand=hand, seat=1).pool_bet == D("5.00")


def test_the_eu_blackjack_cap_and_the_stipulated_bet(casino) -> None:
    """BJ-EU-2: never above half the table minimum; the pool states its single bet (OP-37)."""
    house = casino("EU")
    table = house.table("EU_BJ_APUESTA_ACUMULADA")
    hand = hands.open_hand(table=table, actor=house.croupier)
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(1, "6.00")])
    refused(error, InvalidInput, "pool_bet_over_limit")
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(1, "2.00")])
    refused(error, InvalidInput, "pool_bet_not_stipulated", "1.00")


def test_a_table_whose_minimum_is_too_low_for_the_pool_bet_cannot_join(casino) -> None:
    house = casino("EU")
    pool = make_pool(house.venue, house.operator, "EU_PSD_JACKPOT", bet=D("3.00"))
    table = make_table(house.venue, house.operator, "EU_PSD_JACKPOT", minimum=D("5.00"))
    with nothing_written(), pytest.raises(DomainError) as error:
        tables.join_pool(table=table, pool=pool, actor=house.operator)
    refused(error, InvalidInput, "pool_bet_over_limit", "2.50")


@pytest.mark.parametrize(
    ("jurisdiction", "pack"), [("AN10", "AN10_PSD_CARRUSEL"), ("EU", "EU_PCD_JACKPOT_FIXED")]
)
def test_a_pool_bet_without_the_initial_bet_is_refused(casino, jurisdiction, pack) -> None:
    """CJ-AN10-05, JP-EU12-06: the initial bet is an indispensable condition."""
    house = casino(jurisdiction)
    table = house.table(pack)
    hand = hands.open_hand(table=table, actor=house.croupier)
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(1), bet(3, initial="0")])
    refused(error, InvalidInput, "initial_bet_required", "seat 3")


def test_where_the_pack_does_not_require_it_a_pool_bet_stands_alone(casino) -> None:
    house = casino("ML")
    table = house.table("ML_PSD_CARRUSEL")
    hand = open_with_bets(table, house.croupier, bet(2, initial="0"))
    hand = hands.register_cards(hand=hand, actor=house.croupier, seats=[stands(SF_K, 2)])
    hand = hands.settle_hand(hand=hand, actor=house.croupier)
    assert payouts(hand) == [(2, D("1000.00"))]


def test_an_extra_card_forfeits_in_euskadi_but_not_in_melilla(casino) -> None:
    """JP-EU11-09 forfeits (recorded, not refused); ML art. 62.2 counts the first five cards."""
    eu, ml = casino("EU"), casino("ML")
    eu_hand = play(eu.table("EU_PSD_JACKPOT"), eu.croupier, {1: SF_K}, extra=[1])
    ml_hand = play(ml.table("ML_PSD_PROGRESIVO"), ml.croupier, {1: SF_K}, extra=[1])
    assert payouts(eu_hand) == []
    assert SeatBet.objects.get(hand=eu_hand).forfeit_reason == rules.EXTRA_CARD_FORFEIT
    assert payouts(ml_hand) == [(1, D("1000.00"))]
    assert not SeatBet.objects.get(hand=ml_hand).forfeited
    entry = AuditEntry.objects.filter(action="hand.cards_registered", object_id=str(eu_hand.pk)).get()
    assert entry.data["forfeited"] == [{"seat": 1, "reason": "extra_card_purchase"}]


def test_draw_poker_has_discards_and_no_extra_card_stud_poker_the_reverse(casino) -> None:
    eu = casino("EU")
    draw = eu.table("EU_PCD_JACKPOT_PROGRESSIVE_AUTOMATIC")
    stud = eu.table("EU_PSD_JACKPOT")
    draw_hand = open_with_bets(draw, eu.croupier, bet(1))
    stud_hand = open_with_bets(stud, eu.croupier, bet(1))
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_cards(hand=draw_hand, actor=eu.croupier, seats=[stands(SF_K, 1, extra=True)])
    refused(error, InvalidInput, "no_extra_card")
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_cards(hand=stud_hand, actor=eu.croupier, seats=[stands(SF_K, 1, discard=True)])
    refused(error, InvalidInput, "no_discard")


def test_pool_bets_close_once_cards_are_dealt(casino) -> None:
    """JP-EU12-03 / BJ-AN10-3: the pool bet goes in before the cards are dealt."""
    house = casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL")
    hand = open_with_bets(table, house.croupier, bet(1))
    hands.register_cards(hand=hand, actor=house.croupier, seats=[stands(SF_8, 1)])
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(2)])
    refused(error, Conflict, "bets_closed")


# --- bad input: refused, nothing written --------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "code", "word"),
    [
        ("AS KS QS JS 1S", "invalid_cards", "1S"),
        ("AS KS QS JS 10S", "invalid_cards", "ten"),
        ("as ks qs js ts", "invalid_cards", "rank"),
        ("AS KS QS JS", "wrong_card_count", "4 cards"),
        ("AS KS QS JS TS 9S", "wrong_card_count", "6 cards"),
        ("AS KS QS JS AS", "duplicate_card", "AS"),
        ("8H 2C 3D 4S 5S", "duplicate_card", "8H"),  # 8H is seat 1's
    ],
)
def test_invalid_or_duplicate_cards_are_refused(casino, cards, code, word) -> None:
    house = casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL")
    hand = open_with_bets(table, house.croupier, bet(1), bet(2))
    hands.register_cards(hand=hand, actor=house.croupier, seats=[stands(SF_8, 1)])
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_cards(hand=hand, actor=house.croupier, seats=[stands(cards, 2)])
    refused(error, InvalidInput, code, word)


def test_one_bad_seat_refuses_the_whole_request(casino) -> None:
    house = casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL")
    hand = open_with_bets(table, house.croupier, bet(1), bet(2))
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_cards(
            hand=hand, actor=house.croupier, seats=[stands(SF_K, 1), stands("KS 2C 3D 4S 5S", 2)]
        )
    refused(error, InvalidInput, "duplicate_card", "KS", "seat 1", "seat 2")


def test_blackjack_shoes_hold_six_decks(casino) -> None:
    house = casino("AN10")
    table = house.table("AN10_BJ_BOLSA")
    hand = play(table, house.croupier, {1: "7H 7H 7H", 2: "7H 7H"})
    assert payouts(hand) == [(1, D("10000.00")), (2, D("100.00"))]
    hand = open_with_bets(table, house.croupier, bet(1))
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_cards(hand=hand, actor=house.croupier, seats=[stands("7H 7H 7H 7H", 1)])
    refused(error, InvalidInput, "wrong_card_count")


def test_an_unknown_seat_is_refused(casino) -> None:
    house = casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL")
    hand = hands.open_hand(table=table, actor=house.croupier)
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(1), bet(8)])
    refused(error, InvalidInput, "unknown_seat", "seat 8", "1 to 7")
    hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(1)])
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_cards(hand=hand, actor=house.croupier, seats=[stands(SF_K, 0)])
    refused(error, InvalidInput, "unknown_seat")


def test_cards_of_a_seat_without_a_pool_bet_are_refused(casino) -> None:
    house = casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL")
    hand = open_with_bets(table, house.croupier, bet(1))
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_cards(hand=hand, actor=house.croupier, seats=[stands(SF_K, 4)])
    refused(error, Conflict, "no_pool_bet", "seat 4")


def test_settling_twice_is_refused_and_writes_nothing(casino) -> None:
    house = casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL")
    hand = play(table, house.croupier, {1: SF_K})
    before = pool_meter(table.pool).levels[0].amount
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.settle_hand(hand=hand, actor=house.croupier)
    refused(error, Conflict, "hand_settled", "settled")
    assert pool_meter(table.pool).levels[0].amount == before
    commands: list[Callable[[], object]] = [
        lambda: hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(2)]),
        lambda: hands.register_cards(hand=hand, actor=house.croupier, seats=[stands(SF_8, 1)]),
        lambda: hands.void_hand(hand=hand, actor=house.croupier, reason="late"),
    ]
    for command in commands:
        with nothing_written(), pytest.raises(DomainError) as error:
            command()
        refused(error, Conflict, "hand_settled")


def test_a_void_hand_pays_nothing_and_keeps_its_contributions(casino) -> None:
    house = casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL", rate=D("0.5"))
    hand = open_with_bets(table, house.croupier, bet(1), bet(2))
    hands.register_cards(hand=hand, actor=house.croupier, seats=[stands(ROYAL_H, 1)])
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.void_hand(hand=hand, actor=house.croupier, reason="  ")
    refused(error, InvalidInput, "reason_required")
    hand = hands.void_hand(hand=hand, actor=house.croupier, reason="misdeal")
    assert hand.state == HandState.VOID
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.settle_hand(hand=hand, actor=house.croupier)
    refused(error, Conflict, "hand_void")
    assert pool_meter(table.pool).levels[0].amount == METER + D("1.00")
    entry = AuditEntry.objects.get(action="hand.voided", object_id=str(hand.pk))
    assert entry.data["contributed"] == "2.00"


def test_one_open_hand_per_table_and_only_at_an_open_table_with_a_pool(casino) -> None:
    house = casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL")
    hand = hands.open_hand(table=table, actor=house.croupier)
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.open_hand(table=table, actor=house.croupier)
    refused(error, Conflict, "hand_open", f"hand {hand.number}")
    with nothing_written(), pytest.raises(DomainError) as error:
        tables.set_table_state(table=table, state=TableState.CLOSED, actor=house.operator, reason="test")
    refused(error, Conflict, "hand_open")
    hands.void_hand(hand=hand, actor=house.croupier, reason="test")
    tables.set_table_state(table=table, state=TableState.CLOSED, actor=house.operator, reason="test")
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.open_hand(table=table, actor=house.croupier)
    refused(error, Conflict, "table_closed")
    lone = make_table(house.venue, house.operator, "AN10_PSD_CARRUSEL")
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.open_hand(table=lone, actor=house.croupier)
    refused(error, Conflict, "no_pool")


def test_tables_and_pools_must_fit_their_rule_pack(casino) -> None:
    house = casino("AN10")
    with nothing_written(), pytest.raises(DomainError) as error:
        make_table(house.venue, house.operator, "AN10_BJ_BOLSA", game="poker_sin_descarte")
    refused(error, InvalidInput, "pack_not_for_game", "blackjack")
    with nothing_written(), pytest.raises(DomainError) as error:
        make_table(house.venue, house.operator, "EU_PSD_JACKPOT")
    refused(error, InvalidInput, "rule_pack_jurisdiction")
    tripoquer = make_table(house.venue, house.operator, "AN10_POKER_INTERCONNECTED", game="tripoquer")
    pool = make_pool(house.venue, house.operator, "AN10_PSD_CARRUSEL")
    with nothing_written(), pytest.raises(DomainError) as error:
        tables.join_pool(table=tripoquer, pool=pool, actor=house.operator)
    refused(error, InvalidInput, "pool_pack_mismatch")
    awaiting = make_pool(house.venue, house.operator, "AN10_TRIPOQUER_CARRUSEL")
    tri = make_table(house.venue, house.operator, "AN10_TRIPOQUER_CARRUSEL")
    with nothing_written(), pytest.raises(DomainError) as error:
        tables.join_pool(table=tri, pool=awaiting, actor=house.operator)
    refused(error, Conflict, "paytable_awaiting_authorisation", "OP-30")


def test_a_tripoquer_hand_of_the_interconnected_carrusel_needs_its_community_cards(casino) -> None:
    house = casino("AN10")
    table = house.table("AN10_POKER_INTERCONNECTED", game="tripoquer")
    hand = open_with_bets(table, house.croupier, bet(1), bet(2))
    hands.register_cards(hand=hand, actor=house.croupier, seats=[stands("AH KH QH", 1)])
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.settle_hand(hand=hand, actor=house.croupier)
    refused(error, Conflict, "community_cards_missing")
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_cards(hand=hand, actor=house.croupier, community="JH QH")
    refused(error, InvalidInput, "duplicate_card", "QH", "community")
    hands.register_cards(hand=hand, actor=house.croupier, community="JH TH")
    assert SeatCards.objects.get(hand=hand, seat=1).category == "royal_flush"  # ranked once the board is in
    hands.register_cards(hand=hand, actor=house.croupier, seats=[stands("2C 2D 2S", 2)])
    hand = hands.settle_hand(hand=hand, actor=house.croupier)
    assert payouts(hand) == [(1, D("10000.00"))]


# --- idempotent retries -----------------------------------------------------------------------------------


def test_a_retried_open_bets_and_cards_change_nothing(casino) -> None:
    house = casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL", rate=D("0.5"))
    hand = hands.open_hand(table=table, actor=house.croupier, idempotency_key="console-1")
    with nothing_written():
        assert hands.open_hand(table=table, actor=house.croupier, idempotency_key="console-1").pk == hand.pk
    hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(1), bet(2)])
    with nothing_written():
        hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(1), bet(2)])
    # One new seat with one retried seat: only the new one is written and contributes.
    hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(2), bet(3)])
    contributions = Contribution.objects.filter(pool=table.pool).order_by("id")
    assert [c.idempotency_key for c in contributions] == [
        rules.seat_contribution_key(table.pk, hand.pk, seat) for seat in (1, 2, 3)
    ]
    assert [c.source for c in contributions] == [f"table:{table.pk}/hand:1/seat:{s}" for s in (1, 2, 3)]
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_bets(hand=hand, actor=house.croupier, bets=[bet(2, initial="20.00")])
    refused(error, Conflict, "bet_already_registered", "seat 2")
    hands.register_cards(hand=hand, actor=house.croupier, seats=[stands(SF_K, 1)])
    with nothing_written():
        hands.register_cards(hand=hand, actor=house.croupier, seats=[stands("KS,QS,JS,TS,9S", 1)])
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_cards(hand=hand, actor=house.croupier, seats=[stands(SF_8, 1)])
    refused(error, Conflict, "cards_already_registered", "seat 1")
    # The engine's key for a seat is derived from (table, hand, seat): a device retry through the engine
    # itself is a replay, not a second contribution.
    again = contribute(
        pool=table.pool,
        source=PoolSource.of("table", table.pk).at("hand", 1).at("seat", 1),
        bet=BET,
        idempotency_key=rules.seat_contribution_key(table.pk, hand.pk, 1),
        actor="retry",
    )
    assert again.replayed
    assert pool_meter(table.pool).levels[0].amount == METER + D("1.50")


# --- EU b.1: the croupier keys in the hand's total ----------------------------------------------------------


def test_manual_entry_contributes_the_hands_total_once(casino) -> None:
    house = casino("EU")
    table = house.table("EU_PCD_JACKPOT_PROGRESSIVE_MANUAL", rate=D("0.25"))
    hand = open_with_bets(table, house.croupier, bet(1), bet(2), bet(5))
    assert not Contribution.objects.filter(pool=table.pool).exists()  # the seats only say who bet
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_bets(hand=hand, actor=house.croupier, total=D("2.00"))
    refused(error, InvalidInput, "manual_total_mismatch", "3.00")
    hands.register_cards(hand=hand, actor=house.croupier, seats=[stands(SF_K, 1)])
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.settle_hand(hand=hand, actor=house.croupier)
    refused(error, Conflict, "manual_total_missing")
    hands.register_bets(hand=hand, actor=house.croupier, total=D("3.00"))
    with nothing_written():
        hands.register_bets(hand=hand, actor=house.croupier, total=D("3.00"))
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_bets(hand=hand, actor=house.croupier, total=D("4.00"))
    refused(error, Conflict, "manual_total_registered")
    contribution = Contribution.objects.get(pool=table.pool)
    assert (contribution.bet, contribution.to_meter) == (D("3.00"), D("0.75"))
    assert contribution.source == f"table:{table.pk}/hand:1/total"
    hand = hands.settle_hand(hand=hand, actor=house.croupier)
    assert payouts(hand) == [(1, D("1000.07"))]  # 10 % of 10,000.75
    assert hand.manual_total == D("3.00")


def test_a_hand_total_is_only_for_manual_entry(casino) -> None:
    house = casino("EU")
    table = house.table("EU_PCD_JACKPOT_PROGRESSIVE_AUTOMATIC")
    hand = hands.open_hand(table=table, actor=house.croupier)
    with nothing_written(), pytest.raises(DomainError) as error:
        hands.register_bets(hand=hand, actor=house.croupier, total=D("3.00"))
    refused(error, InvalidInput, "not_manual_entry")


# --- the carrusel of several tables, and the open-play guard -------------------------------------------


def test_a_carrusel_of_several_tables_shares_one_meter(casino) -> None:
    house = casino("AN10")
    pool = make_pool(house.venue, house.operator, "AN10_PSD_CARRUSEL", rate=D("0.5"))
    one = make_table(house.venue, house.operator, "AN10_PSD_CARRUSEL", pool=pool)
    two = make_table(house.venue, house.operator, "AN10_PSD_CARRUSEL", pool=pool)
    first = play(one, house.croupier, {1: SF_K, 2: "2C 3C 4C 5C 7D"}, settle=False)
    play(two, house.croupier, {4: SF_8})
    # Table two's straight flush: 10 % of 10,000 + the three bets' meter shares (1.50) = 1,000.15.
    assert payouts(Hand.objects.get(table=two)) == [(4, D("1000.15"))]
    first = hands.settle_hand(hand=first, actor=house.croupier)
    assert payouts(first) == [(1, D("900.13"))]  # 10 % of 9,001.35 on the shared meter
    assert first.meter_before == D("9001.350000")
    assert pool_meter(pool).levels[0].amount == D("8101.22")


def test_parameters_cannot_change_while_a_hand_is_open_at_a_member_table(casino) -> None:
    house = casino("AN10")
    pool = make_pool(house.venue, house.operator, "AN10_PSD_CARRUSEL")
    make_table(house.venue, house.operator, "AN10_PSD_CARRUSEL", pool=pool)
    other = make_table(house.venue, house.operator, "AN10_PSD_CARRUSEL", pool=pool)
    hand = hands.open_hand(table=other, actor=house.croupier)
    level = PoolLevel.objects.get(pool=pool)
    with nothing_written(), pytest.raises(DomainError) as error:
        pools.change_parameters(
            level=level,
            changes={"contribution_rate": D("0.1")},
            actor=house.operator,
            authorisation_ref="A-1",
        )
    refused(error, Conflict, "pool_in_play", f"hand {hand.number} is open at {other}")
    hands.settle_hand(hand=hand, actor=house.croupier)
    pools.change_parameters(
        level=level, changes={"contribution_rate": D("0.1")}, actor=house.operator, authorisation_ref="A-1"
    )
    level.refresh_from_db()
    assert level.contribution_rate == D("0.1")


def test_a_table_leaves_its_pool_only_between_hands(casino) -> None:
    house = casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL")
    hand = hands.open_hand(table=table, actor=house.croupier)
    with nothing_written(), pytest.raises(DomainError) as error:
        tables.leave_pool(table=table, actor=house.operator)
    refused(error, Conflict, "hand_open")
    hands.void_hand(hand=hand, actor=house.croupier, reason="end of the day")
    pool = table.pool
    table = tables.leave_pool(table=table, actor=house.operator)
    assert table.pool is None
    with pytest.raises(DomainError) as error:
        contribute(
            pool=pool,
            source=PoolSource.of("table", table.pk).at("x"),
            bet=BET,
            idempotency_key="late",
            actor="device",
        )
    refused(error, InvalidInput, "source_not_member")
