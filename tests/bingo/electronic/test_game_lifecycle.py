"""The life of a speciality's games under the beat's tick: started only while running with a session open,
sales closed when due, a game with no card closing at once, the next game selling while one draws and
waiting for it, the version in force, and stalled draws re-enqueued."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from bingo.electronic.models import EGameState, ElectronicGame
from bingo.electronic.services import games, specialities
from config import health
from halls import leases
from halls.events import current_seq
from tests.bingo.electronic.support import (
    RULES_90,
    buy,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.bingo.electronic.test_game_known_balls import BALLS, C1, C2

pytestmark = pytest.mark.django_db


def states(speciality: Any) -> list[tuple[int, str, bool]]:
    return [
        (g.number, g.state, g.sales_closed_at is not None)
        for g in ElectronicGame.objects.filter(speciality=speciality).order_by("number")
    ]


def test_games_start_only_while_running_with_a_session_open(venue, operator) -> None:
    speciality = make_speciality(venue, operator)
    assert games.tick().started == []  # not running
    games.set_running(speciality=speciality, running=True, actor=operator)
    assert games.tick().started == [] and not speciality.games.exists()  # no session
    open_verified_session(speciality, operator)
    started = games.tick().started
    game = speciality.games.get()
    assert started == [game.pk] and game.state == EGameState.SELLING and game.number == 1
    assert game.sales_close_at == game.created_at + timedelta(seconds=RULES_90["sale_seconds"])
    assert games.tick().started == []  # one game sells at a time
    games.set_running(speciality=speciality, running=False, actor=operator)
    with enqueued():
        games.tick(now=game.sales_close_at + timedelta(seconds=1))
    assert states(speciality) == [(1, EGameState.CLOSED, True)]  # no card sold: closed at once, no next game


def test_a_game_without_cards_closes_when_due_and_the_next_one_opens(venue, operator) -> None:
    speciality = make_speciality(venue, operator)
    open_verified_session(speciality, operator)
    games.set_running(speciality=speciality, running=True, actor=operator)
    game = speciality.games.get()
    seq = current_seq(speciality.stream)
    assert games.tick(now=game.sales_close_at - timedelta(seconds=1)).closed == []
    done = games.tick(now=game.sales_close_at)
    game.refresh_from_db()
    assert done.closed == [game.pk] and game.state == EGameState.CLOSED and game.balls_drawn == 0
    assert game.cards_sold == 0 and all(not p["in_play"] for p in game.terms["prizes"])
    assert (
        current_seq(speciality.stream) == seq + 3
    )  # EGAME_SALES_CLOSED, EGAME_CLOSED; the next's SALES_OPENED
    assert states(speciality) == [(1, EGameState.CLOSED, True), (2, EGameState.SELLING, False)]


def test_the_next_game_sells_while_one_draws_and_waits_for_it(venue, operator, cashier) -> None:
    speciality = make_speciality(venue, operator)
    terminal, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    card = funded_card(venue, cashier)
    with enqueued(), forced_balls(BALLS):
        games.set_running(speciality=speciality, running=True, actor=operator)
        first = speciality.games.get()
        buy(first, terminal, card, [C1], "1")
        games.close_sales(first, early=True)
        second = ElectronicGame.objects.get(pk=games.tick().started[0])
        assert states(speciality) == [(1, EGameState.DRAWING, True), (2, EGameState.SELLING, False)]
        buy(second, terminal, card, [C2], "2")
        games.tick(now=second.sales_close_at)  # its sales close; the first game still draws
        assert states(speciality) == [(1, EGameState.DRAWING, True), (2, EGameState.SELLING, True)]
        assert games.tick(now=second.sales_close_at).started == []  # the second waits: no third yet
        for ordinal in range(1, 10):  # the first game's bingo is not at 9, but C1 is all the first game has
            games.draw_ball(first.pk, ordinal)
        first.refresh_from_db()
        while first.state == EGameState.DRAWING:
            games.draw_ball(first.pk, first.balls_drawn + 1)
            first.refresh_from_db()
        # The first game's last step began the second game's draw.
        assert states(speciality) == [(1, EGameState.CLOSED, True), (2, EGameState.DRAWING, True)]
        third = games.tick().started
        assert states(speciality)[-1] == (3, EGameState.SELLING, False) and len(third) == 1
    # Its first ball is enqueued once that step commits (after the pause), else the reaper enqueues it.
    assert (second.pk, 1) in games.stalled_draws(now=timezone.now() + timedelta(minutes=5))


def test_a_game_plays_the_version_in_force_when_it_was_created(venue, operator) -> None:
    speciality = make_speciality(venue, operator)
    open_verified_session(speciality, operator)
    later = timezone.now() + timedelta(minutes=5)
    specialities.add_version(
        speciality=speciality,
        rules={**RULES_90, "card_price": "1.00"},
        effective_from=later,
        authorisation_ref="AUT-2",
        actor=operator,
    )
    games.set_running(speciality=speciality, running=True, actor=operator)
    first = speciality.games.get()
    assert first.version.number == 1
    with enqueued():
        games.tick(now=first.sales_close_at)  # closes (no card) and opens the next, still before `later`
        assert ElectronicGame.objects.get(speciality=speciality, number=2).version.number == 1
        second = ElectronicGame.objects.get(speciality=speciality, number=2)
        games.tick(now=later)
    assert second.version.number == 1
    third = ElectronicGame.objects.get(speciality=speciality, number=3)
    assert third.version.number == 2


def test_a_due_step_no_worker_holds_is_re_enqueued_at_once(venue, operator, cashier) -> None:
    """Its worker killed, the step's lease expires: a short grace past the step's due instant the reaper
    re-enqueues it (issue 30), long before the stall grace; not before it is due, nor while a lease holds."""
    speciality = make_speciality(venue, operator)
    terminal, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    with enqueued(), forced_balls(BALLS):
        games.set_running(speciality=speciality, running=True, actor=operator)
        game = speciality.games.get()
        buy(game, terminal, funded_card(venue, cashier), [C1], "1")
        games.close_sales(game, early=True)
        games.draw_ball(game.pk, 1)
        game.refresh_from_db()
        assert game.last_ball_at is not None
        due = game.last_ball_at + timedelta(seconds=0.5)  # RULES_90's pace
        assert games.stalled_draws(now=due) == []  # due, but within the lease grace
        leases.hold(games.LEASE_KIND, game.pk, 2, "worker-a@host", seconds=30)
        assert games.stalled_draws(now=due + timedelta(seconds=1)) == []
        leases.hold(games.LEASE_KIND, game.pk, 2, "worker-a@host", seconds=0.001)  # the worker died
        time.sleep(0.05)
        assert games.stalled_draws(now=due + timedelta(seconds=1)) == [(game.pk, 2)]


def test_a_stalled_draw_is_re_enqueued(venue, operator, cashier) -> None:
    speciality = make_speciality(venue, operator)
    terminal, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    with enqueued() as steps, forced_balls(BALLS):
        games.set_running(speciality=speciality, running=True, actor=operator)
        game = speciality.games.get()
        buy(game, terminal, funded_card(venue, cashier), [C1], "1")
        games.close_sales(game, early=True)
        games.draw_ball(game.pk, 1)
        game.refresh_from_db()
        assert game.last_ball_at is not None
        due = game.last_ball_at + timedelta(seconds=0.5)  # RULES_90's pace
        # Held by a live worker's lease (halls.leases): not lost, though due; past the stall grace it is.
        leases.hold(games.LEASE_KIND, game.pk, 2, "worker-a@host", seconds=30)
        assert games.stalled_draws(now=due + timedelta(seconds=2)) == []
        late = game.last_ball_at + timedelta(seconds=60)
        assert games.tick(now=late).reaped == [(game.pk, 2)]
    assert (game.pk, 2, 0.0) in steps
    # The reaper holds the re-enqueued step's lease until a worker takes it: not enqueued again meanwhile.
    assert leases.holder(games.LEASE_KIND, game.pk, 2) == leases.REAPER
    # /health/ names it too, once it is past the health check's allowance.
    ElectronicGame.objects.filter(pk=game.pk).update(last_ball_at=timezone.now() - timedelta(minutes=5))
    assert (f"E{game.pk}", 2) in health._stalled_games()
