"""The caller console in a real browser, on its stream: one snapshot, then the events of the room's public
stream and its staff stream; no polling; a lost event or a dropped socket repaired by a fresh snapshot.

Screenshot left in /tmp for a look: console-stream.png (unclaimed winners pushed on the staff stream).
"""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from bingo.cards import CardGrid
from bingo.traditional.models import Card
from bingo.traditional.services import draw
from tests.e2e.browser_support import CONSOLE_SOCKET, SocketTap, call, log_in, start_game

pytestmark = pytest.mark.e2e


async def test_the_console_follows_its_stream_without_polling(
    page, server_url, eager_tasks, room, manual_game, card_series, ball_set, caller, cashier
):
    game = await call(start_game, manual_game, card_series, caller, cashier, last_serial=60)
    tap = await SocketTap(CONSOLE_SOCKET).install(page)
    api_calls: list[str] = []
    page.on("request", lambda r: api_calls.append(r.url) if "/api/" in r.url else None)
    await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await expect(page.locator("#game-badge")).to_have_text("Game 1 · Drawing")
    await expect(page.locator("#fig-cards")).to_have_text("60")

    def snapshots() -> list[str]:
        return [u for u in api_calls if u.endswith(f"/api/rooms/{room.pk}/console/")]

    assert len(snapshots()) == 1

    # Balls drawn elsewhere (the ball reader's API, another console) arrive over the socket.
    card = CardGrid.from_json((await call(Card.objects.get, series=card_series, serial=9)).grid)
    top_row = sorted(n for n in card.rows[0] if n)
    await call(draw.enter_ball, game=game, number=top_row[0], actor=caller)
    await expect(page.locator(f"#console-board-{top_row[0]}")).to_have_class(re.compile(r"\bis-last\b"))

    # Nothing is polled: a few quiet seconds, no request at all (the screens' watch, woken by the ball,
    # asked once whether the room's screens showed it, and rests: this room has none).
    await page.wait_for_timeout(500)
    before = len(api_calls)
    await page.wait_for_timeout(3000)
    assert api_calls[before:] == []
    assert [u for u in api_calls if u.endswith("/console/screens/")], "the watch asked after the ball"

    # A lost ball event: the next one shows the gap, and one snapshot repairs it.
    tap.drop_balls = 1
    await call(draw.enter_ball, game=game, number=top_row[1], actor=caller)
    await call(draw.enter_ball, game=game, number=top_row[2], actor=caller)
    await expect(page.locator(f"#console-board-{top_row[1]}")).to_have_class(re.compile(r"\bis-on\b"))
    await expect(page.locator("#console-ordinal")).to_have_text("Ball 3 of 90")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    assert len(snapshots()) == 2

    # A dropped socket: what happened meanwhile shows once it has reconnected (a snapshot again).
    await tap.cut()
    await call(draw.enter_ball, game=game, number=top_row[3], actor=caller)
    await expect(page.locator("#console-ordinal")).to_have_text("Ball 4 of 90")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    assert len(snapshots()) == 3

    # The last number of the row: the staff stream pushes the unclaimed line to the console.
    await call(draw.enter_ball, game=game, number=top_row[4], actor=caller)
    await expect(page.locator("#unclaimed")).to_contain_text("A · no. 9")
    await expect(page.locator("#unclaimed")).to_contain_text(f"since ball {len(top_row)}")
    assert len(snapshots()) == 3
    await page.screenshot(path="/tmp/console-stream.png", full_page=True)

    # The caller files the claim from the list: the verdict, the window, the card off the list.
    await page.locator("#unclaimed button").first.click()
    await page.click("#claim-form button[type=submit]")
    await expect(page.locator("#verdict")).to_contain_text("Valid line")
    await expect(page.locator("#window-question")).to_have_text("Any more lines?")
    await expect(page.locator("#claims-table")).to_contain_text("A · no. 9")
    await expect(page.locator("#unclaimed")).to_be_hidden()
    await page.click("#confirm-btn")
    await expect(page.locator("#prizes")).to_contain_text("A · no. 9")
    await expect(page.locator("#game-badge")).to_have_text("Game 1 · Drawing")
    assert len(snapshots()) == 3
