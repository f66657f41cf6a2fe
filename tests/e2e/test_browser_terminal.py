"""The player terminal's touch page in a real browser (issue 13): the page takes its device id and token from
the URL fragment, a player inserts a card by its QR text, buys cards for the game on sale, watches the draw
with every card marked by itself and sorted by how close it is ("falta N"), sees the prizes the server decided
(the alert, the balance credited), and cashes out to a ticket. A ball frame lost on the socket is recovered
from the snapshot (the gap in the room stream's seq).

The game is driven through the engine's services from the test (sales closed early, each ball a
`games.draw_ball` with the balls forced to the bought cards' numbers through the engine's test-only picker);
the ball steps the engine would enqueue are collected, not sent to Celery.

Screenshots at 1280×800 and 1920×1080 go to /work/notes/shots/ (terminal-*.png) for a look.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, ViewportSize, WebSocketRoute, expect

from bingo.electronic.models import ECard, EGameState, ElectronicGame, Terminal
from bingo.electronic.services import games
from halls.cashier.models import PlayerCard
from halls.cashier.services import player_cards as card_services
from halls.models import Venue
from tests.bingo.electronic.support import (
    RULES_90,
    draw_to_end,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.e2e.browser_support import call
from tests.tampering import forged

pytestmark = pytest.mark.e2e

SHOTS = Path("/work/notes/shots")
SMALL: ViewportSize = {"width": 1280, "height": 800}
LARGE: ViewportSize = {"width": 1920, "height": 1080}
TERMINAL_SOCKET = re.compile(r"/ws/electronic/terminal/")
# What a step may take on a loaded machine (the page and the server share the cores with other runs).
LOADED = 60_000


@pytest.fixture
def steps() -> Iterator[list[tuple[int, int, float]]]:
    """The ball steps the engine enqueues, collected (the test draws each ball itself)."""
    collected: list[tuple[int, int, float]] = []
    games.register_draw_enqueuer(lambda game, ordinal, wait: collected.append((game, ordinal, wait)))
    yield collected
    from bingo.electronic import tasks

    games.register_draw_enqueuer(tasks.enqueue_draw)


def a_hall(venue: Venue, operator: Any, cashier: Any) -> tuple[Terminal, str, PlayerCard, ElectronicGame]:
    """A speciality playing (a verified session open, running: game 1 on sale), a terminal and a card
    with 20 € on it."""
    speciality = make_speciality(venue, operator)
    terminal, token = make_terminal(speciality, operator, name="Terminal 7")
    open_verified_session(speciality, operator)
    card = funded_card(venue, cashier, Decimal("20.00"))
    games.set_running(speciality=speciality, running=True, actor=operator)
    return terminal, token, card, speciality.games.get(state=EGameState.SELLING)


def faces(game: ElectronicGame) -> list[tuple[int, list[int]]]:
    return [(c.pk, list(bytes(c.cells))) for c in ECard.objects.filter(game=game).order_by("id")]


def close_sales(game: ElectronicGame) -> ElectronicGame:
    closed = games.close_sales(game, early=True)
    assert closed is not None and closed.state == EGameState.DRAWING
    return closed


def draw(game: ElectronicGame, numbers: list[int]) -> None:
    """The next balls of the game, these numbers in this order (the engine's test-only picker)."""
    wanted = list(numbers)

    def pick(_game: ElectronicGame, purpose: str, left: Any) -> int:
        return wanted.pop(0) if purpose == "ball" else left[0]

    previous = games.use_ball_picker(pick)
    try:
        for _ in numbers:
            game.refresh_from_db()
            assert games.draw_ball(game.pk, game.balls_drawn + 1) is not None
    finally:
        games.use_ball_picker(previous)


def balance_of(card: PlayerCard) -> Decimal:
    return card_services.balance(card)


async def shoot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / name))


