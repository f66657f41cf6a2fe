"""The operator's paper cards page in a real browser, in Spanish: a 600-card file with one bad card is refused
with the card named in the report; the corrected file is imported; its paper is moved by ranges of serials
(1–300 into stock, 1–120 issued to the game, 101–120 returned, 121–130 destroyed) and a range that does not
fit is refused naming its serials; a game's printed-card register lists the sheets printed for it; a card's QR
page answers its check.

The cashier sells a player's cards and prints them at once at the till (a PDF: the till has no printer).

Screenshots left in /tmp for a look: paper-refused-es.png, paper-imported-es.png, paper-stock-es.png,
paper-register-es.png, card-check-es.png, till-table-print-es.png.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import BrowserContext, Page, expect

from bingo.traditional.models import Card, CardSeries, Game, PrintedCards
from bingo.traditional.services import games, paper
from halls.models import Venue
from tests.bingo.traditional.paper_support import SPOILED, bad_file, good_file
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e


def print_for(game: Game, operator: Any) -> str:
    series = CardSeries.objects.get(code="P")
    paper.print_sheets(series=series, game=game, first=1, last=12, actor=operator, base_url="http://x/")
    card = Card.objects.get(series=series, serial=3)
    return f"/c/{series.pk}/3/{card.security_code}/"


async def test_the_paper_page_imports_a_series_with_its_report_and_moves_its_stock(
    page: Page,
    context: BrowserContext,
    server_url: str,
    venue: Venue,
    operator: Any,
    manual_game: Game,
    tmp_path: Path,
) -> None:
    (tmp_path / "bad.csv").write_bytes(bad_file())
    (tmp_path / "good.csv").write_bytes(good_file())
    spanish = {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "domain": "127.0.0.1", "path": "/"}
    await context.add_cookies([spanish])  # type: ignore[list-item]
    await log_in(page, server_url, operator.username, "/paper/")
    await expect(page.locator("h1")).to_contain_text("Cartones de papel")

    async def upload(path: Path) -> None:
        form = page.locator("#import form")
        await form.locator('input[name="code"]').fill("P")
        await form.locator('input[name="face_value"]').fill("1,50")
        await form.locator('input[name="file"]').set_input_files(str(path))
        await form.locator('button[type="submit"]').click()
        await page.wait_for_load_state()

    await upload(tmp_path / "bad.csv")
    await expect(page.locator("#error")).to_have_attribute("data-code", "bad_cards")
    bad = page.locator(f'#report tr[data-serial="{SPOILED}"]')
    await expect(bad).to_have_count(1)
    await expect(bad).to_contain_text("Fila 1")
    await expect(page.locator('#stock tr[data-series="P"]')).to_have_count(0)
    await page.screenshot(path="/tmp/paper-refused-es.png", full_page=True)

    await upload(tmp_path / "good.csv")
    await expect(page.locator("#imported")).to_contain_text("600")
    row = page.locator('#stock tr[data-series="P"]')
    await expect(row).to_have_attribute("data-state", "received")
    await page.screenshot(path="/tmp/paper-imported-es.png", full_page=True)

    async def move(first: str, last: str, to_state: str, game: str = "") -> None:
        form = page.locator("#move form")
        await form.locator('select[name="series"]').select_option(label="P (1–600)")
        await form.locator('input[name="first"]').fill(first)
        await form.locator('input[name="last"]').fill(last)
        await form.locator('select[name="to_state"]').select_option(to_state)
        await form.locator('select[name="game"]').select_option(game)
        await form.locator('button[type="submit"]').click()
        await page.wait_for_load_state()

    await move("1", "300", "in_stock")
    await move("1", "120", "issued", str(manual_game.pk))
    await move("101", "120", "returned")
    await move("121", "130", "destroyed")
    row = page.locator('#stock tr[data-series="P"]')
    await expect(row).to_have_attribute("data-state", "mixed")
    await expect(row.locator('li[data-first="1"][data-last="100"]')).to_have_attribute("data-state", "issued")
    await expect(row.locator('li[data-first="101"][data-last="120"]')).to_contain_text("Devuelto")
    await expect(row.locator('.counts li[data-state="destroyed"]')).to_have_text("Destruido: 10")
    # Issuing serials already issued, returned or destroyed: refused, naming them, nothing moved.
    await move("95", "140", "issued", str(manual_game.pk))
    await expect(page.locator("#error")).to_have_attribute("data-code", "bad_stock_move")
    await expect(page.locator("#error")).to_contain_text("121–130: destruidos")
    await expect(page.locator("#error")).to_contain_text("No se ha movido nada")
    await expect(row.locator('li[data-first="131"][data-last="300"]')).to_have_attribute(
        "data-state", "in_stock"
    )
    await page.screenshot(path="/tmp/paper-stock-es.png", full_page=True)

    check_path = await call(print_for, manual_game, operator)
    await page.goto(f"{server_url}/paper/games/{manual_game.pk}/")
    await expect(page.locator('#register tr[data-medium="hall"]')).to_contain_text("1–12")
    await page.screenshot(path="/tmp/paper-register-es.png", full_page=True)

    await page.goto(f"{server_url}{check_path}")
    await expect(page.locator("#check")).to_have_attribute("data-sold", "no")
    await expect(page.locator("#check")).to_contain_text("No vendido")
    await page.screenshot(path="/tmp/card-check-es.png", full_page=True)


async def test_the_cashier_sells_and_prints_a_players_cards_at_the_table(
    page: Page,
    context: BrowserContext,
    server_url: str,
    venue: Venue,
    caller: Any,
    cashier: Any,
    manual_game: Game,
    card_series: CardSeries,
) -> None:
    await call(games.open_sales, game=manual_game, actor=caller)
    spanish = {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "domain": "127.0.0.1", "path": "/"}
    await context.add_cookies([spanish])  # type: ignore[list-item]
    await page.set_viewport_size({"width": 1366, "height": 900})
    await log_in(page, server_url, cashier.username, "/cashier/")
    await page.click("#tab-sales")
    await expect(page.locator("#table-series")).to_have_value("A")
    await page.fill("#table-count", "3")
    await page.click("#table-form button[type=submit]")
    await expect(page.locator("#table-msg")).to_contain_text("PDF")  # the till has no printer
    await expect(page.locator("#total-cards")).to_have_text("3")
    printed = await call(
        lambda: list(PrintedCards.objects.values_list("medium", "first_serial", "last_serial"))
    )
    assert printed == [("table", 1, 3)]
    await page.screenshot(path="/tmp/till-table-print-es.png", full_page=True)
