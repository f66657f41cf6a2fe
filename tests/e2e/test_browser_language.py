"""The JavaScript's words and figures in the page's language, in a real browser: a Spanish venue's screen
reads Spanish with Spanish money ("1.234,50 €"), and so does the console of a person who asked for Spanish;
the console reads English when the person asks for English (set_language's cookie), while the hall screen
keeps its venue's Spanish until the venue itself speaks English.

Screenshots left in /tmp for a look: language-{console,screen}-{es,en}.png.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import BrowserContext, Page, expect

from bingo.traditional.models import CardSeries, Game
from bingo.traditional.services import draw, games, sales
from halls.models import Venue
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e

NBSP = "\u00a0"


def drawing_with_one_ball(game: Game, series: CardSeries, caller: Any, cashier: Any) -> Game:
    game = games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=series, first=1, last=60, actor=cashier)  # 60 × 2,00 €
    game = games.close_sales(game=game, actor=caller)
    game = games.start_draw(game=game, actor=caller)
    draw.enter_ball(game=game, number=45, actor=caller)
    return game


async def staff_language(context: BrowserContext, server_url: str, language: str) -> None:
    """What set_language leaves: its cookie, which wins over the context's Accept-Language."""
    await context.add_cookies(
        [{"name": settings.LANGUAGE_COOKIE_NAME, "value": language, "domain": "127.0.0.1", "path": "/"}]
    )


async def formatted(page: Page, amount: str) -> str:
    text: str = await page.evaluate("(amount) => HallFormat.money(amount, 'EUR')", amount)
    return text


async def test_a_spanish_venue_reads_spanish_and_a_person_may_ask_for_english(
    page: Page,
    context: BrowserContext,
    server_url: str,
    room: Any,
    screen: Any,
    manual_game: Game,
    card_series: CardSeries,
    ball_set: Any,
    caller: Any,
    cashier: Any,
) -> None:
    await call(drawing_with_one_ball, manual_game, card_series, caller, cashier)
    hall = await context.new_page()
    await hall.goto(f"{server_url}/screens/{screen.token}/")
    await expect(hall.locator("body")).to_have_attribute("data-stream", "live")
    await expect(hall.locator("#game-state")).to_have_text("En juego")
    await expect(hall.locator("#ball-ordinal")).to_have_text("Bola 1 de 90")
    await expect(hall.locator("#bingo-prize")).to_have_text(f"60,00{NBSP}€")
    assert await formatted(hall, "1234.5") == f"1.234,50{NBSP}€"
    await hall.screenshot(path="/tmp/language-screen-es.png")

    # A person who asked for Spanish: the console is Spanish, words and figures.
    await staff_language(context, server_url, "es")
    console = f"/console/rooms/{room.pk}/"
    await log_in(page, server_url, "caller", console)
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await expect(page.locator("#game-badge")).to_have_text(re.compile(r"^Partida 1 · "))
    await expect(page.locator("#console-ordinal")).to_have_text("Bola 1 de 90")
    await expect(page.locator("#fig-sales")).to_have_text(f"120,00{NBSP}€")
    await expect(page.locator("#draw-hint")).to_have_text("Siguiente: bola 2 de 90")
    assert await formatted(page, "1234.5") == f"1.234,50{NBSP}€"
    await page.screenshot(path="/tmp/language-console-es.png", full_page=True)

    # English when asked (set_language's cookie): the console's JavaScript says it in English...
    await staff_language(context, server_url, "en")
    await page.reload()
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await expect(page.locator("#game-badge")).to_have_text("Game 1 · Drawing")
    await expect(page.locator("#console-ordinal")).to_have_text("Ball 1 of 90")
    await expect(page.locator("#fig-sales")).to_have_text("€120.00")
    assert await formatted(page, "1234.5") == "€1,234.50"
    await page.screenshot(path="/tmp/language-console-en.png", full_page=True)

    # ... and the hall screen keeps its venue's language, whatever a browser asks for.
    await hall.reload()
    await expect(hall.locator("body")).to_have_attribute("data-stream", "live")
    await expect(hall.locator("#ball-ordinal")).to_have_text("Bola 1 de 90")
    await expect(hall.locator("#bingo-prize")).to_have_text(f"60,00{NBSP}€")
    await expect(hall.locator("#ball-ordinal")).to_have_text("Bola 1 de 90")
    await expect(hall.locator("#bingo-prize")).to_have_text(f"60,00{NBSP}€")

    # A venue whose language is English: its screen's JavaScript speaks English, with English money.
    await call(Venue.objects.filter(pk=room.venue_id).update, language="en")
    await hall.reload()
    await expect(hall.locator("body")).to_have_attribute("data-stream", "live")
    await expect(hall.locator("#ball-ordinal")).to_have_text("Ball 1 of 90")
    await expect(hall.locator("#game-state")).to_have_text("In play")
    await expect(hall.locator("#bingo-prize")).to_have_text("€60.00")
    await hall.screenshot(path="/tmp/language-screen-en.png")