class DropOneBall:
    """Between the page and its terminal socket: forwards every frame but one ball."""

    def __init__(self) -> None:
        self.drop = 0
        self.dropped: list[str] = []

    def route(self, ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def from_server(message: str | bytes) -> None:
            if self.drop and isinstance(message, str) and '"type":"egame.ball"' in message:
                self.drop -= 1
                self.dropped.append(message)
                return
            ws.send(message)

        server.on_message(from_server)


async def test_a_terminal_buys_cards_watches_them_marked_is_paid_its_prizes_and_cashes_out(
    page: Page, server_url: str, venue: Venue, operator: Any, cashier: Any, steps: Any
) -> None:
    terminal, token, card, game = await call(a_hall, venue, operator, cashier)
    tap = DropOneBall()
    await page.route_web_socket(TERMINAL_SOCKET, tap.route)
    await page.set_viewport_size(SMALL)
    # The hall speaks Spanish (the tests run with LANGUAGE_CODE "en": ?lang= names the language).
    await page.goto(f"{server_url}/electronic/terminal/?lang=es#{terminal.device_id}:{token}")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    # The token left the address bar for the browser's storage.
    assert "#" not in page.url
    await expect(page.locator("#spec-name")).to_have_text(re.compile("Electrónico"))
    await expect(page.locator("#terminal-name")).to_have_text("Terminal 7")
    await expect(page.locator("#sales-line")).to_contain_text("Partida 1 a la venta")
    await expect(page.locator(".t-meter[data-code=acumulado] .t-meter__amount")).to_have_text("100,00 €")
    await shoot(page, "terminal-1280-idle.png")

    # The card by its QR text; its balance.
    await page.fill("#card-input", f"TJ:{card.number}")
    await page.press("#card-input", "Enter")
    await expect(page.locator("#balance")).to_have_text("20,00 €")

    # Two cards for game 1 (0,50 € each).
    await page.click(".t-size[data-size='2']")
    await expect(page.locator("#buy-total")).to_contain_text("1,00 €")
    await page.click("#buy")
    await expect(page.locator(".t-card")).to_have_count(2)
    await expect(page.locator("#balance")).to_have_text("19,00 €")
    await expect(page.locator("#buy-msg")).to_contain_text("2 cartones comprados para la partida 1")
    bought = await call(faces, game)
    assert len(bought) == 2

    # Sales closed: game 1 draws. The first card's four corners (Esquinas, 1,00 €), then the rest of its
    # first row (Línea, 10 % of 1,00 €). The second ball is lost on the way: the page finds the gap.
    game = await call(close_sales, game)
    first_id, first = bought[0]
    corners = [first[0], first[4], first[10], first[14]]
    rest_of_row = [n for n in first[1:4]]
    tap.drop = 1
    await call(draw, game, corners[:2])
    await call(draw, game, corners[2:3])
    await expect(page.locator("#last-ball")).to_have_text(str(corners[2]))
    assert len(tap.dropped) == 1
    await expect(page.locator("body")).to_have_attribute("data-gaps", "1")
    for number in corners[:3]:
        cell = page.locator(f".t-card[data-card='{first_id}'] .t-cell[data-n='{number}']")
        await expect(cell).to_have_class(re.compile("is-marked"))
    # Sorted by how close to the first prize still open (the Línea): the first card's first row lacks 3.
    await expect(page.locator(".t-card").first).to_have_attribute("data-card", str(first_id))
    await expect(page.locator(".t-card").first.locator(".t-card__badge")).to_have_text(re.compile("[Ff]alta"))

    await call(draw, game, corners[3:])
    await expect(page.locator("#alert")).to_be_visible()
    await expect(page.locator("#alert-title")).to_contain_text("Esquinas")
    await expect(page.locator("#alert-amount")).to_have_text("+1,00 €")
    await expect(page.locator("#balance")).to_have_text("20,00 €")
    await shoot(page, "terminal-1280-prize.png")
    await page.click("#alert")

    await call(draw, game, rest_of_row)
    await expect(page.locator("#alert-title")).to_contain_text("Línea")
    await expect(page.locator("#alert-amount")).to_have_text("+0,10 €")
    await expect(page.locator("#balance")).to_have_text("20,10 €")
    assert await call(balance_of, card) == Decimal("20.10")
    await page.click("#alert")
    await expect(page.locator(f".t-card[data-card='{first_id}']")).to_have_class(re.compile("is-won"))
    await expect(page.locator(".t-chip[data-code=linea]")).to_have_class(re.compile("is-won"))
    await shoot(page, "terminal-1280-playing.png")
    await page.set_viewport_size(LARGE)
    await shoot(page, "terminal-1920-playing.png")
    await page.click("#tab-prizes")
    await expect(page.locator(".t-prize[data-code=acumulado]")).to_contain_text("Bingo hasta la bola 40")
    await shoot(page, "terminal-1920-prizes.png")
    await page.set_viewport_size(SMALL)
    await shoot(page, "terminal-1280-prizes.png")

    # Cash out: the whole balance onto a ticket; the page shows its number and amount.
    await page.click("#cashout")
    await expect(page.locator("#ticket")).to_be_visible()
    await expect(page.locator("#ticket-amount")).to_have_text("20,10 €")
    await expect(page.locator("#ticket-number")).not_to_be_empty()
    await shoot(page, "terminal-1280-ticket.png")
    await page.click("#ticket-ok")
    await expect(page.locator("#balance")).to_have_text("0,00 €")
    assert await call(balance_of, card) == Decimal("0.00")

    # The game drawn to its end (the CSPRNG's balls): it is among the last games, with its prizes.
    await call(draw_to_end, game)
    await expect(page.locator("#game-line")).to_contain_text("Partida 1 terminada")
    while await page.locator("#alert").is_visible():  # whatever else the card won meanwhile
        await page.click("#alert")
    await page.click("#tab-games")
    played = page.locator(f".t-game[data-game='{game.pk}']")
    await expect(played).to_contain_text("Partida 1")
    await expect(played).to_contain_text("Esquinas 1,00 €")
    await shoot(page, "terminal-1280-games.png")


def alone_one_to_go(bought: list[tuple[int, list[int]]]) -> tuple[int, list[int]]:
    """A 75-ball card and four numbers of its first column that leave it the only card one ball from a
    line: the balls are all in the column's range, so another card is one away only if its own first
    column holds all four (the cards are random: two of four share four numbers of 15 now and then)."""
    for card_id, cells in bought[::-1]:
        column = [cells[row * 5] for row in range(5)]
        for skipped in range(5):
            balls = column[:skipped] + column[skipped + 1 :]
            others = [{c[row * 5] for row in range(5)} for other, c in bought if other != card_id]
            if not any(set(balls) <= theirs for theirs in others):
                return card_id, balls
    raise AssertionError(f"no card of {bought} can be the only one one ball from its line")


def a_75_ball_hall(
    venue: Venue, operator: Any, cashier: Any
) -> tuple[Terminal, str, PlayerCard, ElectronicGame]:
    """As `a_hall`, on the 75-ball 5×5 card."""
    speciality = make_speciality(venue, operator, rules={**RULES_90, "layout": "75"})
    terminal, token = make_terminal(speciality, operator, name="Terminal 75")
    open_verified_session(speciality, operator)
    card = funded_card(venue, cashier, Decimal("10.00"))
    games.set_running(speciality=speciality, running=True, actor=operator)
    return terminal, token, card, speciality.games.get(state=EGameState.SELLING)


async def test_the_75_ball_card_is_drawn_as_its_5x5_grid_with_its_free_centre(
    page: Page, server_url: str, venue: Venue, operator: Any, cashier: Any, steps: Any
) -> None:
    terminal, token, card, game = await call(a_75_ball_hall, venue, operator, cashier)
    await page.set_viewport_size(LARGE)
    await page.goto(f"{server_url}/electronic/terminal/?lang=es#{terminal.device_id}:{token}")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live", timeout=LOADED)
    await expect(page.locator(".t-board__n")).to_have_count(75, timeout=LOADED)
    # Each step waits for what the page shows of the one before (not for time): the card is in (its
    # balance), the size chosen (its total), the purchase answered (the cards, the balance after it).
    await page.fill("#card-input", card.number)
    await page.press("#card-input", "Enter")
    await expect(page.locator("#balance")).to_have_text("10,00 €", timeout=LOADED)
    await page.click(".t-size[data-size='4']")
    await expect(page.locator("#buy-total")).to_contain_text("2,00 €", timeout=LOADED)
    await expect(page.locator("#buy")).to_be_enabled(timeout=LOADED)
    await page.click("#buy")
    await expect(page.locator(".t-card")).to_have_count(4, timeout=LOADED)
    await expect(page.locator("#balance")).to_have_text("8,00 €", timeout=LOADED)
    await expect(page.locator(".t-card .t-card__grid--75 .t-cell")).to_have_count(4 * 25)
    await expect(page.locator(".t-card .t-cell.is-free")).to_have_count(4)
    bought = await call(faces, game)
    game = await call(close_sales, game)
    # A card's first column but one number: it goes first, one to go for the Línea.
    card_id, balls = alone_one_to_go(bought)
    await call(draw, game, balls)
    # The page has every ball (the last one shown, the count), then sorts and marks by them.
    await expect(page.locator("#last-ball")).to_have_attribute("data-ball", str(balls[-1]), timeout=LOADED)
    await expect(page.locator("#ball-count")).to_have_text(f"{len(balls)} bolas", timeout=LOADED)
    first = page.locator(".t-card").first
    await expect(first).to_have_attribute("data-card", str(card_id), timeout=LOADED)
    await expect(first.locator(".t-card__badge")).to_have_text("falta 1", timeout=LOADED)
    await expect(first).to_have_class(re.compile("is-hot"), timeout=LOADED)
    await shoot(page, "terminal-1920-75-balls.png")
    await page.set_viewport_size(SMALL)
    await shoot(page, "terminal-1280-75-balls.png")


async def test_a_wrong_token_is_refused_and_the_page_says_so(
    page: Page, server_url: str, venue: Venue, operator: Any, cashier: Any, steps: Any
) -> None:
    terminal, token, _card, _game = await call(a_hall, venue, operator, cashier)
    await page.goto(f"{server_url}/electronic/terminal/?lang=es#{terminal.device_id}:{forged(token)}")
    await expect(page.locator("#setup")).to_be_visible()
    await expect(page.locator("#setup-why")).to_have_text("El servidor rechazó el token de este terminal.")
    await expect(page.locator("#app")).to_be_hidden()
