"""The electronic game's display record in a real browser (issue 28), in Spanish: the inspector's page shows
the terminal that missed three balls (shown only on reconnecting) and the ball it never showed, and answers
the dispute for one of them; the operator's watch flags the screen and the terminal that have not shown the
current ball.

Screenshots left in /tmp for a look: acks-electronic-record.png, acks-electronic-watch.png.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings as django_settings
from playwright.async_api import BrowserContext, Page, expect

from halls.models import Role
from tests.bingo.electronic.test_display_record import play
from tests.bingo.electronic.test_game_known_balls import BALLS
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e


async def test_the_record_shows_a_terminals_gaps_and_the_watch_flags_it(
    context: BrowserContext,
    page: Page,
    server_url: str,
    venue: Any,
    operator: Any,
    cashier: Any,
    settings: Any,
) -> None:
    settings.HALL_ACK_LATE_SECONDS = 0  # the last ball is overdue at once for whoever has not shown it
    spanish = {
        "name": django_settings.LANGUAGE_COOKIE_NAME,
        "value": "es",
        "domain": "127.0.0.1",
        "path": "/",
    }
    await context.add_cookies([spanish])  # type: ignore[list-item]
    speciality, game, screen, first, second = await call(play, venue, operator, cashier)

    await call(make_user, "inspectora", venue, Role.INSPECTOR)
    await log_in(page, server_url, "inspectora", f"/inspector/electronic/games/{game.pk}/")
    section = page.locator('section[data-section="screens"]')
    await expect(section).to_contain_text("Lo que mostró cada pantalla y terminal")
    t2 = section.locator(f'tr[data-kind="terminal"][data-screen="{second.pk}"]')
    await expect(t2).to_have_attribute("data-gaps", "4")
    gaps = " ".join(str(b) for b in (BALLS[1], BALLS[2], BALLS[3], BALLS[6]))
    await expect(t2.locator("[data-gap-balls]")).to_have_attribute("data-gap-balls", gaps)
    await expect(t2).to_contain_text("al reconectar")
    await expect(t2).to_contain_text("Terminal de jugador")
    t1 = section.locator(f'tr[data-kind="terminal"][data-screen="{first.pk}"]')
    await expect(t1).to_have_attribute("data-gaps", "0")
    await page.screenshot(path="/tmp/acks-electronic-record.png", full_page=True)

    # "My terminal never showed it": one ball on every screen and terminal.
    await page.fill("#dispute-ball", str(BALLS[2]))
    await page.press("#dispute-ball", "Enter")
    dispute = page.locator(f'[data-dispute="{BALLS[2]}"]')
    await expect(dispute.locator(f'tr[data-kind="terminal"][data-screen="{second.pk}"]')).to_have_attribute(
        "data-how", "snapshot"
    )
    await expect(dispute.locator(f'tr[data-kind="terminal"][data-screen="{first.pk}"]')).to_have_attribute(
        "data-how", "live"
    )
    await expect(dispute.locator(f'tr[data-kind="screen"][data-screen="{screen.pk}"]')).to_have_attribute(
        "data-how", "live"
    )
    await page.screenshot(path="/tmp/acks-electronic-dispute.png", full_page=True)

    watch = await context.new_page()
    await log_in(watch, server_url, "operator", f"/electronic/specialities/{speciality.pk}/watch/")
    late = watch.locator("#screens-late")
    await expect(late).to_be_visible(timeout=10_000)
    await expect(late).to_contain_text("T-2")
    await expect(late).to_contain_text("Pantalla de sala")
    await expect(late).not_to_contain_text("T-1")
    await expect(late).to_contain_text("pantallas o terminales")
    await expect(watch.locator(f'li[data-kind="terminal"][data-screen="{second.pk}"]')).to_have_attribute(
        "data-state", "late"
    )
    await expect(watch.locator(f'li[data-kind="terminal"][data-screen="{first.pk}"]')).to_have_attribute(
        "data-state", "shown"
    )
    await watch.screenshot(path="/tmp/acks-electronic-watch.png", full_page=True)
