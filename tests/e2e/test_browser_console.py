"""The caller console in a real browser, on its stream: one snapshot, then the events of the room's public
stream and its staff stream; no polling; a lost event or a dropped socket repaired by a fresh snapshot.

Screenshot left in /tmp for a look: console-stream.png (unclaimed winners pushed on the staff stream).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
from channels.db import database_sync_to_async
from playwright.async_api import Page, WebSocketRoute, expect

from bingo.cards import CardGrid
from bingo.models import Card, CardSeries, Game
from bingo.services import draw, games, sales
from config.celery import app as celery_app

pytestmark = pytest.mark.e2e

SOCKET = re.compile(r"/ws/console/")
T = TypeVar("T")


async def call(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    result: T = await database_sync_to_async(fn)(*args, **kwargs)
    return result


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """No Celery worker here: the unclaimed winners are published where the ball commits."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


def start_game(game: Game, series: CardSeries, caller: Any, cashier: Any) -> Game:
    game = games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=series, first=1, last=60, actor=cashier)
    game = games.close_sales(game=game, actor=caller)
    return games.start_draw(game=game, actor=caller)


class ConsoleTap:
    """Between the page and the console's socket: forwards frames, drops some, can cut the line."""

    def __init__(self) -> None:
        self.drop_balls = 0
        self.routes: list[tuple[WebSocketRoute, WebSocketRoute]] = []

    async def install(self, page: Page) -> ConsoleTap:
        await page.route_web_socket(SOCKET, self._route)
        return self

    def _route(self, ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def from_server(message: str | bytes) -> None:
            if self.drop_balls and isinstance(message, str) and '"type":"ball.drawn"' in message:
                self.drop_balls -= 1
                return
            ws.send(message)

        server.on_message(from_server)
        self.routes.append((ws, server))

    async def cut(self) -> None:
        page_side, server_side = self.routes[-1]
        await server_side.close()
        await page_side.close(code=1011, reason="test cut the line")


async def log_in(page: Page, server_url: str, username: str, next_path: str) -> None:
    await page.goto(f"{server_url}/accounts/login/?next={next_path}")
    await page.fill("#id_username", username)
    await page.fill("#id_password", f"pw-{username}")
    await page.click("button[type=submit]")
    await page.wait_for_url(f"{server_url}{next_path}")


async def test_the_console_follows_its_stream_without_polling(
    page, server_url, eager_tasks, room, manual_game, card_series, ball_set, caller, cashier
):
    game = await call(start_game, manual_game, card_series, caller, cashier)
    tap = await ConsoleTap().install(page)
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

    # Nothing is polled: a few quiet seconds, no request at all.
    before = len(api_calls)
    await page.wait_for_timeout(3000)
    assert api_calls[before:] == []

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
