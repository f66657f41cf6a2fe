"""The hall screen of an electronic room shows the draw's commitment (issue 28): the game on sale's, from
its snapshot, then the next game's as its sales open (over the room's WebSocket).

Screenshot at 1920×1080 in /tmp: drawelec_screen_commitment.png.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from bingo.electronic.models import ElectronicGame
from bingo.electronic.services import commitments, games
from halls.models import Screen
from tests.bingo.electronic.support import (
    buy,
    enqueued,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.bingo.electronic.test_game_known_balls import C1, C2
from tests.e2e.browser_support import call, open_screen

pytestmark = pytest.mark.e2e


def short(commitment: str) -> str:
    """The commitment as the screen shortens it: its first 16 hex digits in fours."""
    return " ".join(commitment[i : i + 4] for i in range(0, 16, 4)) + "…"


def _set_up(venue: Any, operator: Any, cashier: Any) -> tuple[ElectronicGame, Screen, str]:
    speciality = make_speciality(venue, operator, code="SALA-C")
    terminal, _ = make_terminal(speciality, operator, "Terminal 1")
    open_verified_session(speciality, operator)
    games.set_running(speciality=speciality, running=True, actor=operator)
    game = speciality.games.get()
    buy(game, terminal, funded_card(venue, cashier), [C1, C2], "k1")
    screen = Screen.objects.create(venue=venue, room=speciality.room, name="Pantalla electrónica")
    row = commitments.committed(game.pk)
    assert row is not None
    return game, screen, row.commitment


def _close(game: ElectronicGame) -> str:
    """The sales close (the game draws) and the next game opens its sales: its commitment."""
    games.close_sales(game, early=True)
    following = games.start_next_game(game.speciality_id)
    assert following is not None
    row = commitments.committed(following.pk)
    assert row is not None
    return row.commitment


async def test_the_screen_shows_the_commitment_of_the_game_on_sale(
    page, server_url, venue, operator, cashier
):
    with enqueued():
        game, screen, commitment = await call(_set_up, venue, operator, cashier)
        await open_screen(page, server_url, screen.token)
        draw = page.locator("#es-draw")
        await expect(draw).to_contain_text(short(commitment))
        await expect(draw).to_contain_text(f"partida {game.number}")
        following = await call(_close, game)
        await expect(draw).to_contain_text(short(following))  # from the opening's event
        await expect(draw).to_contain_text(f"partida {game.number + 1}")
        await page.screenshot(path="/tmp/drawelec_screen_commitment.png")
