"""What the bingo game tests share: an RNG game on sale, the balls as stored, the caller claiming every
winner, the pure detector's completions, and a fresh detector per test."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bingo.cards import CardGrid
from bingo.detect import winners_at
from bingo.traditional.models import Ball, Card, CardSeries, DrawSource, Game, GameState, SoldCard
from bingo.traditional.services import claims, detection, draw, games, readmodels, sales
from halls.models import GameSession, Room


@pytest.fixture(autouse=True)  # where it is imported
def fresh_process(settings: Any, tmp_path: Path) -> Iterator[None]:
    """A detector directory of the test's own, and no index kept in memory before or after."""
    settings.HALL_DETECTOR_DIR = str(tmp_path / "detector")
    detection.forget()
    yield
    detection.forget()


@pytest.fixture(autouse=True)  # where it is imported
def no_celery(monkeypatch: pytest.MonkeyPatch) -> None:
    """RNG steps are called here one by one: the next one is not enqueued on the broker."""
    monkeypatch.setattr(draw, "dispatch", lambda *args, **kwargs: None)


def grid(series: CardSeries, serial: int) -> CardGrid:
    return CardGrid.from_json(Card.objects.get(series=series, serial=serial).grid)


def top_row(series: CardSeries, serial: int) -> list[int]:
    return sorted(n for n in grid(series, serial).rows[0] if n)


def rng_game(
    room: Room, session: GameSession, caller: Any, cashier: Any, series: CardSeries, *, pace: str, last: int
) -> Game:
    """An RNG game with cards 1 to ``last`` sold and its sales closed (the draw not started)."""
    game = games.create_game(room=room, actor=caller, draw_source=DrawSource.RNG, pace_seconds=Decimal(pace))
    games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=series, first=1, last=last, actor=cashier)
    return games.close_sales(game=game, actor=caller)


def drawn(game: Game) -> list[tuple[int, int]]:
    """(ordinal, number) of every ball stored, in order."""
    return list(Ball.objects.filter(game=game).order_by("ordinal").values_list("ordinal", "number"))


def assert_no_ball_lost_or_repeated(balls: list[tuple[int, int]]) -> None:
    ordinals = [o for o, _ in balls]
    numbers = [n for _, n in balls]
    assert ordinals == list(range(1, len(balls) + 1)), ordinals
    assert len(set(numbers)) == len(numbers), numbers
    assert all(1 <= n <= 90 for n in numbers)


def play_caller(game_id: int, caller: Any, deadline: float, logs: Callable[[], str] = lambda: "") -> None:
    """Claim every winning card as soon as it shows, lines before bingos, and confirm each prize, until the
    game closes. The game is read afresh each time: django-fsm's refresh_from_db unprotects the state field
    for every thread of the process while it runs, and an embedded worker is one."""
    while True:
        game = Game.objects.get(pk=game_id)
        if game.state == GameState.CLOSED:
            return
        if time.monotonic() > deadline:
            raise AssertionError(
                f"the game did not close in time: {game.state}, {game.balls_drawn} balls\n{logs()}"
            )
        if game.state not in (GameState.DRAWING, GameState.PAUSED):
            time.sleep(0.02)
            continue
        found = readmodels.unclaimed_winners(game)
        # Lines first: while the line window is open every card with a line at its ball is a co-winner.
        kind = "line" if found["line"] else "bingo" if found["bingo"] else None
        if kind is not None:
            for row in found[kind]:
                claim = claims.file_claim(
                    game=game,
                    kind=kind,
                    series_code=str(row["series"]),
                    serial=int(str(row["serial"])),
                    actor=caller,
                )
                assert claim.valid, claim.reason
            continue
        if game.state == GameState.PAUSED and game.claim_window:
            claims.confirm_claims(game=game, kind=game.claim_window, actor=caller)
            continue
        time.sleep(0.02)


def expected_completions(game: Game) -> set[tuple[str, int, int]]:
    """(kind, card id, ordinal) of every line and bingo: the pure detector on the balls as stored now."""
    grids = {
        sc.card_id: CardGrid.from_json(sc.card.grid)
        for sc in SoldCard.objects.filter(game=game).select_related("card")
    }
    balls = list(Ball.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))
    timeline = winners_at(grids, balls)
    lines = {("line", card, at) for at, cards in timeline.lines.items() for card in cards}
    return lines | {("bingo", card, at) for at, cards in timeline.bingos.items() for card in cards}
