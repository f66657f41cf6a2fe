"""A member hall's page of a simultaneous network game in a real browser, in Spanish: its allocated run,
what it sold, the central's balls on the board and its draw's commitment and sales digest, its claim with the
verdict; the caller console links to it.

Screenshot at 1920×1080 (in /work/notes/shots when that folder exists, else /tmp): simultaneous_hall.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import expect

from bingo.network.simultaneous.models import HallGame
from tests.bingo.network.simultaneous.support import Net, make_network, new_game
from tests.bingo.network.simultaneous.test_network_game_gaps import _claimed_bingo
from tests.bingo.network.simultaneous.test_simultaneous_game import _to_the_draw
from tests.e2e.browser_support import call, log_in

ACCEPT_LANGUAGE = "es"

pytestmark = pytest.mark.e2e

SHOTS = Path("/work/notes/shots")


def _set_up(monkeypatch: pytest.MonkeyPatch) -> tuple[Net, HallGame]:
    net = make_network()
    game = _to_the_draw(net, new_game(net))
    hall_game = _claimed_bingo(net, game, monkeypatch)
    hall_game.refresh_from_db()
    caller = net.halls[0].caller
    caller.set_password(f"pw-{caller.username}")
    caller.save()
    return net, hall_game


async def test_the_halls_page_shows_its_cards_the_draw_and_its_claims(page, server_url, monkeypatch):
    net, hall_game = await call(_set_up, monkeypatch)
    await log_in(page, server_url, net.halls[0].caller.username, "/console/")
    link = page.locator(f'a[href="/simultaneous/{hall_game.pk}/"]')
    await expect(link).to_contain_text("Partida en red SB-1")
    await link.click()
    await expect(page.locator("h1")).to_have_text("Partida en red SB-1")
    await expect(page.locator("#sb-state")).to_have_text("En juego")
    await expect(page.locator("#sb-allocated")).to_have_text(
        f"{hall_game.first_serial}–{hall_game.last_serial}"
    )
    await expect(page.locator("#sb-sold")).to_have_text("6")
    await expect(page.locator(".board90__cell.is-on, .board90__cell.is-last")).to_have_count(
        len(hall_game.balls)
    )
    await expect(page.locator('#sb-claims tr[data-valid="true"]')).to_have_count(1)
    await expect(page.locator("#sb-no-more button")).to_have_text("Ni más líneas ni más bingos aquí")
    # The central's verifiable draw as this hall received it: the commitment, the network's sales digest.
    draw = hall_game.announcement["draw"]
    await expect(page.locator("#sb-draw")).to_contain_text(draw["commitment"])
    await expect(page.locator("#sb-draw")).to_contain_text(draw["sales_digest"])
    await expect(page.locator("#sb-draw")).to_contain_text("la central la revela tras la partida")
    shots = SHOTS if SHOTS.is_dir() else Path("/tmp")
    await page.screenshot(path=str(shots / "simultaneous_hall.png"), full_page=True)
    await page.screenshot(path="/tmp/drawelec_simultaneous_hall.png", full_page=True)
