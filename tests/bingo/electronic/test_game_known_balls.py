"""A game with a known ball sequence (issue 13): Line, Bingo, two figures and an accumulated prize with a max
ball; every prize paid to exactly the cards and at the ball the prize table says, shares to the cent, the
player balances, the ledger and the pool exact."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bingo.electronic.layouts import NINETY
from bingo.electronic.models import EBall, EGameState, EPrize, EWin
from bingo.electronic.services import games, specialities
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, LedgerTransaction, TxKind
from halls.cashier.services import ledger
from halls.cashier.services import player_cards as card_services
from jackpots.services import reports
from tests.bingo.electronic.support import (
    RULES_90,
    buy,
    draw_to_end,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)

pytestmark = pytest.mark.django_db


def card(r0: list[int], r1: list[int], r2: list[int]) -> tuple[int, ...]:
    face = tuple(sorted(r0) + sorted(r1) + sorted(r2))
    assert NINETY.problems(face) == []
    return face


# Every card: row 1 on columns 0-4, row 2 on columns 1, 3, 5, 6, 7 (its middle cell, the X's centre, is the
# 50s), row 3 on columns 0, 2, 5, 7, 8. Cards 4 and 6 differ in two numbers only; 7 is card 2 but for one.
C1 = card([1, 10, 20, 30, 40], [11, 31, 50, 60, 70], [3, 21, 51, 71, 80])
C2 = card([2, 12, 22, 32, 40], [13, 33, 52, 61, 72], [4, 23, 53, 73, 81])
C3 = card([5, 14, 24, 34, 41], [15, 35, 54, 62, 74], [6, 25, 55, 75, 82])
C4 = card([7, 16, 26, 36, 42], [17, 37, 56, 63, 76], [8, 27, 57, 77, 83])
C5 = card([7, 18, 28, 38, 42], [19, 39, 56, 64, 78], [8, 29, 58, 79, 83])
C6 = card([7, 16, 26, 36, 42], [17, 37, 56, 65, 76], [8, 27, 59, 77, 83])
C7 = card([2, 12, 22, 32, 43], [13, 33, 52, 61, 72], [4, 23, 53, 73, 81])

BALLS = [
    *(1, 10, 20, 30, 2, 12, 22, 32, 40),  # 9: the first row of C1 and of C2 -> Línea shared
    *(5, 41, 6, 82),  # 13: C3's corners -> Esquinas
    *(7, 42, 8, 83),  # 17: the corners of C4, C5 and C6 (decided already)
    56,  # 18: their centre -> Aspa shared by three
    *(13, 33, 52, 61, 72, 4, 23, 53, 73, 43),  # C2's and C7's other numbers
    81,  # 29: C2 and C7 full -> Bingo and Acumulado (max ball 40) shared
]


def test_every_prize_paid_to_the_right_cards_at_the_right_ball(
    venue, operator, cashier, django_capture_on_commit_callbacks
) -> None:
    speciality = make_speciality(venue, operator)
    t1, _ = make_terminal(speciality, operator)
    t2, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    p1, p2, p3 = (funded_card(venue, cashier) for _ in range(3))
    with enqueued() as steps:
        games.set_running(speciality=speciality, running=True, actor=operator)
        game = speciality.games.get()
        assert game.state == EGameState.SELLING and game.number == 1
        _, (k1, k3, k5) = buy(game, t1, p1, [C1, C3, C5], "a")
        _, (k2, k4) = buy(game, t2, p2, [C2, C4], "b")
        _, (k6, k7) = buy(game, t1, p3, [C6, C7], "c")
        with forced_balls(BALLS):
            with django_capture_on_commit_callbacks(execute=True):
                closed = games.close_sales(game, early=True)
            assert closed is not None and closed.state == EGameState.DRAWING
            assert closed.cards_sold == 7 and closed.sales_total == Decimal("3.50")
            assert closed.terms["meters"] == {"acumulado": "100.070000"}
            game = draw_to_end(game)
    assert steps[0][:2] == (game.pk, 1)
    assert game.state == EGameState.CLOSED and game.balls_drawn == 29
    assert list(EBall.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True)) == BALLS

    prizes = {p.code: p for p in EPrize.objects.filter(game=game)}
    expected = {
        # code: (ordinal, cards, amount, share, remainder)
        "linea": (9, {k1, k2}, "0.35", "0.17", "0.01"),
        "esquinas": (13, {k3}, "1.00", "1.00", "0.00"),
        "aspa": (18, {k4, k5, k6}, "2.00", "0.66", "0.02"),
        "bingo": (29, {k2, k7}, "1.75", "0.87", "0.01"),
        "acumulado": (29, {k2, k7}, "100.07", "50.03", "0.01"),
    }
    assert set(prizes) == set(expected)
    for code, (ordinal, won_by, amount, share, remainder) in expected.items():
        prize = prizes[code]
        wins = {w.card_id: w.amount for w in EWin.objects.filter(prize=prize)}
        assert (prize.ordinal, set(wins), prize.won, prize.winners) == (
            ordinal,
            {c.pk for c in won_by},
            True,
            len(won_by),
        )
        assert (prize.amount, prize.share, prize.remainder) == (
            Decimal(amount),
            Decimal(share),
            Decimal(remainder),
        )
        assert set(wins.values()) == {Decimal(share)}
        assert prize.transaction is not None and prize.transaction.kind == TxKind.PRIZE_AWARD

    # P1: 3 cards, half the Línea, Esquinas, a third of the Aspa; P2: 2 cards, half the Línea, a third of the
    # Aspa, half the Bingo and half the Acumulado; P3: 2 cards, a third of the Aspa, half of both.
    assert card_services.balance(p1) == Decimal("20.00") - Decimal("1.50") + Decimal("0.17") + 1 + Decimal(
        "0.66"
    )
    assert card_services.balance(p2) == Decimal("20.00") - 1 + Decimal("0.17") + Decimal("0.66") + Decimal(
        "0.87"
    ) + Decimal("50.03")
    assert card_services.balance(p3) == Decimal("20.00") - 1 + Decimal("0.66") + Decimal("0.87") + Decimal(
        "50.03"
    )
    sales = Account.objects.get(venue=venue, kind=Kind.SALES)
    assert sales.balance == Decimal("3.50") - Decimal("0.34") - 1 - Decimal("1.98") - Decimal("1.74")
    funding = Account.objects.get(venue=venue, kind=Kind.POOL_FUNDING)
    assert funding.balance == Decimal("100.06")
    assert ledger.trial_balance(venue.pk).holds
    assert LedgerTransaction.objects.filter(kind=TxKind.PRIZE_AWARD).count() == 5

    # The pool paid 100.06 of its 100.07 and is back at its seed (its reserve first, the operator the rest).
    pool = specialities.pool_of(speciality, "acumulado").pool
    level = pool.levels.get(position=0)
    assert level.amount == Decimal("100.00") and level.total_paid == Decimal("100.06")
    report = reports.balance(pool)
    assert report.levels[0].closing == level.amount


def test_a_repeated_or_stale_step_is_a_no_op(venue, operator, cashier) -> None:
    speciality = make_speciality(venue, operator)
    t1, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    p1 = funded_card(venue, cashier)
    with enqueued():
        games.set_running(speciality=speciality, running=True, actor=operator)
        game = speciality.games.get()
        buy(game, t1, p1, [C1, C2], "a")
        with forced_balls(BALLS):
            games.close_sales(game, early=True)
            for ordinal in range(1, 10):
                assert games.draw_ball(game.pk, ordinal) is not None
            assert games.draw_ball(game.pk, 9) is None  # done
            assert games.draw_ball(game.pk, 11) is None  # not due
            assert games.draw_ball(game.pk, 1) is None
    assert EBall.objects.filter(game=game).count() == 9
    line = EPrize.objects.get(game=game, code="linea")
    assert line.ordinal == 9 and line.winners == 2 and line.share == Decimal("0.05")  # 10 % of 1.00
    assert LedgerTransaction.objects.filter(kind=TxKind.PRIZE_AWARD).count() == 1


@pytest.mark.parametrize(("golden", "won"), [(81, True), (80, False)])
def test_the_golden_ball_is_won_by_a_bingo_made_on_it(venue, operator, cashier, golden, won) -> None:
    rules = {
        **RULES_90,
        "prizes": [
            *RULES_90["prizes"],
            {"code": "oro", "name": "Bola de oro", "type": "golden_ball", "fixed": "5.00"},
        ],
    }
    speciality = make_speciality(venue, operator, rules=rules)
    terminal, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    with enqueued():
        games.set_running(speciality=speciality, running=True, actor=operator)
        game = speciality.games.get()
        _, (k2, k7) = buy(game, terminal, funded_card(venue, cashier), [C2, C7], "a")
        with forced_balls(BALLS, golden=golden):
            closed = games.close_sales(game, early=True)
            assert closed is not None and closed.terms["golden_ball"] == golden
            game = draw_to_end(game)
    prize = EPrize.objects.get(game=game, code="oro")
    assert (prize.ordinal, prize.won) == (29, won)  # the Bingo is made with ball 81, the 29th
    wins = set(EWin.objects.filter(prize=prize).values_list("card_id", "amount"))
    assert wins == ({(k2.pk, Decimal("2.50")), (k7.pk, Decimal("2.50"))} if won else set())
    assert ledger.trial_balance(venue.pk).holds
