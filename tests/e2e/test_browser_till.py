"""The till in a real browser (issue 12): a cashier opens a shift with a counted float, sells a range, pays a
Line winner, issues a ticket and redeems it, closes the shift with a counted difference that a witness
signs, and prints the shift report; the header's running totals follow every step.

The cashier here is a user of its own ("cajera") who is off shift until the page opens one; the Line is
made through the services (draw, claim, confirm) while the page watches.

Screenshots at 1280×800 are left in /tmp for a look: till-shift.png, till-sales.png, till-prizes.png,
till-tickets.png, till-cards.png, till-closed.png, till-report.png.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from playwright.async_api import Page, ViewportSize, expect

from bingo.cards import CardGrid
from bingo.traditional.models import Card, CardSeries, Game
from bingo.traditional.services import claims, draw, games
from halls.cashier.models import Payable, PlayerCard, Shift, ShiftState, Ticket, TicketState, Till
from halls.cashier.services import player_cards, shifts
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


async def pdf_head(page: Page, pdf: Page) -> str:
    """The first bytes of the PDF a till opened in a tab of its own (a blob: address), the tab closed."""
    assert pdf.url.startswith("blob:"), pdf.url
    first_bytes = (
        "(url) => fetch(url).then(r => r.arrayBuffer())"
        ".then(b => String.fromCharCode(...new Uint8Array(b, 0, 5)))"
    )
    head: str = await page.evaluate(first_bytes, pdf.url)
    await pdf.close()
    return head


async def test_a_cashier_works_a_shift_at_the_till(
    page: Page, server_url: str, venue: Venue, manual_game: Game, card_series: CardSeries, caller: Any
) -> None:
    _till, cashier, witness = await call(till_and_cashier, venue)
    await call(games.open_sales, game=manual_game, actor=caller)
    await page.set_viewport_size(TILL_VIEWPORT)  # a till's screen
    await log_in(page, server_url, "cajera", "/cashier/")

    # No shift yet: the Shift tab, the header says so; a float typed with a comma opens it.
    await expect(page.locator("#head-state")).to_have_text("No open shift")
    await expect(page.locator("#panel-shift")).to_be_visible()
    await expect(page.locator("#open-till")).to_contain_text("Caja Norte")
    await page.fill("#open-float", "150,5")
    await page.screenshot(path="/tmp/till-shift-open.png")
    await page.click("#open-form button[type=submit]")
    await expect(page.locator("#head-state")).to_have_text("Shift open")
    await expect(page.locator("#head-till")).to_have_text("Caja Norte")
    await expect(page.locator("#head-cash")).to_have_text("€150.50")
    await expect(page.locator("#head-bank")).to_have_text("€0.00")
    await expect(page.locator("#shift-facts [data-fact=float]")).to_have_text("€150.50")
    shift = await call(Shift.objects.get, cashier=cashier, state=ShiftState.OPEN)
    assert shift.float_amount == Decimal("150.50")
    await page.screenshot(path="/tmp/till-shift.png")

    # Sales: a range of 30 cards at 2,00 € is cash into the drawer.
    await page.click("#tab-sales")
    await expect(page.locator("#game-title")).to_have_text("Sala 1 · game 1")
    await page.fill("#sell-first", "1")
    await page.fill("#sell-last", "30")
    await page.click("#sell-form button[type=submit]")
    await expect(page.locator("#sell-msg")).to_contain_text("Sold series A no. 1 to 30: 30 cards")
    await expect(page.locator("#head-cash")).to_have_text("€210.50")
    await expect(page.locator("#head-counts [data-kind=sale]")).to_contain_text("1")
    await page.screenshot(path="/tmp/till-sales.png")

    # A Line: 10 % of 60,00 € waits at the cashier, and shows on the Prizes tab by itself.
    # It arrives over the venue's cashier stream (the slow poll is 20 s away): the tab's count shows it.
    await expect(page.locator("body")).to_have_attribute("data-till-stream", "live")
    payable_id = await call(line_of_card_7, manual_game, card_series, caller)
    await expect(page.locator("#prizes-count")).to_have_text("1", timeout=4000)
    await page.click("#tab-prizes")
    row = page.locator(f"#payables-table tr[data-payable='{payable_id}']")
    await expect(row).to_contain_text("Line")
    await expect(row).to_contain_text("€6.00")
    await row.locator("[data-open-pay]").click()
    await page.screenshot(path="/tmp/till-prizes.png")
    async with page.context.expect_page() as opened:  # the winner's receipt prints with the payout
        await row.locator("form.till-pay button[type=submit]").dblclick()  # a double click pays once
    await expect(page.locator("#payables-msg")).to_contain_text("Paid €6.00 in cash")
    await expect(page.locator("#payables-table")).to_contain_text("No prize is waiting.")
    await expect(page.locator("#paid-table")).to_contain_text("€6.00")
    await expect(page.locator("#head-cash")).to_have_text("€204.50")
    payable = await call(Payable.objects.get, pk=payable_id)
    assert (payable.state, payable.method, payable.paid_by_id) == ("paid", "cash", cashier.pk)
    assert await pdf_head(page, await opened.value) == "%PDF-"
    await expect(page.locator("#receipt-msg")).to_contain_text("Opened as a PDF")
    await expect(page.locator("#paid-table [data-receipt]")).to_have_text(f"Receipt {payable.receipt}")

    # A ticket for 20,00 € in cash, then redeemed for cash: the drawer is back where it was.
    await page.click("#tab-tickets")
    await page.fill("#ticket-amount", "20")
    await page.click("#ticket-issue-form button[type=submit]")
    await expect(page.locator("#ticket-issue-msg")).to_contain_text("issued for €20.00")
    await expect(page.locator("#head-cash")).to_have_text("€224.50")
    ticket = await call(Ticket.objects.get, venue=venue)
    await page.fill("#ticket-number", ticket.number)
    await page.press("#ticket-number", "Enter")  # as a barcode scanner types it
    await expect(page.locator("#ticket-view-amount")).to_have_text("€20.00")
    await expect(page.locator("#ticket-view-state")).to_have_text("Valid")
    await page.dblclick("#ticket-redeem-form button[type=submit]")
    await expect(page.locator("#ticket-redeem-msg")).to_contain_text("pay €20.00 in cash")
    await expect(page.locator("#head-cash")).to_have_text("€204.50")
    await expect(page.locator("#ticket-recent tbody tr")).to_have_count(2)
    ticket = await call(Ticket.objects.get, pk=ticket.pk)
    assert ticket.state == TicketState.REDEEMED
    # Looked up again, it says it was redeemed, and it cannot be redeemed twice.
    await page.press("#ticket-number", "Enter")
    await expect(page.locator("#ticket-view-state")).to_have_text("Redeemed")
    await expect(page.locator("#ticket-redeem-form")).to_be_hidden()
    await page.screenshot(path="/tmp/till-tickets.png")

    # The header counts the shift's operations.
    await expect(page.locator("#head-counts")).to_contain_text("Prize paid")

    # The cash-up: 0,50 € short. Without a witness the API refuses and says why, next to the form.
    await page.click("#tab-shift")
    await expect(page.locator("#shift-expected tr[data-means=cash]")).to_contain_text("€204.50")
    await page.fill("#close-cash", "204,00")
    await page.fill("#close-bank", "0")
    await expect(page.locator("#close-diff")).to_contain_text("Short by €0.50")
    await page.click("#close-form button[type=submit]")
    await expect(page.locator("#close-msg")).to_contain_text("witness")
    assert (await call(Shift.objects.get, pk=shift.pk)).state == ShiftState.OPEN
    await page.fill("#close-witness", "encargado")
    await page.fill("#close-witness-password", "pw-encargado")
    await page.fill("#close-note", "Falta una moneda de 50 céntimos")
    await page.click("#close-form button[type=submit]")
    await expect(page.locator("#closed-card")).to_be_visible()
    await expect(page.locator("#closed-facts [data-fact=difference]")).to_have_text("-€0.50")
    await expect(page.locator("#closed-facts [data-fact=witness]")).to_have_text("encargado")
    await expect(page.locator("#head-state")).to_have_text("No open shift")
    shift = await call(Shift.objects.get, pk=shift.pk)
    closed = (ShiftState.CLOSED, Decimal("-0.50"), witness.pk)
    assert (shift.state, shift.difference, shift.witness_id) == closed
    await page.screenshot(path="/tmp/till-closed.png")

    # The shift report printed at the till: no printer there, so a PDF.
    async with page.context.expect_page() as opened:
        await page.click("#closed-print")
    assert await pdf_head(page, await opened.value) == "%PDF-"
    await expect(page.locator("#closed-msg")).to_contain_text("Opened as a PDF")

    # And its printable page, with the shift's figures.
    async with page.context.expect_page() as opened:
        await page.click("#closed-report-link")
    report = await opened.value
    await report.wait_for_load_state()
    await report.set_viewport_size(TILL_VIEWPORT)
    text = await report.locator("body").inner_text()
    # Amounts as the till writes them, with their currency (the page's language: English here).
    amounts = ("€150.50", "€60.00", "€6.00", "€20.00", "€204.50", "€204.00", "-€0.50")
    for figure in ("Caja Norte", "cajera", "encargado", *amounts):
        assert figure in text, (figure, text)
    await report.screenshot(path="/tmp/till-report.png", full_page=True)
    await expect(page.locator("#page-msg")).to_be_hidden()
    assert re.search(r"Falta una moneda", text)


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
    await expect(page.locator("#card-op-msg")).to_have_attribute("data-code", "insufficient_balance")
    await expect(page.locator("#card-op-msg .msg__text")).to_have_text(
        "The card's balance is €50.50: €60.00 is more than it holds."
    )
    await page.fill("#cashout-amount", "")
    await page.click("#cashout-form button[type=submit]")  # empty: the whole balance
    await expect(page.locator("#card-op-msg")).to_contain_text("Pay €50.50 in cash")
    await expect(page.locator("#card-balance")).to_have_text("€0.00")
    await expect(page.locator("#head-cash")).to_have_text("€80.00")
    await page.screenshot(path="/tmp/till-cards.png")
    await page.set_viewport_size({"width": 1920, "height": 1080})  # a bigger till screen
    await page.screenshot(path="/tmp/till-cards-1920.png")
    await page.set_viewport_size(TILL_VIEWPORT)

    # The till has no printer: the card prints as a PDF, opened in a tab of its own.
    async with page.context.expect_page() as opened:
        await page.click("#card-print")
    assert await pdf_head(page, await opened.value) == "%PDF-"
    await expect(page.locator("#card-op-msg")).to_contain_text("Opened as a PDF")

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


def balance_of(number: str) -> Decimal:
    balance: Decimal = PlayerCard.objects.select_related("account").get(number=number).account.balance
    return balance


def card_with(venue: Venue, cashier: Any, amount: str) -> str:
    card = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    player_cards.cash_in(card=card, amount=Decimal(amount), means="cash", key="e2e-load", actor=cashier)
    return card.number


async def test_tickets_from_and_into_a_player_card(page: Page, server_url: str, venue: Venue) -> None:
    """A ticket for a card's whole balance, loaded back into the card; a scanned number that is no ticket and
    a second redemption are refused with the API's words, next to the form."""
    cashier, _shift = await call(shift_of, venue, "50.00")
    number = await call(card_with, venue, cashier, "30.00")
    await page.set_viewport_size(TILL_VIEWPORT)
    await log_in(page, server_url, "cajera", "/cashier/")
    await page.click("#tab-tickets")
    await expect(page.locator("#head-cash")).to_have_text("€80.00")
    await page.check("input[name=ticket-source][value=card]", force=True)
    await page.fill("#ticket-card", number)
    await page.click("#ticket-issue-form button[type=submit]")  # no amount: the card's whole balance
    await expect(page.locator("#ticket-issue-msg")).to_contain_text("issued for €30.00")
    ticket = await call(Ticket.objects.get, venue=venue)
    assert await call(balance_of, number) == Decimal("0.00")

    await page.fill("#ticket-number", "123")
    await page.press("#ticket-number", "Enter")
    await expect(page.locator("#ticket-msg")).to_have_attribute("data-code", re.compile(r"^\w+$"))
    await expect(page.locator("#ticket-msg .msg__text")).to_be_visible()
    await page.fill("#ticket-number", ticket.number)
    await page.press("#ticket-number", "Enter")
    await expect(page.locator("#ticket-view-amount")).to_have_text("€30.00")
    await page.check("input[name=redeem-to][value=card]", force=True)
    await page.fill("#redeem-card", number)
    await page.click("#ticket-redeem-form button[type=submit]")
    await expect(page.locator("#ticket-redeem-msg")).to_contain_text(f"€30.00 onto card {number}")
    await expect(page.locator("#ticket-view-state")).to_have_text("Redeemed")
    await expect(page.locator("#ticket-life li")).to_have_count(2)
    await expect(page.locator("#head-cash")).to_have_text("€80.00")  # no cash moved
    assert await call(balance_of, number) == Decimal("30.00")
    await page.screenshot(path="/tmp/till-tickets-card.png")
