"""What the real-browser tests share: services called from async tests, a game in play, the staff login,
a hall screen opened live, and a tap between a page and its WebSocket."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from channels.db import database_sync_to_async
from playwright.async_api import Page, WebSocket, WebSocketRoute, expect

from bingo.traditional.models import CardSeries, Game
from bingo.traditional.services import games, sales

T = TypeVar("T")
SCREEN_SOCKET = re.compile(r"/ws/screens/")
CONSOLE_SOCKET = re.compile(r"/ws/console/")


async def call(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run a service from the async test in a worker thread (see conftest), closing its connection after."""
    result: T = await database_sync_to_async(fn)(*args, **kwargs)
    return result


def start_game(game: Game, series: CardSeries, caller: Any, cashier: Any, last_serial: int = 30) -> Game:
    """Sales open, cards 1 to ``last_serial`` sold, sales closed, the draw started."""
    game = games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=series, first=1, last=last_serial, actor=cashier)
    game = games.close_sales(game=game, actor=caller)
    return games.start_draw(game=game, actor=caller)


async def log_in(page: Page, server_url: str, username: str, next_path: str) -> None:
    await page.goto(f"{server_url}/accounts/login/?next={next_path}")
    await page.fill("#id_username", username)
    await page.fill("#id_password", f"pw-{username}")
    await page.press("#id_password", "Enter")  # its own form: the page has the language switch's too
    await page.wait_for_url(f"{server_url}{next_path}")


def snapshot_counter(page: Page) -> list[str]:
    """Every snapshot the page loads: over HTTP, or as its socket's first frame (issue 30: ?snapshot=1)."""
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url) if "/snapshot/" in request.url else None)

    def socket(ws: WebSocket) -> None:
        def frame(payload: str | bytes) -> None:
            if isinstance(payload, str) and payload.startswith('{"type":"stream.snapshot"'):
                seen.append(ws.url)

        ws.on("framereceived", frame)

    page.on("websocket", socket)
    return seen


async def open_screen(page: Page, server_url: str, token: str) -> None:
    await page.goto(f"{server_url}/screens/{token}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")


class SocketTap:
    """Sits between the page and the server's WebSocket (the screen's unless told): forwards frames, drops
    some, can cut the line."""

    def __init__(self, socket: re.Pattern[str] = SCREEN_SOCKET) -> None:
        self.socket = socket
        self.drop_balls = 0
        self.routes: list[tuple[WebSocketRoute, WebSocketRoute]] = []

    async def install(self, page: Page) -> SocketTap:
        await page.route_web_socket(self.socket, self._route)
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
