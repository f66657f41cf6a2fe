"""The inspector (read-only) is offered no write control (issue 15): on every staff page they open (the
caller console, the till, the setup page, the paper-card pages, a table's console, the hand pays) the
forms and buttons that write are left out by the server (halls.access.may_write, what the API checks a
write against), the parts that read stay, and the page's scripts run without them; the operator, on the
same pages, has every control.

Screenshots left in /tmp for a look: readonly-<page>.png (the inspector's), operator-console.png.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import BrowserContext, Page, expect

from bingo.traditional.models import Game
from bingo.traditional.services import games
from halls.models import Role
from halls.services import sessions
from jackpots.rulepacks import PACKS
from jackpots.tables.models import CasinoTable
from jackpots.tables.services import tables
from tests.bingo.traditional.inspector_support import play_session
from tests.conftest import ALL_BALLS, make_user
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e

# Each page's write controls (every form or button whose command the API refuses a read-only user).
WRITES = {
    "console": [
        "#voice-mute", "#voice-volume", "#session-open-btn", "#check-blower", "#inspect-form",
        "#steps [data-step]", "#pick-form", "#create-game", "#device-form", "#void-form",
        "#session-close-btn", "#ball-form", "#correct-form", "#confirm-btn", "#claim-form",
    ],
    "cashier": [
        "#open-form", "#close-form", "#closed-print", "#sell-form", "#return-form", "#table-form",
        "#card-new", "#card-print", "#cashin-form", "#cashout-form", "#block-form", "#ticket-issue-form",
        "#ticket-redeem-form",
    ],
    "setup": [
        "#ball-set-form", "#room-form", "#device-form", "#screen-form", "#series-form", "#table-form",
        "#carrusel-form", "[data-ball-set] form", "form[data-screen]", "form[data-audio-screen]",
    ],
    "paper": ["#import form", "#stock form", "#move form"],
    "table": ["#open-hand", "#settle-hand", "#bets-form", "#cards-form", "#void-form"],
    "handpays": ["#handpays[data-can-write=true]"],
}  # fmt: skip
# What each page shows that only reads: it stays for the inspector.
READS = {
    "console": ["#console-board", "#claims-table", "#game-figures", "#prizes"],
    "cashier": ["#ops-table", "#payables-card", "#paid-card", "#card-lookup-form", "#ticket-lookup-form"],
    "setup": ["#ball-sets table", "#rooms table", "#series table"],
    "paper": ["#stock table", "[data-series='A']"],
    "table": ["#meter-panel", "#payouts", "#hand-summary", "#paytable"],
    "handpays": ["#hits-table"],
}


def played_then_on_sale(session: Any, room: Any, series: Any, caller: Any, cashier: Any) -> tuple[Any, Game]:
    """A session played (its Line and Bingo waiting at the cashier), then a new one with a game on sale."""
    play_session(session=session, room=room, series=series, caller=caller, cashier=cashier)
    new = sessions.open_session(
        room=room, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )
    game = games.open_sales(
        game=games.create_game(room=room, actor=caller, draw_source="manual"), actor=caller
    )
    return new, game


def a_table(venue: Any, operator: Any) -> CasinoTable:
    pack = PACKS["ML_PSD_CARRUSEL"]
    return tables.create_table(
        venue=venue, number=1, name="Mesa 1", game=pack.game, table_minimum=Decimal("10.00"),
        rule_pack=pack.code, actor=operator,
    )  # fmt: skip


def _pages(server_url: str, room: Any, venue: Any, table: CasinoTable) -> dict[str, str]:
    return {
        "console": f"{server_url}/console/rooms/{room.pk}/",
        "cashier": f"{server_url}/cashier/",
        "setup": f"{server_url}/setup/",
        "paper": f"{server_url}/paper/?venue={venue.pk}",
        "table": f"{server_url}/tables/{table.pk}/console/",
        "handpays": f"{server_url}/machines/handpays/?venue={venue.pk}",
    }


async def test_the_inspector_sees_no_write_control_and_the_operator_sees_them_all(
    page: Page,
    context: BrowserContext,
    server_url: str,
    venue: Any,
    room: Any,
    session: Any,
    card_series: Any,
    ball_set: Any,
    screen: Any,
    caller: Any,
    cashier: Any,
    operator: Any,
) -> None:
    session, game = await call(played_then_on_sale, session, room, card_series, caller, cashier)
    table = await call(a_table, venue, operator)
    await call(make_user, "inspectora", venue, Role.INSPECTOR)
    spanish = {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "domain": "127.0.0.1", "path": "/"}
    await context.add_cookies([spanish])  # type: ignore[list-item]
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    pages = _pages(server_url, room, venue, table)

    await log_in(page, server_url, "inspectora", "/")
    for name, url in pages.items():
        await page.goto(url)
        await page.wait_for_load_state("networkidle")
        for selector in WRITES[name]:
            await expect(page.locator(selector), f"{name}: {selector}").to_have_count(0)
        # No form that posts anywhere in the page's body (the log-out and language forms are the bar's).
        await expect(page.locator("main form[method=post]"), name).to_have_count(0)
        for selector in READS[name]:
            assert await page.locator(selector).count() >= 1, (name, selector)
        await page.screenshot(path=f"/tmp/readonly-{name}.png", full_page=True)
    # The console still follows the game live: its figures and state come from the API.
    await page.goto(pages["console"])
    await expect(page.locator("#game-title")).to_contain_text(str(game.number))
    await expect(page.locator("#session-badge")).to_contain_text(str(session.pk))
    # The prizes waiting at the cashier are listed, with nothing to pay them with.
    await page.goto(pages["cashier"])
    await page.click("#tab-prizes")
    await expect(page.locator("#payables-table [data-payable]")).to_have_count(2)
    await expect(page.locator("[data-open-pay]")).to_have_count(0)
    # The printed-card register (read only) opens as before.
    await page.goto(f"{server_url}/paper/games/{game.pk}/")
    await expect(page.locator("#register")).to_be_visible()
    assert errors == [], errors

    # The operator, on the same pages: every control is there.
    await context.clear_cookies()
    await context.add_cookies([spanish])  # type: ignore[list-item]
    await log_in(page, server_url, "operator", "/")
    for name, url in pages.items():
        await page.goto(url)
        await page.wait_for_load_state("networkidle")
        for selector in WRITES[name]:
            assert await page.locator(selector).count() >= 1, (name, selector)
        if name == "console":
            await page.screenshot(path="/tmp/operator-console.png", full_page=True)
    await page.goto(pages["cashier"])
    await page.click("#tab-prizes")
    await expect(page.locator("[data-open-pay]")).to_have_count(2)
    assert errors == [], errors
