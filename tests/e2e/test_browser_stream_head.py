"""The hall screen catches a lost *last* event from the stream's head, without refetching its snapshot on a
timer (halls.fanout sends every screen its stream's seq each sweep; halls/stream.js compares).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import expect

from bingo.traditional.services import draw
from tests.e2e.browser_support import SocketTap, call, open_screen, snapshot_counter, start_game

pytestmark = pytest.mark.e2e

SWEEP_SECONDS = 1.0


async def test_a_lost_last_ball_is_caught_by_the_head_and_heads_alone_fetch_nothing(
    page, server_url, screen, manual_game, card_series, caller, cashier, settings: Any
):
    settings.HALL_SCREEN_SWEEP_SECONDS = SWEEP_SECONDS
    game = await call(start_game, manual_game, card_series, caller, cashier)
    tap = await SocketTap().install(page)
    snapshots = snapshot_counter(page)
    await open_screen(page, server_url, screen.token)
    current = page.locator("#current-ball")
    await call(draw.enter_ball, game=game, number=17, actor=caller)
    await expect(current).to_have_attribute("data-ball", "17")
    assert len(snapshots) == 1

    # Heads come, and while nothing is missed they fetch nothing.
    await asyncio.sleep(3 * SWEEP_SECONDS)
    assert await page.evaluate("window.hallStream.stats.heads") >= 2
    assert len(snapshots) == 1

    # Ball 42 never reaches the page and nothing follows it: only the head can tell.
    tap.drop_balls = 1
    await call(draw.enter_ball, game=game, number=42, actor=caller)
    await expect(current).to_have_attribute("data-ball", "42", timeout=15_000)
    assert len(snapshots) == 2, "the lost ball was not repaired by one snapshot"
    assert tap.drop_balls == 0, "the ball was not dropped"
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    assert await page.evaluate("window.hallStream.stats.gaps") == 1
