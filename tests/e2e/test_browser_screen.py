"""The hall screen in a real browser: balls arrive over the WebSocket, and the screen recovers from a lost
message or a dropped connection by reloading its snapshot (DESIGN §4 "Screens can always recover").

Screenshots at 1920×1080 are left in /tmp for a look at legibility: screen.png (a game in play),
screen-claim.png (a claim being verified), screen-line.png (the Line winner).
"""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Page, expect

from bingo.cards import CardGrid
from bingo.traditional.models import Card, Game
from bingo.traditional.services import claims, draw, games, sales
from tests.e2e.browser_support import SocketTap, call, log_in, open_screen, snapshot_counter, start_game

pytestmark = pytest.mark.e2e


async def test_ball_arrives_over_the_socket_and_gaps_reload_the_snapshot(
    page, server_url, screen, manual_game, card_series, ball_set, caller, cashier
):
    game = await call(start_game, manual_game, card_series, caller, cashier)
    tap = await SocketTap().install(page)
    snapshots = snapshot_counter(page)
    await open_screen(page, server_url, screen.token)
    await expect(page.locator("#game-state")).to_have_text("En juego")
    await expect(page.locator("#cards-sold")).to_have_text("30")
    loaded = len(snapshots)
    assert loaded == 1

    # A ball drawn through the service shows as the current ball, delivered by the WebSocket.
    await call(draw.enter_ball, game=game, number=17, actor=caller)
    current = page.locator("#current-ball")
    await expect(current).to_have_attribute("data-ball", "17")
    await expect(page.locator("#current-ball-number")).to_have_text("17")
    await expect(current).to_have_attribute("data-colour", ball_set.colour_of(17))
    await expect(page.locator("#board-17")).to_have_class(re.compile(r"\bis-drawn\b"))
    await expect(page.locator("#ball-ordinal")).to_have_text("Bola 1 de 90")
    assert len(snapshots) == loaded, "the ball came with a snapshot, not over the socket"

    # A lost message: ball 42 never reaches the page, so ball 63 arrives with a gap in seq.
    tap.drop_balls = 1
    await call(draw.enter_ball, game=game, number=42, actor=caller)
    await call(draw.enter_ball, game=game, number=63, actor=caller)
    await expect(current).to_have_attribute("data-ball", "63")
    await expect(page.locator("#board-42")).to_have_class(re.compile(r"\bis-drawn\b"))
    await expect(page.locator("#ball-ordinal")).to_have_text("Bola 3 de 90")
    await expect(page.locator("#last-balls .ball")).to_have_count(2)
    assert len(snapshots) == loaded + 1, "the gap was not repaired by reloading the snapshot"
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")

    # A dropped connection: a ball drawn while the screen is offline shows once it has reconnected.
    await tap.cut()
    await call(draw.enter_ball, game=game, number=88, actor=caller)
    await expect(current).to_have_attribute("data-ball", "88")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    assert len(snapshots) == loaded + 2, "the reconnect did not reload the snapshot"
    assert len(tap.routes) == 2

    # And live deltas flow again on the new socket.
    await call(draw.enter_ball, game=game, number=5, actor=caller)
    await expect(current).to_have_attribute("data-ball", "5")
    await expect(current).to_have_attribute("data-colour", ball_set.colour_of(5))
    assert len(snapshots) == loaded + 2
    await expect(page.locator("#last-balls .ball")).to_have_count(4)
    await expect(page.locator("#last-balls .ball").first).to_have_attribute("data-ball", "88")


