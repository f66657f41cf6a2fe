"""The network Line on a member hall's screen in a real browser, in Spanish (issue 26): decided at the
central for a card of another hall, the hall's screen shows "LÍNEA · CANTADA" with the ball and the hall where
it was won, live, and still after a reload (its snapshot); the winning hall's screen says the same.

Screenshots left in /tmp (1920×1080): network-line-won-other-hall-es.png (the hall without the winner, after a
reload), network-line-won-winning-hall-es.png.
"""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Page, expect

from bingo.network.simultaneous.models import NetworkGame
from bingo.network.simultaneous.services import central, venue
from halls.models import Screen
from tests.bingo.network.simultaneous.support import Net, Script, card, draw, make_network, new_game
from tests.bingo.network.simultaneous.test_simultaneous_game import _to_the_draw
from tests.e2e.browser_support import call, open_screen

ACCEPT_LANGUAGE = "es"

pytestmark = pytest.mark.e2e


def _line_claimed(monkeypatch: pytest.MonkeyPatch) -> tuple[Net, NetworkGame, list[str], int]:
    """A network game drawing, a Line of the first hall's card claimed there and reported, not decided yet;
    a screen in each of the first two halls (tokens)."""
    net = make_network()
    game = _to_the_draw(net, new_game(net))
    one = net.halls[0]
    game_one = net.hall_game(one, game)
    row = sorted(card(game_one, game_one.first_serial).row_numbers[0])
    monkeypatch.setattr(central, "_pick", Script(row))
    list(draw(game, len(row)))
    net.follow()
    assert venue.claim(hall_game=game_one, kind="line", serial=game_one.first_serial, actor=one.caller).valid
    net.sync()
    tokens = [
        Screen.objects.create(venue=h.venue, room=h.room, name=f"Pantalla {n}").token
        for n, h in enumerate(net.halls[:2], start=1)
    ]
    return net, game, tokens, len(row)


def _decide(net: Net, game: NetworkGame) -> None:
    central.decide(game=game, actor=net.boss)
    net.follow()


async def test_the_network_line_shows_won_with_where_on_a_hall_that_did_not_win_it(
    page: Page, server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    net, game, (winning, other), ordinal = await call(_line_claimed, monkeypatch)
    winner_hall = net.halls[0].venue.name
    await open_screen(page, server_url, other)
    line = page.locator("#line-stat")
    await expect(page.locator("#ball-ordinal")).to_contain_text(str(ordinal))
    await expect(line).not_to_have_class(re.compile("is-won"))
    await expect(line.locator(".stat__won")).to_be_hidden()

    # Decided at the central: live on this hall's screen, won, where.
    await call(_decide, net, game)
    await expect(line).to_have_class(re.compile("is-won"))
    await expect(line.locator(".stat__label")).to_have_text("Línea · cantada")
    await expect(page.locator("#line-where")).to_have_text(f"Bola {ordinal} · {winner_hall}")
    await expect(page.locator("#line-winners li")).to_have_count(1)
    await expect(page.locator("#bingo-stat")).not_to_have_class(re.compile("is-won"))

    # A reload (a screen restarted, a reconnect): the snapshot keeps it won.
    await page.reload()
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await expect(line).to_have_class(re.compile("is-won"))
    await expect(page.locator("#line-where")).to_have_text(f"Bola {ordinal} · {winner_hall}")
    label = await line.locator(".stat__label").evaluate("e => e.innerText")
    assert label == "LÍNEA · CANTADA"  # as the hall reads it (upper case on the screen)
    await page.screenshot(path="/tmp/network-line-won-other-hall-es.png")

    # The winning hall's screen says the same.
    await open_screen(page, server_url, winning)
    await expect(line).to_have_class(re.compile("is-won"))
    await expect(page.locator("#line-where")).to_have_text(f"Bola {ordinal} · {winner_hall}")
    await page.screenshot(path="/tmp/network-line-won-winning-hall-es.png")
