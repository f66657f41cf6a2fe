"""The statements of an electronic ball step (issue 30), on PostgreSQL: a step that decides a prize (paid to
two cards of two player cards: the ledger, the prize and its wins, the audit, the events) in at most 10, a
plain ball step in at most 5; what they write is what the known-balls game expects."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bingo.electronic.models import EBall, EGameState, ElectronicGame, EPrize, EWin
from bingo.electronic.services import games
from halls.cashier.services import ledger
from halls.cashier.services import player_cards as card_services
from tests.bingo.electronic.support import (
    buy,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.bingo.electronic.test_game_known_balls import BALLS, C1, C2, C3, C4, C5, C6, C7

pytestmark = pytest.mark.django_db

PRIZE_STEP_MAX = 10
PLAIN_STEP_MAX = 5


def _step(game: ElectronicGame, ordinal: int, on_commit: Any) -> list[str]:
    """Ball `ordinal` drawn; the statements of its transaction (the test's own transaction makes the step's
    a savepoint: its SAVEPOINT and RELEASE are not the step's, in production they are BEGIN and COMMIT)."""
    with on_commit(execute=True), CaptureQueriesContext(connection) as captured:
        assert games.draw_ball(game.pk, ordinal) is not None
    sql = [q["sql"] for q in captured.captured_queries]
    assert sql[0].startswith("SAVEPOINT") and sql[-1].startswith("RELEASE SAVEPOINT")
    return sql[1:-1]


def test_a_prize_step_and_a_plain_step_in_few_statements(
    venue, operator, cashier, django_capture_on_commit_callbacks
) -> None:
    speciality = make_speciality(venue, operator)
    t1, _ = make_terminal(speciality, operator)
    t2, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    p1, p2, p3 = (funded_card(venue, cashier) for _ in range(3))
    with enqueued():
        games.set_running(speciality=speciality, running=True, actor=operator)
        game = speciality.games.get()
        _, (k1, _k3, _k5) = buy(game, t1, p1, [C1, C3, C5], "a")
        _, (k2, _k4) = buy(game, t2, p2, [C2, C4], "b")
        buy(game, t1, p3, [C6, C7], "c")
        with forced_balls(BALLS):
            with django_capture_on_commit_callbacks(execute=True):
                games.close_sales(game, early=True)
            for ordinal in range(1, 8):
                _step(game, ordinal, django_capture_on_commit_callbacks)
            plain = _step(game, 8, django_capture_on_commit_callbacks)
            before = (card_services.balance(p1), card_services.balance(p2))
            prize = _step(game, 9, django_capture_on_commit_callbacks)  # the Línea, shared by C1 and C2

    assert len(plain) <= PLAIN_STEP_MAX, "\n".join(plain)
    assert len(prize) <= PRIZE_STEP_MAX, "\n".join(prize)
    assert not any(s.startswith(("SAVEPOINT", "RELEASE")) for s in prize)

    game.refresh_from_db()
    assert (game.state, game.balls_drawn, game.decided) == (EGameState.DRAWING, 9, ["linea"])
    assert (
        list(EBall.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))
        == (BALLS[:9])
    )
    (linea,) = EPrize.objects.filter(game=game)
    assert (linea.code, linea.ordinal, linea.winners, linea.share) == ("linea", 9, 2, Decimal("0.17"))
    assert linea.transaction is not None
    wins = set(EWin.objects.filter(prize=linea).values_list("card_id", "amount"))
    assert wins == {(k1.pk, Decimal("0.17")), (k2.pk, Decimal("0.17"))}
    assert (card_services.balance(p1), card_services.balance(p2)) == (
        before[0] + Decimal("0.17"),
        before[1] + Decimal("0.17"),
    )
    assert ledger.trial_balance(venue.pk).holds
