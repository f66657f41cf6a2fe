"""The hall screen of an electronic room in a real browser: the game's balls and prizes arrive over the
room's WebSocket as the engine draws them, a lost ball reloads the snapshot, the accumulated prize shows
its meter with its max ball and information, and the traditional game's section gives way.

Screenshots at 1920×1080 (in /work/notes/shots when that folder exists, else /tmp): electronic_screen_draw.png
(three balls in), electronic_screen.png (the Line won, its band up).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import WebSocketRoute, expect

from bingo.electronic.models import ElectronicGame, Speciality
from bingo.electronic.services import games
from halls.models import Screen
from tests.bingo.electronic.support import (
    buy,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.bingo.electronic.test_game_known_balls import BALLS, C1, C2, C7
from tests.e2e.browser_support import SocketTap, call, open_screen, snapshot_counter

pytestmark = pytest.mark.e2e

SHOTS = Path("/work/notes/shots")


class BallTap(SocketTap):
    """Drops the next `drop_balls` electronic balls on their way to the page."""

    def _route(self, ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def from_server(message: str | bytes) -> None:
            if self.drop_balls and isinstance(message, str) and '"type":"egame.ball"' in message:
                self.drop_balls -= 1
                return
            ws.send(message)

        server.on_message(from_server)
        self.routes.append((ws, server))


def _set_up(venue: Any, operator: Any, cashier: Any) -> tuple[Speciality, ElectronicGame, Screen]:
    """An electronic room with its screen; game 1 with three known cards bought, its sales closed."""
    speciality = make_speciality(venue, operator, code="SALA-E")
    terminal, _ = make_terminal(speciality, operator, "Terminal 1")
    open_verified_session(speciality, operator)
    card = funded_card(venue, cashier)
    games.set_running(speciality=speciality, running=True, actor=operator)
    game = speciality.games.get()
    buy(game, terminal, card, [C1, C2, C7], "k1")
    closed = games.close_sales(game, early=True)
    assert closed is not None and closed.state == "drawing"
    screen = Screen.objects.create(venue=venue, room=speciality.room, name="Pantalla electrónica")
    return speciality, closed, screen


def _draw(game: ElectronicGame, ordinal: int) -> None:
    with forced_balls(BALLS):
        games.draw_ball(game.pk, ordinal)


async def test_the_screen_shows_each_ball_and_prize_as_the_engine_decides_them(
    page, server_url, venue, operator, cashier
):
    with enqueued():
        _speciality, game, screen = await call(_set_up, venue, operator, cashier)
        tap = await BallTap().install(page)
        snapshots = snapshot_counter(page)
        await open_screen(page, server_url, screen.token)
        section = page.locator("#electronic")
        await expect(section).to_be_visible()
        await expect(page.locator("#bingo")).to_be_hidden()
        await expect(page.locator("body")).to_have_attribute("data-room-kind", "electronic")
        await expect(page.locator("#es-cards")).to_have_text("3")
        await expect(page.locator(".egame-prize")).to_have_count(5)
        # The accumulated prize: its meter, its max ball and what players are told.
        meter = page.locator(".egame-meter[data-code='acumulado']")
        await expect(meter).to_be_visible()
        await expect(meter.locator(".egame-meter__info")).to_contain_text("40")
        await expect(meter.locator(".egame-meter__info")).to_contain_text("Bingo hasta la bola 40")
        loaded = len(snapshots)

        # Ball 1 drawn by the engine: the current ball and the board, over the socket.
        await call(_draw, game, 1)
        ball = page.locator("#es-ball")
        await expect(ball).to_have_attribute("data-ball", str(BALLS[0]))
        await expect(page.locator(f"#es-board-{BALLS[0]}")).to_have_class(re.compile(r"\bis-drawn\b"))
        assert len(snapshots) == loaded, "the ball came with a snapshot, not over the socket"

        # A lost ball: the next one arrives out of order and the snapshot is reloaded.
        tap.drop_balls = 1
        await call(_draw, game, 2)
        await call(_draw, game, 3)
        await expect(ball).to_have_attribute("data-ball", str(BALLS[2]))
        await expect(page.locator(f"#es-board-{BALLS[1]}")).to_have_class(re.compile(r"\bis-drawn\b"))
        assert len(snapshots) == loaded + 1, "the gap was not repaired by reloading the snapshot"
        folder = SHOTS if SHOTS.is_dir() else Path("/tmp")
        await page.screenshot(path=str(folder / "electronic_screen_draw.png"))

        # Up to ball 9: the first rows of C1 and C2 -> the Line, shared by two cards.
        for ordinal in range(4, 10):
            await call(_draw, game, ordinal)
        await expect(ball).to_have_attribute("data-ball", str(BALLS[8]))
        line = page.locator(".egame-prize[data-code='linea']")
        await expect(line).to_have_attribute("data-won", "true")
        won = page.locator("#es-won")
        await expect(won).to_be_visible()
        await expect(won).to_have_attribute("data-code", "linea")
        await expect(page.locator("#es-won-amount")).to_contain_text("0,07")  # 0.15 / 2 cards, 0.01 left
        await expect(page.locator("#es-last-balls .ball")).to_have_count(5)
        await page.screenshot(path=str(folder / "electronic_screen.png"))
        assert len(snapshots) == loaded + 1
