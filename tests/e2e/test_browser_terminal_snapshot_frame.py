"""The terminal page takes its speciality's snapshot from its socket's first frame (issue 30, a reconnect
storm: terminal_stream.js, ``?snapshot=1``): the current ball shows from it, in the page's language, and the
terminal's own part follows through the terminal API's POST (the card number never in a URL). Its socket
dropped (a web process killed), the page comes back, shows the ball drawn meanwhile from the new socket's
first frame, and its own stream's event missed meanwhile from the own part's POST: nothing lost; with no
own event missed (the frame's own_seq is the page's), no POST at all.

Between the page and its socket a Playwright route records the server's frames and can close the socket.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from playwright.async_api import Page, Request, WebSocketRoute, expect

from bingo.electronic.models import EGameState
from halls.models import Venue
from tests.bingo.electronic.support import make_speciality, make_terminal, open_verified_session
from tests.bingo.electronic.test_terminal_snapshot import _game
from tests.bingo.electronic.test_terminal_socket import balance
from tests.bingo.electronic.test_terminal_socket_snapshot import ball
from tests.e2e.browser_support import call

pytestmark = pytest.mark.e2e

TERMINAL_SOCKET = re.compile(r"/ws/electronic/terminal/")


class Tap:
    """Forwards every frame; records each socket's URL and frames from the server; `drop()` closes the
    page's side of the last socket (as a web process killed)."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.frames: list[list[dict[str, Any]]] = []
        self.ws: WebSocketRoute | None = None

    def route(self, ws: WebSocketRoute) -> None:
        self.ws = ws
        self.urls.append(ws.url)
        frames: list[dict[str, Any]] = []
        self.frames.append(frames)
        server = ws.connect_to_server()

        def from_server(message: str | bytes) -> None:
            if isinstance(message, str):
                frames.append(json.loads(message))
            ws.send(message)

        server.on_message(from_server)

    async def drop(self) -> None:
        assert self.ws is not None
        await self.ws.close(code=1011)


def a_drawing_terminal(venue: Venue, operator: Any) -> tuple[Any, Any, str, Any]:
    speciality = make_speciality(venue, operator)
    terminal, token = make_terminal(speciality, operator, name="Terminal 5")
    session = open_verified_session(speciality, operator)
    game = _game(speciality, session, 1, EGameState.DRAWING)
    ball(speciality, game, 1, 42)
    return speciality, terminal, token, game


async def test_the_page_shows_the_ball_from_its_sockets_first_frame_and_after_a_drop_the_ball_drawn_meanwhile(
    page: Page, server_url: str, venue: Venue, operator: Any, settings: Any
) -> None:
    speciality, terminal, token, game = await call(a_drawing_terminal, venue, operator)
    tap = Tap()
    posts: list[Request] = []
    page.on("request", lambda r: posts.append(r) if r.method == "POST" and "snapshot/" in r.url else None)
    await page.route_web_socket(TERMINAL_SOCKET, tap.route)
    await page.goto(f"{server_url}/electronic/terminal/?lang=es#{terminal.device_id}:{token}")
    body = page.locator("body")
    await expect(body).to_have_attribute("data-stream", "live")
    await expect(page.locator("#last-ball")).to_have_text("42")
    # The socket's first frame: the speciality's part, in the page's language; no card, no own row.
    assert "snapshot=1" in tap.urls[0] and "lang=es" in tap.urls[0] and "card" not in tap.urls[0]
    first = tap.frames[0][0]
    assert first["type"] == "stream.snapshot" and first["part"] == "speciality", first
    assert first["drawing"]["balls"] == [42] and "terminal" not in first
    assert re.search("Electrónico", first["speciality"]["name"]), first["speciality"]
    # The own part through the terminal API's POST (at once on the first load): the terminal's name.
    await expect(page.locator("#terminal-name")).to_have_text("Terminal 5")
    assert len(posts) == 1 and "card" not in posts[0].url
    await expect(body).to_have_attribute("data-snapshots", "1")

    # The socket drops; meanwhile a ball is drawn and the terminal's own stream moves on.
    await tap.drop()
    await call(ball, speciality, game, 2, 7)
    own = await call(balance, terminal, "5.00")
    # Back (a jittered delay below 1 s): the ball drawn meanwhile from the new socket's first frame.
    await expect(page.locator("#last-ball")).to_have_text("7", timeout=10_000)
    assert len(tap.urls) == 2 and tap.frames[1][0]["type"] == "stream.snapshot"
    assert tap.frames[1][0]["drawing"]["balls"] == [42, 7]
    await expect(body).to_have_attribute("data-stream", "live")
    # The own part's POST a moment later (within 3 s): the own stream's seq taken from it, no gap.
    for _ in range(100):
        seqs = await page.evaluate("TerminalPage.stream.seqs")
        if terminal.stream in seqs:
            break
        await asyncio.sleep(0.1)
    assert len(posts) == 2
    assert seqs == {speciality.stream: tap.frames[1][0]["seqs"][speciality.stream], terminal.stream: own.seq}
    assert await body.get_attribute("data-gaps") in (None, "0")
    # And the stream goes on: the next own event applies on top of the POST's seq.
    after = await call(balance, terminal, "6.00")
    for _ in range(50):
        if (await page.evaluate("TerminalPage.stream.seqs"))[terminal.stream] == after.seq:
            break
        await asyncio.sleep(0.1)
    assert (await page.evaluate("TerminalPage.stream.seqs"))[terminal.stream] == after.seq

    # Dropped again, the own stream still where the page has it: the frame's own_seq says so, no POST. (The
    # token read again, as by the sibling process a storm sends it to: the process keeps no cursor.)
    settings.HALL_SOCKET_ADMIT_CACHE_SECONDS = 0
    await tap.drop()
    last = await call(ball, speciality, game, 3, 11)
    await expect(page.locator("#last-ball")).to_have_text("11", timeout=10_000)
    assert len(tap.urls) == 3 and tap.frames[2][0]["own_seq"] == after.seq
    await asyncio.sleep(3.5)  # the own part's POST would have been made by now
    assert len(posts) == 2
    seqs = await page.evaluate("TerminalPage.stream.seqs")
    assert seqs == {speciality.stream: last.seq, terminal.stream: after.seq}
    await expect(page.locator("#terminal-name")).to_have_text("Terminal 5")
