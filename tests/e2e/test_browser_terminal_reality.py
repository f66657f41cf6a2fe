"""The terminal's reality check and a player's limit in a real browser, in Spanish: with a short interval
(a settings override), the page shows the time played and the money staked, won and net since the card went
in, a purchase waits until the player acknowledges it; a purchase past the player's daily spend limit is
refused with the limit, what is left and when it resets.

Screenshots at 1280×800 go to /work/notes/shots/ (terminal-reality-*.png) for a look.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from bingo.electronic.models import ElectronicGame
from bingo.electronic.services import games
from halls.cashier.models import PlayerCard, RealityCheck
from halls.cashier.services import limits
from halls.models import AuditEntry, Venue
from tests.e2e.browser_support import call
from tests.e2e.test_browser_terminal import SMALL, a_hall

pytestmark = pytest.mark.e2e
ACCEPT_LANGUAGE = "es"  # the API answers the page in Spanish too (the staff cookie the context sets)

SHOTS = Path("/work/notes/shots")
EVERY_MINUTES = 0.25  # a reality check every 15 s


@pytest.fixture
def steps() -> Iterator[list[tuple[int, int, float]]]:
    """The ball steps the engine enqueues, collected (no game is drawn here)."""
    collected: list[tuple[int, int, float]] = []
    games.register_draw_enqueuer(lambda game, ordinal, wait: collected.append((game, ordinal, wait)))
    yield collected
    from bingo.electronic import tasks

    games.register_draw_enqueuer(tasks.enqueue_draw)


def a_limit_and_a_long_sale(card: PlayerCard, cashier: Any, game: ElectronicGame) -> None:
    """A daily spend limit of 1,50 € on the card; game 1 on sale for the whole test."""
    limits.set_limit(card=card, kind="spend", period="day", amount="1.50", actor=cashier)
    ElectronicGame.objects.filter(pk=game.pk).update(sales_close_at=game.sales_close_at + timedelta(hours=1))


def acknowledged(card: PlayerCard) -> list[tuple[int, Decimal]]:
    return list(
        RealityCheck.objects.filter(session__card=card).values_list("number", "staked").order_by("number")
    )


def audited() -> int:
    return AuditEntry.objects.filter(action="cashier.reality_check_acknowledged").count()


async def test_the_reality_check_stops_play_until_acknowledged_and_the_limit_refuses_in_spanish(
    page: Page,
    server_url: str,
    venue: Venue,
    operator: Any,
    cashier: Any,
    steps: Any,
    settings: Any,
) -> None:
    settings.HALL_LIMITS_REALITY_CHECK_MINUTES = EVERY_MINUTES
    terminal, token, card, game = await call(a_hall, venue, operator, cashier)
    await call(a_limit_and_a_long_sale, card, cashier, game)
    await page.set_viewport_size(SMALL)
    await page.goto(f"{server_url}/electronic/terminal/?lang=es#{terminal.device_id}:{token}")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await page.fill("#card-input", card.number)
    await page.press("#card-input", "Enter")
    await expect(page.locator("#balance")).to_have_text("20,00 €")
    await expect(page.locator("#reality")).to_be_hidden()

    # Two cards (1,00 €) at once, then the check comes due: the overlay, the buy button off.
    await page.click(".t-size[data-size='2']")
    await page.click("#buy")
    await expect(page.locator("#buy-msg")).to_contain_text("2 cartones comprados")
    overlay = page.locator("#reality")
    await expect(overlay).to_be_visible(timeout=40_000)
    await expect(page.locator("#reality-title")).to_have_text("Control de realidad")
    await expect(page.locator("#reality-staked")).to_have_text("1,00 €")
    await expect(page.locator("#reality-won")).to_have_text("0,00 €")
    await expect(page.locator("#reality-net")).to_have_text("1,00 €")
    await expect(page.locator("#reality-played")).to_contain_text("0 h 00 min")
    await expect(page.locator("#reality-lead")).to_contain_text("Lleva jugando")
    await expect(page.locator("#buy")).to_be_disabled()
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / "terminal-reality-1280-check.png"))

    # Acknowledged: recorded and audited once; the overlay goes, play goes on.
    await page.click("#reality-ok")
    await expect(overlay).to_be_hidden()
    assert await call(acknowledged, card) == [(1, Decimal("1.00"))]
    assert await call(audited) == 1

    # Two cards more (1,00 €) would pass the daily spend limit of 1,50 €: refused, in Spanish, nothing bought.
    await page.click("#buy")
    message = page.locator("#buy-msg")
    await expect(message).to_contain_text("límite diario de gasto")
    await expect(message).to_contain_text("0,50 €")
    await page.screenshot(path=str(SHOTS / "terminal-reality-1280-limit.png"))
    await expect(page.locator("#balance")).to_have_text("19,00 €")
    await expect(page.locator(".t-card")).to_have_count(2)

    # The Limits tab: the daily spend limit and what is left; lowered at once, a raise waits its cooling-off.
    await page.click("#tab-limits")
    daily = page.locator(".t-limit[data-limit='spend:day']")
    await expect(daily).to_contain_text("Límite diario de gasto")
    await expect(daily.locator(".t-limit__amount")).to_have_text("1,50 €")
    await expect(daily).to_contain_text("Quedan 0,50 €")
    await page.select_option("#limit-which", "spend:day")
    await page.fill("#limit-amount", "1,20")
    await page.click("#limit-save")
    await expect(page.locator("#limit-msg")).to_contain_text("se aplica ya")
    await expect(daily.locator(".t-limit__amount")).to_have_text("1,20 €")
    await page.fill("#limit-amount", "5")
    await page.click("#limit-save")
    await expect(page.locator("#limit-msg")).to_contain_text("El cambio se aplica desde")
    await expect(daily.locator(".t-limit__pending")).to_contain_text("5,00 €")
    await expect(daily.locator(".t-limit__amount")).to_have_text("1,20 €")
    await page.screenshot(path=str(SHOTS / "terminal-reality-1280-limits.png"))
