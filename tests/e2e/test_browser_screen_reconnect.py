"""A hall screen whose web process goes away (issue 30): told to reconnect (halls.fanout's drain: a
"stream.restart" frame, then close 1012), it keeps showing its last frame, comes back after a random delay
within the spread the server named, comes back within the seconds the refusing process names while it
still refuses it (1013 "retry-after=S": no doubling of its back-off), and once a process takes it again shows
the balls drawn since, from one snapshot."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import expect

from bingo.traditional.services import draw
from halls import fanout
from tests.e2e.browser_support import call, open_screen, snapshot_counter, start_game

pytestmark = pytest.mark.e2e

SPREAD = 1.0


def serving_hub() -> tuple[fanout.StreamHub, asyncio.AbstractEventLoop]:
    """The server thread's hub (the one with sockets) and its loop."""
    found = [(hub, loop) for loop, hub in list(fanout._hubs.items()) if hub.members and loop.is_running()]
    assert len(found) == 1, found
    return found[0]


async def test_a_screen_told_to_reconnect_keeps_its_last_frame_and_comes_back_with_back_off(
    page, server_url, screen, manual_game, card_series, caller, cashier, settings: Any
):
    game = await call(start_game, manual_game, card_series, caller, cashier)
    snapshots = snapshot_counter(page)
    await open_screen(page, server_url, screen.token)
    body, current = page.locator("body"), page.locator("#current-ball")
    await call(draw.enter_ball, game=game, number=17, actor=caller)
    await expect(current).to_have_attribute("data-ball", "17")
    assert len(snapshots) == 1

    # The delays: a random share of a ceiling doubling from 1 s to 15 s; after a restart notice, of the
    # spread it named; after a refusal for now (1013 "retry-after=S"), of S whatever the attempt.
    delays = await page.evaluate(
        "[HallStream.backoff(0, null, 1), HallStream.backoff(3, null, 1), HallStream.backoff(9, null, 1),"
        " HallStream.backoff(2, null, 0), HallStream.backoff(0, 2, 0.5), HallStream.backoff(9, null, 0.5, 2),"
        " HallStream.backoff(9, 3, 1, 0.5)]"
    )
    assert delays == [1000, 8000, 15000, 0, 1000, 1000, 500]
    hints = await page.evaluate(
        "[HallStream.retryAfter({code: 1013, reason: 'retry-after=2.5'}),"
        " HallStream.retryAfter({code: 1013, reason: ''}), HallStream.retryAfter({code: 1006, reason: ''}),"
        " HallStream.retryAfter({code: 1013, reason: 'retry-after=9999'})]"
    )
    assert hints == [2.5, None, None, None]

    hub, loop = serving_hub()
    closed = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(fanout.drain_process(SPREAD), loop))
    assert closed == 1
    await expect(body).to_have_attribute("data-stream", "offline")
    assert 0 <= await page.evaluate("window.hallStream.lastDelay") <= SPREAD * 1000

    # Away (the draining process refuses it: accepted and closed 1013 "retry-after=<the spread>"): the last
    # frame stays on the glass, and it comes back within the spread each time, its back-off not doubled.
    await asyncio.sleep(3.0)
    assert hub.turned_away >= 2
    assert await page.evaluate("window.hallStream.attempt") == 1  # the 1012's; the 1013s are not failures
    assert 0 <= await page.evaluate("window.hallStream.lastDelay") <= SPREAD * 1000
    await expect(current).to_have_attribute("data-ball", "17")
    await expect(current).to_be_visible()
    await expect(body).to_have_attribute("data-stream", "offline")
    await call(draw.enter_ball, game=game, number=42, actor=caller)  # drawn while the screen is away

    loop.call_soon_threadsafe(setattr, hub, "draining", False)  # a process that takes it (here: the same)
    await expect(current).to_have_attribute("data-ball", "42", timeout=20_000)
    await expect(body).to_have_attribute("data-stream", "live")
    assert len(snapshots) == 2, snapshots  # one snapshot brought it up to date
    assert await page.evaluate("window.hallStream.attempt") == 0  # reset once it showed a snapshot