async def test_screen_legibility_claim_and_winner(
    page, server_url, screen, manual_game, card_series, caller, cashier
):
    game = await call(start_game, manual_game, card_series, caller, cashier, last_serial=60)
    card = CardGrid.from_json((await call(Card.objects.get, series=card_series, serial=7)).grid)
    top_row = sorted(n for n in card.rows[0] if n)
    others = [n for n in (3, 88, 45, 12, 71, 26, 59, 34, 90, 67, 8, 50) if n not in card.numbers]
    sequence = others[:8] + top_row[:4]
    for number in sequence:
        await call(draw.enter_ball, game=game, number=number, actor=caller)

    await open_screen(page, server_url, screen.token)
    await expect(page.locator("#current-ball")).to_have_attribute("data-ball", str(sequence[-1]))
    await expect(page.locator("#line-prize")).to_contain_text(re.compile(r"12[.,]00"))
    await expect(page.locator("#bingo-prize")).to_contain_text("60,00")
    await expect(page.locator("#foot-text")).to_contain_text("Cartones vendidos 60")
    await page.wait_for_timeout(900)  # let the arrival animation settle
    await page.screenshot(path="/tmp/screen.png")

    # An invalid claim shows the card with the numbers still missing.
    await call(claims.file_claim, game=game, kind="line", series_code="A", serial=7, actor=caller)
    overlay = page.locator("#claim-overlay")
    await expect(overlay).to_be_visible()
    await expect(overlay).to_have_attribute("data-valid", "false")
    await expect(page.locator("#claim-verdict")).to_contain_text(f"Faltan: {top_row[4]}")

    # The last number of the row: the line is valid, the master card shows it, the draw pauses.
    await call(draw.enter_ball, game=game, number=top_row[4], actor=caller)
    await expect(overlay).to_be_hidden()
    await call(claims.file_claim, game=game, kind="line", series_code="A", serial=7, actor=caller)
    await expect(overlay).to_have_attribute("data-valid", "true")
    await expect(page.locator("#claim-card")).to_have_text("Serie A · Cartón nº 7")
    await expect(page.locator("#claim-grid .master-card__row.is-winning .is-drawn")).to_have_count(5)
    await expect(page.locator("#claim-verdict")).to_have_text("Línea correcta")
    await expect(page.locator("#foot-tag")).to_have_text("¿Alguna línea más?")
    await expect(page.locator("#game-state")).to_have_text("En pausa")
    await page.wait_for_timeout(300)
    await page.screenshot(path="/tmp/screen-claim.png")

    # The caller confirms: the winner is announced with the card serial and the prize.
    await call(claims.confirm_claims, game=game, kind="line", actor=caller)
    prize = page.locator("#prize-overlay")
    await expect(prize).to_be_visible()
    await expect(page.locator("#prize-title")).to_have_text("¡Línea!")
    await expect(page.locator("#prize-winners")).to_contain_text("Cartón nº 7")
    await expect(page.locator("#prize-amount")).to_contain_text(re.compile(r"12[.,]00"))
    await expect(page.locator("#line-winners")).to_contain_text("A · nº 7")
    await expect(page.locator("#game-state")).to_have_text("En juego")
    await page.wait_for_timeout(1000)
    await page.screenshot(path="/tmp/screen-line.png")


# --- The staff pages -------------------------------------------------------------------------------------


async def enter_ball(page: Page, number: int) -> None:
    await page.fill("#ball-input", str(number))
    await page.press("#ball-input", "Enter")
    await expect(page.locator("#ball-msg")).to_contain_text(f"Ball {number} entered")


async def test_caller_console_runs_a_game(
    page, server_url, eager_tasks, room, caller, cashier, ball_set, card_series
):
    await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(page.locator("#session-badge")).to_have_text("No open session")

    # The inspection draw: the page shows what is missing or repeated, the server refuses it.
    for check in ("#check-blower", "#check-reserve", "#check-reader"):
        await page.check(check)
    await page.fill("#inspect-paste", " ".join(str(n) for n in [*range(1, 89), 7]))
    await page.click("#inspect-paste-add")
    await expect(page.locator("#inspect-summary")).to_contain_text("Missing (2): 89, 90")
    await expect(page.locator("#inspect-summary")).to_contain_text("Repeated: 7 ×2")
    await expect(page.locator("#inspect-board-7")).to_have_class(re.compile(r"\bis-repeated\b"))
    await page.screenshot(path="/tmp/console-session.png", full_page=True)
    await page.click("#session-open-btn")
    await expect(page.locator("#session-msg")).to_contain_text("inspection draw must show all 90 balls")
    await page.click("#inspect-undo")
    for number in (89, 90):
        await page.fill("#inspect-number", str(number))
        await page.press("#inspect-number", "Enter")
    await expect(page.locator("#inspect-summary")).to_contain_text("All 90 balls, each once.")
    await page.click("#session-open-btn")
    await expect(page.locator("#session-badge")).to_contain_text("open")

    # A manual game: create, open sales (the cashier sells), close sales, start the draw.
    await page.click("#create-game button[type=submit]")
    await expect(page.locator("#game-badge")).to_have_text("Game 1 · Scheduled")
    await page.click("[data-step=open-sales]")
    await expect(page.locator("#game-badge")).to_have_text("Game 1 · On sale")
    game = await call(Game.objects.get, room=room, number=1)
    await call(sales.sell_range, game=game, series=card_series, first=1, last=60, actor=cashier)
    await expect(page.locator("#fig-cards")).to_have_text("60")
    await page.click("[data-step=close-sales]")
    await expect(page.locator("#announcement")).to_contain_text("Cartones vendidos 60")
    await expect(page.locator("#fig-line")).to_contain_text(re.compile(r"12[.,]00"))
    await page.click("[data-step=start-draw]")
    await expect(page.locator("#game-badge")).to_have_text("Game 1 · Drawing")

    # Balls by hand; a repeated ball is refused with the server's message.
    card = CardGrid.from_json((await call(Card.objects.get, series=card_series, serial=7)).grid)
    top_row = sorted(n for n in card.rows[0] if n)
    others = [n for n in (3, 88, 45, 12, 71, 26) if n not in card.numbers]
    for number in [*others[:4], *top_row]:
        await enter_ball(page, number)
    await page.fill("#ball-input", str(top_row[0]))
    await page.press("#ball-input", "Enter")
    await expect(page.locator("#ball-msg")).to_contain_text(f"Ball {top_row[0]} was already drawn")
    await expect(page.locator(f"#console-board-{top_row[-1]}")).to_have_class(re.compile(r"\bis-last\b"))

    # The system sees the unclaimed line; the caller takes the claim and gets the verdict with the card.
    await expect(page.locator("#unclaimed")).to_contain_text("A · no. 7")
    await page.locator("#unclaimed button").first.click()
    await page.click("#claim-form button[type=submit]")
    await expect(page.locator("#verdict")).to_contain_text("Valid line")
    await expect(page.locator("#verdict-reason")).to_contain_text("Card 7 has a line")
    await expect(page.locator("#verdict .mcard__row.is-winning .is-drawn")).to_have_count(5)
    await expect(page.locator("#window-question")).to_have_text("Any more lines?")
    # An invalid claim is a verdict too, with its reason.
    await page.fill("#claim-serial", "8")
    await page.click("#claim-form button[type=submit]")
    await expect(page.locator("#verdict")).to_contain_text("Not valid")
    await page.fill("#claim-serial", "7")
    await page.click("#claim-form button[type=submit]")
    await expect(page.locator("#claim-msg")).to_contain_text("already has a valid line claim")
    await page.screenshot(path="/tmp/console.png", full_page=True)

    await page.click("#confirm-btn")
    await expect(page.locator("#claim-msg")).to_contain_text("Line paid")
    await expect(page.locator("#prizes")).to_contain_text("A · no. 7")
    await expect(page.locator("#game-badge")).to_have_text("Game 1 · Drawing")
    await expect(page.locator("#window-prompt")).to_be_hidden()


