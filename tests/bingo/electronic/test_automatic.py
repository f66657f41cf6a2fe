"""Automatic bingo (§4): Super Línea, Super Bingo and Bingo Extra won and not won around their max
extractions, the max extraction chosen from the game's total bets (AB-06/AB-09), and the Reserves
re-seeding a won accumulated prize (AB-11, OP-15)."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest

from bingo.electronic.models import EGameState, ElectronicGame, EPrize, EWin
from bingo.electronic.services import games, specialities
from halls.cashier.services import ledger
from halls.cashier.services import player_cards as card_services
from jackpots.models import PoolSettlement
from tests.bingo.electronic.support import (
    RULES_AUTOMATIC,
    buy,
    draw_to_end,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.bingo.electronic.test_game_known_balls import C1, C3

pytestmark = pytest.mark.django_db

A_ROW1, A_REST = list(C1[:5]), list(C1[5:])
# Numbers on neither card (C1 and C3 share none), to hold a prize back for as many balls as wanted.
FILLERS = [n for n in range(1, 91) if n not in C1 and n not in C3]


def play(
    venue: Any, operator: Any, cashier: Any, balls: list[int], rules: dict[str, Any] | None = None
) -> tuple[ElectronicGame, int]:
    """A game of automatic bingo: card C1 bought with one player card, C3 with another; `balls` drawn in
    order to the end. Returns the game and C1's card id."""
    speciality = make_speciality(venue, operator, rules=rules or RULES_AUTOMATIC)
    terminal, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    with enqueued():
        games.set_running(speciality=speciality, running=True, actor=operator)
        game = speciality.games.get()
        _, (a,) = buy(game, terminal, funded_card(venue, cashier), [C1], "a")
        buy(game, terminal, funded_card(venue, cashier), [C3], "b")
        with forced_balls(balls):
            games.close_sales(game, early=True)
            game = draw_to_end(game)
    assert game.state == EGameState.CLOSED
    return game, a.pk


def decided(game: ElectronicGame) -> dict[str, tuple[int, bool]]:
    return {p.code: (p.ordinal, p.won) for p in EPrize.objects.filter(game=game)}


def test_super_line_super_bingo_and_bingo_extra_won_within_their_max_extractions(
    venue, operator, cashier
) -> None:
    game, a = play(venue, operator, cashier, A_ROW1 + A_REST)  # line at 5 (max 7), bingo at 15 (max 35 / 40)
    assert game.terms["prizes"][2]["max_ball"] == 7  # 2.00 of bets: the first step
    assert decided(game) == {
        "linea": (5, True),
        "superlinea": (5, True),
        "bingo": (15, True),
        "superbingo": (15, True),
        "bingoextra": (15, True),
    }  # Gran Línea and Gran Bingo are network prizes: not in play, not decided
    speciality = game.speciality
    # Each pool paid its meter (seed + 1 %, 2 %, 1 % of 2.00) to C1's card, to the cent.
    paid = {p.code: p.share for p in EPrize.objects.filter(game=game, pool__isnull=False)}
    assert paid == {
        "superlinea": Decimal("50.02"),
        "superbingo": Decimal("500.04"),
        "bingoextra": Decimal("200.02"),
    }
    assert set(EWin.objects.filter(prize__game=game).values_list("card_id", flat=True)) == {a}
    owner = EWin.objects.filter(card_id=a)[0].purchase.player_card
    assert card_services.balance(owner) == Decimal("19.00") + Decimal("0.20") + Decimal("1.00") + Decimal(
        "750.08"
    )
    assert ledger.trial_balance(venue.pk).holds
    # Each pool is back at its seed: its reserve (0.5 % / 1 % of 2.00) first, the operator the rest.
    for code, seed, reserve in (("superlinea", "50.00", "0.01"), ("superbingo", "500.00", "0.02")):
        level = specialities.pool_of(speciality, code).pool.levels.get(position=0)
        settlement = PoolSettlement.objects.get(level=level)
        assert (level.amount, level.reserve) == (Decimal(seed), Decimal(0))
        assert settlement.reset_from_reserve == Decimal(reserve)
        assert settlement.operator_seed == Decimal(seed) - Decimal(reserve)


def test_past_their_max_extractions_they_are_not_won_and_their_pools_keep_the_money(
    venue, operator, cashier
) -> None:
    # Line at 12 (Super Línea's max is 7), bingo at 38 (Bingo Extra's max is 35, Super Bingo's 40).
    balls = FILLERS[:7] + A_ROW1 + FILLERS[7:23] + A_REST
    game, _ = play(venue, operator, cashier, balls)
    assert decided(game) == {
        "superlinea": (7, False),
        "linea": (12, True),
        "bingoextra": (35, False),
        "bingo": (38, True),
        "superbingo": (38, True),
    }
    speciality = game.speciality
    for code, meter in (("superlinea", "50.02"), ("bingoextra", "200.02")):
        level = specialities.pool_of(speciality, code).pool.levels.get(position=0)
        assert level.amount == Decimal(meter) and level.total_paid == 0
    assert EPrize.objects.get(game=game, code="superbingo").share == Decimal("500.04")
    assert ledger.trial_balance(venue.pk).holds


def test_bingo_past_super_bingos_max_wins_only_the_bingo(venue, operator, cashier) -> None:
    balls = A_ROW1 + FILLERS[:27] + A_REST  # bingo at 42
    game, _ = play(venue, operator, cashier, balls)
    assert decided(game) == {
        "linea": (5, True),
        "superlinea": (5, True),
        "bingoextra": (35, False),
        "superbingo": (40, False),
        "bingo": (42, True),
    }


@pytest.mark.parametrize(("price", "max_ball", "won"), [("1.00", 7, False), ("3.00", 9, True)])
def test_the_max_extraction_rises_with_the_total_bets(venue, operator, cashier, price, max_ball, won) -> None:
    rules = copy.deepcopy(RULES_AUTOMATIC)
    rules["card_price"] = price
    rules["prizes"][2]["max_ball_by_sales"] = [
        {"from_sales": "0", "max_ball": 7},
        {"from_sales": "5", "max_ball": 9},
    ]
    balls = FILLERS[:3] + A_ROW1 + A_REST  # the line at 8
    game, _ = play(venue, operator, cashier, balls, rules)
    assert game.terms["prizes"][2]["max_ball"] == max_ball
    assert decided(game)["superlinea"] == ((8, True) if won else (7, False))


def test_the_reserve_re_seeds_a_won_prize(venue, operator, cashier) -> None:
    rules = copy.deepcopy(RULES_AUTOMATIC)
    rules["card_price"] = "5.00"
    rules["prizes"][2]["pool"] = {"funding_percent": "5", "reserve_percent": "10", "seed": "1.00"}
    game, _ = play(venue, operator, cashier, A_ROW1 + A_REST, rules)
    # 10.00 of bets: the meter 1.00 + 0.50, the reserve 1.00; won whole at ball 5, re-seeded from the reserve.
    prize = EPrize.objects.get(game=game, code="superlinea")
    assert (prize.won, prize.amount, prize.share) == (True, Decimal("1.50"), Decimal("1.50"))
    level = specialities.pool_of(game.speciality, "superlinea").pool.levels.get(position=0)
    settlement = PoolSettlement.objects.get(level=level)
    assert (settlement.meter_before, settlement.meter_after_payouts) == (Decimal("1.50"), Decimal(0))
    assert (settlement.reset_from_reserve, settlement.operator_seed) == (Decimal("1.00"), Decimal(0))
    assert (level.amount, level.reserve) == (Decimal("1.00"), Decimal(0))
