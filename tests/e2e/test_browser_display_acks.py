"""Display acknowledgements in real browsers (issue 28): a hall screen cut off for three balls. The caller's
console flags it (it has not shown the current ball within HALL_ACK_LATE_SECONDS); once back, its snapshot
acknowledges the balls it shows; the inspector's game record shows the three balls as gaps on that screen
(shown only on reconnecting), none on the screen that stayed, and answers the dispute for one of them.

Screenshots left in /tmp for a look: acks-console-flag.png, acks-inspector-record.png.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from django.conf import settings as django_settings
from playwright.async_api import BrowserContext, Page, WebSocketRoute, expect

from bingo.traditional.services import draw
from halls.models import DisplayAck, Role, Screen
from tests.conftest import make_user
from tests.e2e.browser_support import SocketTap, call, log_in, open_screen, start_game

pytestmark = pytest.mark.e2e


class BlockingTap(SocketTap):
    """A tap that can keep the screen off the server: while `blocked`, every new socket is closed at once."""

    blocked = False

    def _route(self, ws: WebSocketRoute) -> None:
        if self.blocked:
            asyncio.get_event_loop().create_task(ws.close(code=1011, reason="the test keeps the screen away"))
            return
        super()._route(ws)


def acked(screen: Screen, ball: int, frame: str = "ball.drawn") -> bool:
    return DisplayAck.objects.filter(device=screen.pk, frame=frame, balls__contains=[ball]).exists()


async def wait_acked(screen: Screen, ball: int, frame: str = "ball.drawn", timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not await call(acked, screen, ball, frame):
        assert time.monotonic() < deadline, f"{screen.name} never acknowledged ball {ball} ({frame})"
        await asyncio.sleep(0.2)


async def test_a_screen_away_for_three_balls_is_flagged_and_its_gap_is_in_the_record(
    context: BrowserContext,
    page: Page,
    server_url: str,
    screen: Screen,
    manual_game: Any,
    card_series: Any,
    caller: Any,
    cashier: Any,
    venue: Any,
    settings: Any,
) -> None:
    settings.HALL_ACK_FLUSH_MS = 100
    spanish = {
        "name": django_settings.LANGUAGE_COOKIE_NAME,
        "value": "es",
        "domain": "127.0.0.1",
        "path": "/",
    }
    await context.add_cookies([spanish])  # type: ignore[list-item]
    other = await call(Screen.objects.create, venue=venue, room=screen.room, name="Pantalla 2")
    game = await call(start_game, manual_game, card_series, caller, cashier)

    tap = BlockingTap()
    await tap.install(page)
    await open_screen(page, server_url, screen.token)
    steady = await context.new_page()
    await open_screen(steady, server_url, other.token)
    console = await context.new_page()
    await log_in(console, server_url, "caller", f"/console/rooms/{screen.room_id}/")

    await call(draw.enter_ball, game=game, number=17, actor=caller)
    await wait_acked(screen, 17)
    await wait_acked(other, 17)
    watch = console.locator("#screens-watch")
    await expect(watch).to_have_attribute("data-ball", "17")
    await expect(console.locator("#screens-late")).to_be_hidden()

    # The main screen goes dark for three balls.
    tap.blocked = True
    await tap.cut()
    await expect(page.locator("body")).not_to_have_attribute("data-stream", "live")
    for number in (42, 8, 71):
        await call(draw.enter_ball, game=game, number=number, actor=caller)
        await wait_acked(other, number)
    late = console.locator("#screens-late")
    await expect(late).to_be_visible(timeout=10_000)
    await expect(late).to_contain_text("Pantalla principal")
    await expect(late).to_contain_text("no ha mostrado la bola")
    await expect(late).to_contain_text("71")
    await expect(late).not_to_contain_text("Pantalla 2")
    await expect(console.locator(f'[data-screen="{screen.pk}"]')).to_have_attribute("data-state", "late")
    await expect(console.locator(f'[data-screen="{other.pk}"]')).to_have_attribute("data-state", "shown")
    await console.screenshot(path="/tmp/acks-console-flag.png", full_page=True)

    # Back: its snapshot shows (and acknowledges) every ball; the console lets it go.
    tap.blocked = False
    await expect(page.locator("#current-ball")).to_have_attribute("data-ball", "71", timeout=30_000)
    await wait_acked(screen, 71, frame="snapshot")
    await expect(late).to_be_hidden(timeout=10_000)
    await call(draw.enter_ball, game=game, number=5, actor=caller)
    await wait_acked(screen, 5)
    await wait_acked(other, 5)

    inspector = await context.new_page()
    await call(make_user, "inspectora", venue, Role.INSPECTOR)
    await log_in(inspector, server_url, "inspectora", f"/inspector/games/{game.pk}/")
    main_row = inspector.locator(f'section[data-section="screens"] tr[data-screen="{screen.pk}"]')
    await expect(main_row).to_have_attribute("data-gaps", "3")
    await expect(main_row.locator("[data-gap-balls]")).to_have_attribute("data-gap-balls", "42 8 71")
    await expect(main_row).to_contain_text("al reconectar")
    steady_row = inspector.locator(f'section[data-section="screens"] tr[data-screen="{other.pk}"]')
    await expect(steady_row).to_have_attribute("data-gaps", "0")
    await inspector.screenshot(path="/tmp/acks-inspector-record.png", full_page=True)

    # "My screen never showed 8": the record for that ball, per screen.
    await inspector.fill("#dispute-ball", "8")
    await inspector.press("#dispute-ball", "Enter")
    dispute = inspector.locator('[data-dispute="8"]')
    await expect(dispute.locator(f'tr[data-screen="{screen.pk}"]')).to_have_attribute("data-how", "snapshot")
    await expect(dispute.locator(f'tr[data-screen="{other.pk}"]')).to_have_attribute("data-how", "live")
    await expect(dispute.locator(f'tr[data-screen="{other.pk}"]')).to_contain_text("Coincide con la bola")
