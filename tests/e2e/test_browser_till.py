"""The till in a real browser (issue 12): a cashier opens a shift with a counted float, sells a range, pays a
Line winner, issues a ticket and redeems it, closes the shift with a counted difference that a witness
signs, and prints the shift report; the header's running totals follow every step.

The cashier here is a user of its own ("cajera") who is off shift until the page opens one; the Line is
made through the services (draw, claim, confirm) while the page watches.

Screenshots at 1280×800 are left in /tmp for a look: till-shift.png, till-sales.png, till-prizes.png,
till-tickets.png, till-cards.png, till-closed.png, till-report.png.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from playwright.async_api import Page, ViewportSize, expect

from bingo.cards import CardGrid
from bingo.models import Card, CardSeries, Game
from bingo.services import claims, draw, games
from halls.cashier.models import Payable, PlayerCard, Shift, Till
from halls.cashier.services import shifts
from halls.models import Role, Venue
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e

TILL_VIEWPORT: ViewportSize = {"width": 1280, "height": 800}


def till_and_cashier(venue: Venue) -> tuple[Till, Any, Any]:
    till = Till.objects.create(venue=venue, name="Caja Norte")
    cashier = make_user("cajera", venue, Role.CASHIER)
    witness = make_user("encargado", venue, Role.CASHIER)
    return till, cashier, witness


def line_of_card_7(game: Game, series: CardSeries, caller: Any) -> int:
    """Sales closed, the draw started, card 7's top row drawn, its Line claimed and confirmed: the prize
    waits at the cashier. Returns the payable's id."""
    game = games.close_sales(game=game, actor=caller)
    game = games.start_draw(game=game, actor=caller)
    grid = CardGrid.from_json(Card.objects.get(series=series, serial=7).grid)
    for number in sorted(n for n in grid.rows[0] if n):
        draw.enter_ball(game=game, number=number, actor=caller)
    claim = claims.file_claim(game=game, kind="line", series_code=series.code, serial=7, actor=caller)
    assert claim.valid, claim.reason
    claims.confirm_claims(game=game, kind="line", actor=caller)
    return Payable.objects.get(venue_id=game.room.venue_id, kind="line").pk


async def money_of(page: Page, selector: str) -> str:
    return (await page.locator(selector).inner_text()).strip()


def shift_of(venue: Venue, float_amount: str) -> tuple[Any, Shift]:
    till, cashier, _witness = till_and_cashier(venue)
    return cashier, shifts.open_shift(
        till=till, cashier=cashier, float_amount=Decimal(float_amount), actor=cashier
    )


async def test_player_cards_at_the_till(page: Page, server_url: str, venue: Venue) -> None:
    """A new card, cash-in in cash and by bank card, its history, a cash-out of the rest, a lost card blocked
    and then refused; the header's expected cash and bank card follow."""
    await call(shift_of, venue, "100.00")
    await page.set_viewport_size(TILL_VIEWPORT)
    await log_in(page, server_url, "cajera", "/cashier/")
    await expect(page.locator("#head-state")).to_have_text("Shift open")
    await page.click("#tab-cards")
    await expect(page.locator("#panel-cards")).to_be_visible()
    await page.click("#card-new")
    await expect(page.locator("#card-msg")).to_contain_text("New card")
    number = await page.input_value("#card-number")
    assert len(number) == 16, number
    await page.fill("#cashin-amount", "30,5")
    await page.click("#cashin-form button[type=submit]")
    await expect(page.locator("#card-op-msg")).to_contain_text("€30.50 in on card")
    await expect(page.locator("#card-balance")).to_have_text("€30.50")
    await page.fill("#cashin-amount", "20")
    await page.check("input[name=cashin-means][value=bank_card]", force=True)
    await page.dblclick("#cashin-form button[type=submit]")  # a double click loads once
    await expect(page.locator("#card-balance")).to_have_text("€50.50")
    await expect(page.locator("#head-cash")).to_have_text("€130.50")
    await expect(page.locator("#head-bank")).to_have_text("€20.00")
    await expect(page.locator("#card-history tbody tr")).to_have_count(2)

    # A typed amount that is not cents is the page's refusal; more than the balance is the API's.
    await page.fill("#cashout-amount", "60")
    await page.click("#cashout-form button[type=submit]")
    await expect(page.locator("#card-op-msg")).to_contain_text("insufficient_balance")
    await page.fill("#cashout-amount", "")
    await page.click("#cashout-form button[type=submit]")  # empty: the whole balance
    await expect(page.locator("#card-op-msg")).to_contain_text("Pay €50.50 in cash")
    await expect(page.locator("#card-balance")).to_have_text("€0.00")
    await expect(page.locator("#head-cash")).to_have_text("€80.00")
    await page.screenshot(path="/tmp/till-cards.png")

    # Scanned by its QR code ("TJ:<number>"), blocked as lost, then refused.
    await page.fill("#card-number", f"TJ:{number}")
    await page.press("#card-number", "Enter")
    await expect(page.locator("#card-title")).to_contain_text(number[:4])
    await page.fill("#block-reason", "Perdida")
    await page.click("#block-form button[type=submit]")
    await expect(page.locator("#card-state")).to_have_text("Blocked")
    await expect(page.locator("#cashin-form button[type=submit]")).to_be_disabled()
    card = await call(PlayerCard.objects.get, number=number)
    assert card.state == "blocked"