async def test_cashier_sells_and_returns_ranges(page, server_url, manual_game, card_series, caller, cashier):
    await call(games.open_sales, game=manual_game, actor=caller)
    await log_in(page, server_url, "cashier", "/cashier/")
    await page.click("#tab-sales")  # the till's Sales tab
    await expect(page.locator("#game-title")).to_have_text("Sala 1 · game 1")
    await expect(page.locator("#ops-table")).to_contain_text("Nothing sold yet.")

    await page.fill("#sell-first", "1")
    await page.fill("#sell-last", "30")
    await expect(page.locator("#sell-preview")).to_contain_text("30 cards")
    await page.click("#sell-form button[type=submit]")
    await expect(page.locator("#sell-msg")).to_contain_text("Sold series A no. 1 to 30: 30 cards")
    await expect(page.locator("#total-cards")).to_have_text("30")
    await expect(page.locator("#sell-first")).to_have_value("31")

    # A double click sells once.
    await page.fill("#sell-last", "40")
    await page.dblclick("#sell-form button[type=submit]")
    await expect(page.locator("#sell-msg")).to_contain_text("no. 31 to 40")
    await expect(page.locator("#total-cards")).to_have_text("40")
    await expect(page.locator("#ops-table tbody tr")).to_have_count(2)

    # Selling a card already sold is refused with the server's message; returning works.
    await page.fill("#sell-first", "40")
    await page.fill("#sell-last", "45")
    await page.click("#sell-form button[type=submit]")
    await expect(page.locator("#sell-msg")).to_contain_text("already sold")
    await page.fill("#return-first", "36")
    await page.fill("#return-last", "40")
    await page.click("#return-form button[type=submit]")
    await expect(page.locator("#return-msg")).to_contain_text("Returned series A no. 36 to 40: 5 cards")
    await expect(page.locator("#total-cards")).to_have_text("35")
    await expect(page.locator("#ops-table tbody tr")).to_have_count(3)
    await expect(page.locator("#total-amount")).to_contain_text(re.compile(r"70[.,]00"))
    await page.fill("#sell-first", "36")
    await page.fill("#sell-last", "48")
    await page.screenshot(path="/tmp/cashier.png", full_page=True)


async def test_home_links_by_role(page, server_url, room, screen, caller, cashier, operator):
    await log_in(page, server_url, "caller", "/")
    await expect(page.locator(".topbar nav")).to_contain_text("Caller console")
    await expect(page.locator(".topbar nav")).not_to_contain_text("Cashier")
    await expect(page.locator(f"a[href='/console/rooms/{room.pk}/']")).to_be_visible()
    await page.click("text=Log out")
    await log_in(page, server_url, "operator", "/")
    await expect(page.locator(".topbar nav")).to_contain_text("Cashier")
    await page.screenshot(path="/tmp/home.png", full_page=True)

    # The operator's screen link opens the hall display, waiting for a game.
    async with page.context.expect_page() as opened:
        await page.click(f"a[href='/screens/{screen.token}/']")
    display = await opened.value
    await expect(display.locator("body")).to_have_attribute("data-stream", "live")
    await expect(display.locator("#foot-text")).to_have_text("Esperando la próxima partida")
    await display.screenshot(path="/tmp/screen-idle.png")
