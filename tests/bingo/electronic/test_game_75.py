"""A game on the 75-ball card (5x5, free centre) drawn by the CSPRNG: each prize decided at the first ball at
which any card completes its pattern, to exactly the cards the plain reference says, and the game over with
its first full card."""

from __future__ import annotations

from typing import Any

import pytest

from bingo.electronic.detector import reference
from bingo.electronic.layouts import SEVENTY_FIVE
from bingo.electronic.models import EBall, EGameState, EPrize, EWin
from bingo.electronic.services import games
from halls.cashier.services import ledger
from tests.bingo.electronic.support import (
    buy,
    draw_to_end,
    enqueued,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)

pytestmark = pytest.mark.django_db

RULES_75: dict[str, Any] = {
    "family": "electronic",
    "layout": "75",
    "card_price": "0.25",
    "pace_seconds": "0.5",
    "sale_seconds": 30,
    "prizes": [
        {"code": "linea", "name": "Línea", "type": "line", "percent": "15"},
        {"code": "cruz", "name": "Cruz", "type": "figure", "figure": "cross", "percent": "10"},
        {"code": "marco", "name": "Marco", "type": "figure", "figure": "frame", "fixed": "3.00"},
        {"code": "bingo", "name": "Bingo", "type": "bingo", "percent": "45"},
        {
            "code": "acumulado",
            "name": "Acumulado",
            "type": "accumulated",
            "pool": {"funding_percent": "2", "reserve_percent": "1", "seed": "20.00"},
            "max_ball": 45,
        },
    ],
}
PATTERNS = {"linea": "line", "cruz": "cross", "marco": "frame", "bingo": "full", "acumulado": "full"}


def test_a_75_ball_game_pays_what_the_reference_says(venue, operator, cashier) -> None:
    speciality = make_speciality(venue, operator, rules=RULES_75)
    terminal, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    faces = SEVENTY_FIVE.deal(b"seventy-five", 40)
    with enqueued():
        games.set_running(speciality=speciality, running=True, actor=operator)
        game = speciality.games.get()
        _, rows = buy(game, terminal, funded_card(venue, cashier), faces[:20], "a")
        _, more = buy(game, terminal, funded_card(venue, cashier), faces[20:], "b")
        games.close_sales(game, early=True)
        game = draw_to_end(game, limit=75)
    assert game.state == EGameState.CLOSED
    balls = list(EBall.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))
    cards = {row.pk: face for row, face in zip([*rows, *more], faces, strict=True)}
    keys = set(PATTERNS.values())
    firsts = reference(SEVENTY_FIVE, cards, {k: SEVENTY_FIVE.pattern(k) for k in keys}, balls)
    bingo_at = min(firsts["full"].values())
    assert game.balls_drawn == bingo_at  # the game ends with its first full card
    for code, key in PATTERNS.items():
        first = min(firsts[key].values())
        winners = {card for card, at in firsts[key].items() if at == first}
        prize = EPrize.objects.get(game=game, code=code)
        if code == "acumulado" and first > 45:
            assert (prize.ordinal, prize.won) == (45, False)
            continue
        assert (prize.ordinal, prize.won) == (first, True)
        assert set(EWin.objects.filter(prize=prize).values_list("card_id", flat=True)) == winners
        assert prize.share * prize.winners + prize.remainder == prize.amount
    assert ledger.trial_balance(venue.pk).holds
