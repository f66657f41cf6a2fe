"""The embedded hall on SQLite plays electronic bingo: the in-process Celery worker draws a whole game
from the CSPRNG after its sales close (the ball steps on the "draws" queue, the beat's tick beside them),
every prize decided and paid through the ledger, exact."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.db import connection

from bingo.electronic.layouts import NINETY
from bingo.electronic.models import EBall, EGameState, ElectronicGame, EPrize
from bingo.electronic.services import games
from demo.embedded import EmbeddedCelery, start_embedded_celery
from halls.cashier.services import ledger
from halls.models import Venue
from tests.bingo.electronic.support import (
    RULES_90,
    buy,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


@pytest.fixture
def embedded(transactional_db: None) -> Iterator[EmbeddedCelery]:
    assert connection.vendor == "sqlite"
    handle = start_embedded_celery()
    try:
        yield handle
    finally:
        handle.stop()  # before the test database is flushed: the worker thread holds a connection


def test_the_embedded_worker_plays_an_electronic_game(
    embedded: EmbeddedCelery, venue: Venue, operator: User, cashier: User
) -> None:
    speciality = make_speciality(
        venue, operator, rules={**RULES_90, "pace_seconds": "0.2", "sale_seconds": 300}
    )
    terminal, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    games.set_running(speciality=speciality, running=True, actor=operator)
    game = ElectronicGame.objects.get(speciality=speciality, number=1)
    buy(game, terminal, funded_card(venue, cashier), NINETY.deal(b"embedded-1", 12), "a")
    buy(game, terminal, funded_card(venue, cashier), NINETY.deal(b"embedded-2", 12), "b")
    games.close_sales(game, early=True)  # commits: the in-memory broker hands ball 1 to the worker

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        game.refresh_from_db()
        if game.state == EGameState.CLOSED:
            break
        time.sleep(0.2)
    assert game.state == EGameState.CLOSED and embedded.alive
    numbers = list(EBall.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))
    assert len(numbers) == len(set(numbers)) == game.balls_drawn
    prizes = {p.code: p for p in EPrize.objects.filter(game=game)}
    assert set(prizes) == {"linea", "bingo", "esquinas", "aspa", "acumulado"}
    for prize in prizes.values():
        paid = sum((w.amount for w in prize.wins.all()), start=prize.remainder)
        assert paid == (prize.amount if prize.won else 0)
    assert prizes["bingo"].won and prizes["bingo"].ordinal == game.balls_drawn
    assert ledger.trial_balance(venue.pk).holds
    # The beat's tick opened the next game meanwhile.
    assert ElectronicGame.objects.filter(speciality=speciality, number=2).exists()
