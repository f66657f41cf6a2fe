"""Resuming a game: a ball step whose transaction failed is redone, a repeated step is a no-op, and a detector
lost mid-game (a restarted worker) is rebuilt from the database: every prize paid once, to the same cards."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction

from bingo.electronic.models import EBall, EGameState, ElectronicGame, EPrize, EWin
from bingo.electronic.services import detection, games
from halls.cashier.models import LedgerTransaction, TxKind
from halls.cashier.services import ledger
from jackpots.models import PoolSettlement
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

# What the known ball sequence pays: code -> (ordinal, positions of the winning cards in FACES).
FACES = [C1, C2, C3, C4, C5, C6, C7]
PAID = {
    "linea": (9, {0, 1}),
    "esquinas": (13, {2}),
    "aspa": (18, {3, 4, 5}),
    "bingo": (29, {1, 6}),
    "acumulado": (29, {1, 6}),
}


class Killed(Exception):
    """The worker dies inside a step: its transaction rolls back."""


def game_on_sale(venue: Any, operator: Any, cashier: Any) -> tuple[ElectronicGame, list[int]]:
    speciality = make_speciality(venue, operator)
    terminal, _ = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    games.set_running(speciality=speciality, running=True, actor=operator)
    game = speciality.games.get()
    _, rows = buy(game, terminal, funded_card(venue, cashier, Decimal("50.00")), FACES, "all")
    return game, [row.pk for row in rows]


def killed_in(game: ElectronicGame, ordinal: int) -> None:
    """Ball `ordinal`'s step, done (its prizes written), and the worker killed before it commits."""
    with transaction.atomic():
        assert games.draw_ball(game.pk, ordinal) is not None
        assert EPrize.objects.filter(game=game, ordinal=ordinal).exists()
        raise Killed


def step(game: ElectronicGame, ordinal: int, capture: Any) -> None:
    with capture(execute=True):  # the step commits: its detector is kept, the next step enqueued
        assert games.draw_ball(game.pk, ordinal) is not None


def assert_paid_once(game: ElectronicGame, ids: list[int]) -> None:
    game.refresh_from_db()
    assert game.state == EGameState.CLOSED and game.balls_drawn == 29
    assert list(EBall.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True)) == BALLS
    for code, (ordinal, positions) in PAID.items():
        prize = EPrize.objects.get(game=game, code=code)
        assert prize.ordinal == ordinal and prize.won
        assert set(EWin.objects.filter(prize=prize).values_list("card_id", flat=True)) == {
            ids[p] for p in positions
        }
    assert LedgerTransaction.objects.filter(kind=TxKind.PRIZE_AWARD).count() == len(PAID)
    assert (
        PoolSettlement.objects.filter(
            pool__in=[p.pool_id for p in EPrize.objects.filter(game=game, pool__isnull=False)]
        ).count()
        == 1
    )
    assert ledger.trial_balance(game.speciality.venue_id).holds


def test_a_step_killed_before_its_commit_is_redone_once(
    venue, operator, cashier, django_capture_on_commit_callbacks
) -> None:
    game, ids = game_on_sale(venue, operator, cashier)
    with enqueued() as steps, forced_balls(BALLS):
        with django_capture_on_commit_callbacks(execute=True):
            games.close_sales(game, early=True)
        for ordinal in range(1, 9):
            step(game, ordinal, django_capture_on_commit_callbacks)
        assert detection.cached(game.pk)
        # Ball 9 pays the Línea; the worker dies before the step commits.
        with pytest.raises(Killed):
            killed_in(game, 9)
        assert not EPrize.objects.filter(game=game, code="linea").exists()
        assert EBall.objects.filter(game=game).count() == 8
        assert not detection.cached(game.pk)  # the entry the step used is gone with it
        # The reaper's step (or Celery's redelivery) redoes ball 9; a duplicate of it does nothing.
        step(game, 9, django_capture_on_commit_callbacks)
        assert games.draw_ball(game.pk, 9) is None
        for ordinal in range(10, 30):
            step(game, ordinal, django_capture_on_commit_callbacks)
    assert_paid_once(game, ids)
    assert [s[1] for s in steps] == list(range(1, 30))  # each ball enqueued once, the next after each commit


def test_a_detector_lost_mid_game_is_rebuilt_and_pays_nothing_twice(
    venue, operator, cashier, django_capture_on_commit_callbacks
) -> None:
    game, ids = game_on_sale(venue, operator, cashier)
    with enqueued(), forced_balls(BALLS):
        with django_capture_on_commit_callbacks(execute=True):
            games.close_sales(game, early=True)
        for ordinal in range(1, 16):
            step(game, ordinal, django_capture_on_commit_callbacks)
        detection.forget()  # the worker restarted after ball 15 (Línea and Esquinas paid)
        for ordinal in range(16, 30):
            step(game, ordinal, django_capture_on_commit_callbacks)
            if ordinal == 20:
                detection.forget(game.pk)  # and again
    assert_paid_once(game, ids)


def test_a_step_whose_commit_was_not_seen_rebuilds_the_detector(venue, operator, cashier) -> None:
    """Steps whose on-commit hooks never ran (as in a process that died right after committing): the next step
    finds no usable entry and rebuilds from the balls as committed."""
    game, ids = game_on_sale(venue, operator, cashier)
    with enqueued(), forced_balls(BALLS):
        games.close_sales(game, early=True)
        for ordinal in range(1, 30):
            assert games.draw_ball(game.pk, ordinal) is not None
            assert not detection.cached(game.pk)
    assert_paid_once(game, ids)
