"""The till, finished (issue 26), in Spanish in a real browser:

- a refusal reads as a Spanish sentence with its amounts as the page writes them ("50,00 €"), never a code;
- nothing is lost on a reload: the shift's tickets, the shift report's link and print button, open or closed;
- each prize waiting names its room and game, and the pending count is the rows listed, even while a pay
  form is open when another prize arrives;
- a slow sale says "Vendiendo…" and a second submit meanwhile is told to wait; a sale whose answer was lost
  and is sent again is answered "Ya registrada" and sells nothing more;
- a player card's number (16 digits, or 19 characters grouped as printed) is whole in every field.

Screenshots (1280×800, a till's screen) left in /tmp for a look: till-es-refusal.png,
till-es-reload-tickets.png, till-es-reload-shift.png, till-es-reload-closed.png, till-es-payables.png,
till-es-selling.png, till-es-sale-retried.png.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest
from playwright.async_api import Locator, Page, Route, ViewportSize, expect

from bingo.cards import CardGrid
from bingo.traditional.models import Card, CardSeries, Game, SaleOperation
from bingo.traditional.services import claims, draw, games, sales
from bingo.traditional.services import series as series_services
from halls.cashier.models import Payable, PayableKind, Shift, Ticket, TicketState, Till
from halls.cashier.services import payables
from halls.models import Role, Room, Venue
from halls.services import sessions
from tests.cashier_support import on_shift
from tests.conftest import ALL_BALLS, SEED, make_user
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
NBSP = "\u00a0"
TILL_VIEWPORT: ViewportSize = {"width": 1280, "height": 800}
# A player card's number as printed on it (a valid Luhn number; the page only shows it).
PRINTED_CARD = "4929 1234 5678 9012"


def cashier_on_shift(venue: Venue, float_amount: str = "100") -> Shift:
    till = Till.objects.create(venue=venue, name="Caja Sur")
    cashier = make_user("cajera", venue, Role.CASHIER)
    return on_shift(cashier, venue, float=Decimal(float_amount), till=till)


async def open_till(page: Page, server_url: str, tab: str) -> None:
    await page.set_viewport_size(TILL_VIEWPORT)
    await log_in(page, server_url, "cajera", "/cashier/")
    await expect(page.locator("#head-state")).to_have_text("Turno abierto")
    await page.click(f"#tab-{tab}")


async def whole(field: Locator) -> bool:
    """The text in an input shows whole: nothing scrolled out of sight."""
    fits: bool = await field.evaluate("(input) => input.scrollWidth <= input.clientWidth")
    return fits


async def test_a_refusal_is_a_spanish_sentence_with_its_amounts_never_a_code(
    page: Page, server_url: str, venue: Venue
) -> None:
    await call(cashier_on_shift, venue)
    await open_till(page, server_url, "cards")
    await expect(page.locator("#card-number")).to_be_visible()
    # The number as printed on the card, typed: all of it shows.
    await page.fill("#card-number", PRINTED_CARD)
    assert await whole(page.locator("#card-number"))

    await page.click("#card-new")
    await expect(page.locator("#card-balance")).to_have_text(f"0,00{NBSP}€")
    number = await page.locator("#card-number").input_value()
    assert len(number) == 16 and number.isdigit()
    assert await whole(page.locator("#card-number"))

    # 50 € out of an empty card: the API's refusal, as a Spanish sentence, amounts the Spanish way.
    await page.fill("#cashout-amount", "50")
    await page.click("#cashout-form button[type=submit]")
    refusal = page.locator("#card-op-msg")
    await expect(refusal.locator(".msg__text")).to_have_text(
        f"El saldo de la tarjeta es 0,00{NBSP}€: 50,00{NBSP}€ supera lo que tiene."
    )
    await expect(refusal).to_have_attribute("data-code", "insufficient_balance")
    shown = await page.locator("body").inner_text()
    assert "insufficient_balance" not in shown and "50.00" not in shown
    await page.screenshot(path="/tmp/till-es-refusal.png")

    # A ticket from a card: the card's number field is whole too.
    await page.click("#tab-tickets")
    await page.check("input[name=ticket-source][value=card]", force=True)
    await page.fill("#ticket-card", PRINTED_CARD)
    assert await whole(page.locator("#ticket-card"))


async def test_nothing_is_lost_on_a_reload_during_a_shift_and_after_it(
    page: Page, server_url: str, venue: Venue
) -> None:
    shift = await call(cashier_on_shift, venue)
    await open_till(page, server_url, "tickets")

    # A ticket for 20 € in cash: it is listed as this shift's, and still is after a reload.
    await page.fill("#ticket-amount", "20")
    await page.click("#ticket-issue-form button[type=submit]")
    await expect(page.locator("#ticket-issue-msg")).to_contain_text(f"emitido por 20,00{NBSP}€")
    rows = page.locator("#ticket-recent tbody tr[data-ticket]")
    await expect(rows).to_have_count(1)
    await page.reload()
    await expect(page.locator("#panel-tickets")).to_be_visible()  # the tab chosen is kept (#tickets)
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("Emitido")
    await expect(rows.first).to_contain_text(f"20,00{NBSP}€")

    # Redeemed for cash: two rows, newest first, and both after a reload.
    ticket = await call(Ticket.objects.get, venue=venue)
    await page.fill("#ticket-number", ticket.number)
    await page.press("#ticket-number", "Enter")
    await page.click("#ticket-redeem-form button[type=submit]")
    await expect(page.locator("#ticket-redeem-msg")).to_contain_text(f"pague 20,00{NBSP}€ en efectivo")
    await expect(rows).to_have_count(2)
    await page.reload()
    await expect(rows).to_have_count(2)
    await expect(rows.nth(0)).to_have_attribute("data-kind", "redeemed")
    await expect(rows.nth(0)).to_contain_text("Canjeado por efectivo")
    await expect(rows.nth(1)).to_have_attribute("data-kind", "issued")
    assert (await call(Ticket.objects.get, pk=ticket.pk)).state == TicketState.REDEEMED
    await page.screenshot(path="/tmp/till-es-reload-tickets.png")

    # The open shift's report: its page and its print button, there after a reload.
    await page.click("#tab-shift")
    await page.reload()
    report_link = page.locator("#shift-report-link")
    await expect(report_link).to_have_text("Informe del turno hasta ahora")
    await expect(report_link).to_have_attribute("href", f"/cashier/shifts/{shift.pk}/report/")
    await expect(page.locator("#shift-print")).to_have_text("Imprimir el informe del turno")
    async with page.context.expect_page() as opened:
        await page.click("#shift-print")
    pdf = await opened.value
    assert pdf.url.startswith("blob:")
    await pdf.close()
    await expect(page.locator("#shift-msg")).to_contain_text("Abierto como PDF")
    await page.screenshot(path="/tmp/till-es-reload-shift.png")

    # Closed (the count matches), then reloaded: the closed shift's cash-up and report are still offered.
    await page.fill("#close-cash", "100")
    await page.fill("#close-bank", "0")
    await page.click("#close-form button[type=submit]")
    await expect(page.locator("#closed-card")).to_be_visible()
    await page.reload()
    await expect(page.locator("#head-state")).to_have_text("Sin turno abierto")
    await expect(page.locator("#closed-card")).to_be_visible()
    await expect(page.locator("#closed-card h2")).to_have_text("Turno cerrado")
    await expect(page.locator("#closed-facts [data-fact=difference]")).to_have_text(f"0,00{NBSP}€")
    await expect(page.locator("#closed-report-link")).to_have_attribute(
        "href", f"/cashier/shifts/{shift.pk}/report/"
    )
    await expect(page.locator("#closed-print")).to_be_visible()
    await expect(page.locator("#open-card")).to_be_visible()  # and a new shift can be opened
    await page.screenshot(path="/tmp/till-es-reload-closed.png")


def line_of_card_7(game: Game, series: CardSeries, caller: Any) -> None:
    """Card 7 sold, sales closed, its top row drawn, its Line claimed and confirmed: a prize waits."""
    game = games.open_sales(game=game, actor=caller)
    cashier = make_user(f"vendedor{game.pk}", game.room.venue, Role.CASHIER)
    on_shift(cashier, game.room.venue_id)
    sales.sell_range(game=game, series=series, first=1, last=10, actor=cashier)
    game = games.close_sales(game=game, actor=caller)
    game = games.start_draw(game=game, actor=caller)
    grid = CardGrid.from_json(Card.objects.get(series=series, serial=7).grid)
    for number in sorted(n for n in grid.rows[0] if n):
        draw.enter_ball(game=game, number=number, actor=caller)
    claim = claims.file_claim(game=game, kind="line", series_code=series.code, serial=7, actor=caller)
    assert claim.valid, claim.reason
    claims.confirm_claims(game=game, kind="line", actor=caller)


def second_room_game(venue: Venue, caller: Any, operator: Any) -> tuple[Game, CardSeries]:
    """ "Sala 2", its session open and its game 1 drawn by hand, with a series of its own."""
    room = Room.objects.create(venue=venue, name="Sala 2", ball_pace_seconds=Decimal("0.5"))
    sessions.open_session(
        room=room, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )
    game = games.create_game(room=room, actor=caller, draw_source="manual")
    series = series_services.create_series(
        venue=venue, code="B", face_value=Decimal("2.00"), strips=2, actor=operator, seed=SEED
    )
    return game, series


def another_prize(venue: Venue) -> int:
    payable = payables.create_payable(
        venue_id=venue.pk,
        kind=PayableKind.TABLE,
        source="tables.seatpayout:901",
        description="Mesa 3 · asiento 1 · póquer",
        amount=Decimal("12.00"),
        actor="test",
    )
    assert payable is not None
    return payable.pk


async def test_each_prize_names_its_room_and_the_count_is_the_rows(
    page: Page,
    server_url: str,
    venue: Venue,
    manual_game: Game,
    card_series: CardSeries,
    caller: Any,
    operator: Any,
) -> None:
    other_game, other_series = await call(second_room_game, venue, caller, operator)
    assert (manual_game.number, other_game.number) == (1, 1)  # the same "Partida 1" in two rooms
    await call(line_of_card_7, manual_game, card_series, caller)
    await call(line_of_card_7, other_game, other_series, caller)
    await call(cashier_on_shift, venue)
    await open_till(page, server_url, "prizes")

    rows = page.locator("#payables-table tbody tr[data-payable]")
    await expect(rows).to_have_count(2)
    await expect(page.locator("#payables-table")).to_contain_text(
        "Sala 1 · Partida 1 · Línea · cartón A-0007"
    )
    await expect(page.locator("#payables-table")).to_contain_text(
        "Sala 2 · Partida 1 · Línea · cartón B-0007"
    )
    await expect(page.locator("#prizes-count")).to_have_text("2")
    await expect(page.locator("#payables-count")).to_have_text("2 premios pendientes")

    # A pay form open, onto a player card half typed: another prize arrives. The count and the rows move
    # together, and the form keeps what was typed.
    await rows.first.locator("[data-open-pay]").click()
    form = page.locator("form.till-pay")
    await form.locator("input[value=player_card]").check(force=True)
    card_field = form.locator("input.card-no")
    await card_field.fill(PRINTED_CARD)
    assert await whole(card_field)
    await call(another_prize, venue)
    await expect(page.locator("#prizes-count")).to_have_text("3")
    await expect(rows).to_have_count(3)
    await expect(page.locator("#payables-count")).to_have_text("3 premios pendientes")
    await expect(card_field).to_have_value(PRINTED_CARD)
    waiting = await call(lambda: Payable.objects.filter(venue=venue, state="waiting").count())
    assert waiting == 3
    await page.screenshot(path="/tmp/till-es-payables.png")


async def test_a_slow_sale_says_selling_and_a_retried_one_never_sells_twice(
    page: Page, server_url: str, venue: Venue, manual_game: Game, card_series: CardSeries, caller: Any
) -> None:
    await call(games.open_sales, game=manual_game, actor=caller)
    await call(cashier_on_shift, venue)
    answered = asyncio.Event()

    async def slow(route: Route) -> None:
        if route.request.method == "POST":
            await asyncio.sleep(2.5)  # a loaded server
        await route.continue_()
        if route.request.method == "POST":
            answered.set()

    await page.route("**/api/games/*/sales/", slow)
    await open_till(page, server_url, "sales")
    await expect(page.locator("#game-title")).to_have_text("Sala 1 · partida 1")
    await page.fill("#sell-first", "1")
    await page.fill("#sell-last", "10")
    sell = page.locator("#sell-form button[type=submit]")
    await sell.click()
    await expect(sell).to_have_text("Vendiendo…")
    await expect(sell).to_be_disabled()
    await page.press("#sell-last", "Enter")  # a second submit while the first is on its way
    await expect(page.locator("#sell-msg .msg__text")).to_have_text(
        "Todavía se está vendiendo el rango anterior: espere su respuesta."
    )
    await page.screenshot(path="/tmp/till-es-selling.png")
    await expect(page.locator("#sell-msg")).to_contain_text("Vendida la serie A del nº 1 al 10")
    await expect(page.locator("#sell-msg")).to_contain_text(f"20,00{NBSP}€")
    await expect(sell).to_have_text("Vender")
    assert answered.is_set()
    assert await call(lambda: SaleOperation.objects.filter(game=manual_game).count()) == 1
    await page.unroute("**/api/games/*/sales/")

    # The next range's answer is lost on the way back (the server sold it): the page says so and keeps
    # the operation's key; sent again, the server answers the first sale and sells nothing more.
    async def lost(route: Route) -> None:
        if route.request.method == "POST":
            await route.fetch()
            await route.abort("connectionreset")
        else:
            await route.continue_()

    await page.route("**/api/games/*/sales/", lost)
    await page.fill("#sell-first", "11")
    await page.fill("#sell-last", "20")
    await sell.click()
    await expect(page.locator("#sell-msg")).to_contain_text("No se puede contactar con el servidor")
    await expect(page.locator("#sell-msg")).not_to_contain_text("network")
    await page.unroute("**/api/games/*/sales/")
    await sell.click()
    await expect(page.locator("#sell-msg")).to_contain_text(
        "Ya registrada (repetición de la misma operación)"
    )
    await expect(page.locator("#sell-msg")).to_contain_text("del nº 11 al 20")
    sold = await call(
        lambda: list(SaleOperation.objects.filter(game=manual_game).values_list("cards", flat=True))
    )
    assert sorted(sold) == [10, 10]
    await expect(page.locator("#total-cards")).to_have_text("20")
    await page.screenshot(path="/tmp/till-es-sale-retried.png")
