"""The accumulated prizes on the hall screen, in a real browser (BA-G4, TB-41).

After the close of sales and before the first ball, the screen shows the programs in play with the Line
and Bingo prizes: name, amount and max ball. When the Bingo is confirmed it shows which were won and what
they paid, and a reload (the snapshot) shows the same. A scheduled Bingo Extra is announced by the beat's
notice ("programs.due") before its game, then shown in play with its hour and max ball.

Screenshots at 1920×1080 are left in /tmp: screen-programs.png (announced, no ball yet),
screen-programs-won.png (the Bingo with the programs it won), screen-programs-due.png (the notice).
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from playwright.async_api import Page, expect

from bingo.cards import CardGrid
from bingo.traditional.models import Card, CardSeries, Game, GamePick, GameProgram, PrizeProgram
from bingo.traditional.services import claims, draw, games, programs, sales
from bingo.traditional.services import series as series_services
from bingo.traditional.services.programs import clock as program_clock
from halls.models import Room
from tests.e2e.browser_support import call, log_in, open_screen

pytestmark = pytest.mark.e2e

AUTH = "ML-DGJ-2025/017"
MELILLA = ZoneInfo("Africa/Ceuta")


def new_series(room: Room, code: str, operator: User) -> CardSeries:
    return series_services.create_series(
        venue=room.venue,
        code=code,
        face_value=Decimal("2.00"),
        strips=10,
        actor=operator,
        seed=code.encode().hex().rjust(64, "0"),
    )


def sell_and_close(game: Game, card_series: CardSeries, caller: User, cashier: User, cards: int) -> Game:
    game = games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=cards, actor=cashier)
    return games.close_sales(game=game, actor=caller)


def bingo_numbers(card_series: CardSeries, serial: int) -> list[int]:
    return sorted(CardGrid.from_json(Card.objects.get(series=card_series, serial=serial).grid).numbers)


def draw_to_bingo(game: Game, card_series: CardSeries, caller: User, fillers: int = 5) -> int:
    """Enter `fillers` balls no card number of serial 1, then its 15 numbers: its Bingo at that ball."""
    needed = bingo_numbers(card_series, 1)
    others = [n for n in range(1, 91) if n not in needed][:fillers]
    for number in [*others, *needed]:
        draw.enter_ball(game=game, number=number, actor=caller)
    return len(others) + len(needed)


def claim_and_confirm(game: Game, card_series: CardSeries, caller: User) -> None:
    claim = claims.file_claim(game=game, kind="bingo", series_code=card_series.code, serial=1, actor=caller)
    assert claim.valid, claim.reason
    claims.confirm_claims(game=game, kind="bingo", actor=caller)


def play_game(game: Game, card_series: CardSeries, caller: User, cashier: User) -> None:
    """A whole game: 60 cards sold, the Bingo of card 1 at ball 20, confirmed (the game closes)."""
    game = sell_and_close(game, card_series, caller, cashier, 60)
    game = games.start_draw(game=game, actor=caller)
    draw_to_bingo(game, card_series, caller)
    claim_and_confirm(game, card_series, caller)


def first_game_funds_the_prima(room: Room, game: Game, operator: User, caller: User, cashier: User) -> Game:
    """A Prima of 30 € (25 %: one game of 120 € reaches it) and the Bingo Acumulado (10 %); the first game
    is played so the Prima is in play in the next; that one is on sale, 30 cards of a fresh series sold."""
    programs.activate_program(
        room=room,
        code="PRIMA",
        program_type="BA-1",
        params={"funding_percent": "25", "amount": "30", "authorisation_ref": AUTH},
        name="Prima",
        actor=operator,
    )
    programs.activate_program(
        room=room,
        code="ACUMULADO",
        program_type="BA-3",
        params={"funding_percent": "10", "authorisation_ref": AUTH},
        name="Bingo Acumulado",
        actor=operator,
    )
    play_game(game, new_series(room, "P1", operator), caller, cashier)
    second = games.create_game(room=room, actor=caller, draw_source="manual")
    second = games.open_sales(game=second, actor=caller)
    sales.sell_range(game=second, series=new_series(room, "P2", operator), first=1, last=30, actor=cashier)
    return second


def announced(game: Game) -> dict[str, dict[str, object]]:
    game.refresh_from_db()
    return {p["code"]: p for p in game.announcement["programs"]}


def euros(amount: object) -> re.Pattern[str]:
    """An amount as the screen shows it (es-ES: "30,00 €")."""
    whole, cents = f"{Decimal(str(amount)):.2f}".split(".")
    return re.compile(rf"{whole}[.,]{cents}")


async def test_the_programs_in_play_are_shown_before_the_first_ball_and_their_award(
    page: Page, server_url, screen, room, manual_game, ball_set, operator, caller, cashier
):
    game = await call(first_game_funds_the_prima, room, manual_game, operator, caller, cashier)
    await open_screen(page, server_url, screen.token)
    await expect(page.locator("#game-state")).to_have_text("Venta de cartones")
    await expect(page.locator("#programs")).to_be_hidden()

    # The close of sales announces the programs with the Line and Bingo prizes, before any ball.
    game = await call(games.close_sales, game=game, actor=caller)
    terms = await call(announced, game)
    assert (terms["PRIMA"]["amount"], terms["PRIMA"]["max_ball"]) == ("30.00", 48)
    assert terms["ACUMULADO"]["max_ball"] == 44  # 30 cards sold: "de 1 a 50 cartones, 44 o menos"
    await expect(page.locator("#game-state")).to_have_text("Venta cerrada")
    await expect(page.locator("#current-ball")).to_have_attribute("data-ball", "")
    await expect(page.locator("#bingo-prize")).to_contain_text("30,00")
    programs_list = page.locator("#programs-list .program")
    await expect(programs_list).to_have_count(2)
    prima = page.locator('#programs-list .program[data-code="PRIMA"]')
    await expect(prima.locator(".program__name")).to_have_text("Prima")
    await expect(prima.locator(".program__amount")).to_contain_text("30,00")
    await expect(prima.locator(".program__terms")).to_have_text("Bola máx. 48")
    acumulado = page.locator('#programs-list .program[data-code="ACUMULADO"]')
    await expect(acumulado.locator(".program__name")).to_have_text("Bingo Acumulado")
    await expect(acumulado.locator(".program__amount")).to_contain_text(euros(terms["ACUMULADO"]["amount"]))
    await expect(acumulado.locator(".program__terms")).to_have_text("Bola máx. 44")
    await expect(prima).to_have_attribute("data-won", "")
    await page.wait_for_timeout(300)
    await page.screenshot(path="/tmp/screen-programs.png")

    # The draw: card 1's Bingo at ball 20, within both max balls. Confirmed, both programs are won.
    game = await call(games.start_draw, game=game, actor=caller)
    series_p2 = await call(CardSeries.objects.get, venue=room.venue, code="P2")
    await call(draw_to_bingo, game, series_p2, caller)
    await expect(page.locator("#ball-ordinal")).to_have_text("Bola 20 de 90")
    await call(claim_and_confirm, game, series_p2, caller)
    overlay = page.locator("#prize-overlay")
    await expect(overlay).to_be_visible()
    await expect(page.locator("#prize-title")).to_have_text("¡Bingo!")
    await expect(page.locator('#prize-programs .prize__program[data-code="PRIMA"]')).to_contain_text("30,00")
    await expect(page.locator('#prize-programs .prize__program[data-code="ACUMULADO"]')).to_be_visible()
    await expect(prima).to_have_attribute("data-won", "true")
    await expect(prima.locator(".program__result")).to_contain_text("¡Premio!")
    await expect(prima.locator(".program__result")).to_contain_text("P2 · nº\u00a01")
    await expect(acumulado).to_have_attribute("data-won", "true")
    paid = await call(GameProgram.objects.get, game=game, program__code="ACUMULADO")
    await expect(acumulado.locator(".program__result")).to_contain_text(euros(paid.prize))
    await page.wait_for_timeout(900)
    await page.screenshot(path="/tmp/screen-programs-won.png")

    # After a reload the snapshot shows the same result.
    await page.reload()
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await expect(page.locator("#game-state")).to_have_text("Finalizada")
    await expect(prima).to_have_attribute("data-won", "true")
    await expect(prima.locator(".program__terms")).to_have_text("Bola máx. 48")
    await expect(acumulado).to_have_attribute("data-won", "true")


def at(hour: int, minute: int) -> datetime:
    return datetime(2025, 3, 10, hour, minute, tzinfo=MELILLA)


def scheduled_extra(room: Room, game: Game, operator: User, caller: User, cashier: User) -> Game:
    """A Bingo Extra 12/2 (20:00 and 00:00) with an amount a game reaches (a test figure); its first game
    closes its sales at 19:50 (before the hour, so not in play) and is played."""
    programs.activate_program(
        room=room,
        code="EXTRA-12-2",
        program_type="BA-8",
        params={"funding_percent": "10", "amount": "10", "authorisation_ref": AUTH},
        name="Bingo Extra 12/2",
        actor=operator,
    )
    play_game(game, new_series(room, "P1", operator), caller, cashier)
    second = games.create_game(room=room, actor=caller, draw_source="manual")
    return games.open_sales(game=second, actor=caller)


async def test_a_scheduled_prize_is_announced_by_the_beat_then_in_play(
    page: Page, server_url, screen, room, manual_game, ball_set, operator, caller, cashier, monkeypatch
):
    clock = {"now": at(19, 50)}
    monkeypatch.setattr(program_clock, "now", lambda: clock["now"])
    game = await call(scheduled_extra, room, manual_game, operator, caller, cashier)
    extra = await call(PrizeProgram.objects.get, room=room, code="EXTRA-12-2")
    await open_screen(page, server_url, screen.token)
    await expect(page.locator("#programs")).to_be_hidden()

    # 20:01: the beat notices that the room's next game serves 20:00, and the screen says so.
    clock["now"] = at(20, 1)
    assert await call(programs.announce_scheduled) == 1
    due = page.locator("#programs-due")
    await expect(due).to_have_text("Próxima partida: Bingo Extra 12/2 (20:00)")
    await expect(due).to_have_attribute("data-reached", "true")
    await page.wait_for_timeout(300)
    await page.screenshot(path="/tmp/screen-programs-due.png")

    # Its game closes sales at 20:03: in play with the hour and the table's first row (50, category 1ª).
    clock["now"] = at(20, 3)
    series_p2 = await call(new_series, room, "P2", operator)
    await call(sales.sell_range, game=game, series=series_p2, first=1, last=30, actor=cashier)
    game = await call(games.close_sales, game=game, actor=caller)
    terms = (await call(announced, game))["EXTRA-12-2"]
    assert (terms["slot"], terms["max_ball"], terms["row"]) == ("20:00", 50, 1)
    item = page.locator('#programs-list .program[data-code="EXTRA-12-2"]')
    await expect(item.locator(".program__name")).to_have_text("Bingo Extra 12/2 (20:00)")
    await expect(item.locator(".program__terms")).to_have_text("Bola máx. 50")
    await expect(item.locator(".program__amount")).to_contain_text(euros(terms["amount"]))
    await expect(due).to_be_hidden()
    assert extra.program_type == "BA-8"


# --- The caller console: the hall manager's pick -------------------------------------------------------


def bolsa_with_a_super_prima(
    room: Room, game: Game, card_series: CardSeries, operator: User, caller: User, cashier: User
) -> Game:
    """The room's Bolsa (10 %) funded with 10 € by a game voided after its close of sales (the funding
    stays), a Super Prima paid from it, and the next game on sale."""
    programs.open_bolsa(room=room, funding_percent=Decimal("10"), authorisation_ref=AUTH, actor=operator)
    programs.activate_program(
        room=room,
        code="SUPER",
        program_type="BA-19",
        params={"amount": "10", "extraction_order": 45},
        name="Super Prima",
        actor=operator,
    )
    game = sell_and_close(game, card_series, caller, cashier, 50)
    games.void_game(game=game, actor=caller, reason="the Bolsa keeps its funding")
    second = games.create_game(room=room, actor=caller, draw_source="manual")
    return games.open_sales(game=second, actor=caller)


async def test_the_caller_sets_a_super_prima_pick_from_the_console(
    page: Page, server_url, room, manual_game, card_series, ball_set, operator, caller, cashier
):
    game = await call(bolsa_with_a_super_prima, room, manual_game, card_series, operator, caller, cashier)
    await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(page.locator("#game-badge")).to_have_text("Game 2 · On sale")
    form = page.locator("#pick-form")
    await expect(form).to_be_visible()
    await expect(page.locator("#pick-program option")).to_have_text(["Super Prima (BA-19)"])
    await expect(page.locator("#pick-colour")).to_be_disabled()
    await expect(page.locator("#pick-hint")).to_contain_text("amount and extraction order")

    # A pick the Bolsa cannot pay is refused with the server's message.
    await page.fill("#pick-amount", "50")
    await page.fill("#pick-max-ball", "45")
    await page.click("#pick-submit")
    await expect(page.locator("#pick-msg")).to_contain_text("holds €10.00, less than the prize €50.00")
    await page.fill("#pick-amount", "10,00")
    await page.click("#pick-submit")
    await expect(page.locator("#pick-msg")).to_contain_text("Pick set for game 2: Super Prima")
    await expect(page.locator("#pick-msg")).to_contain_text("max ball 45")
    pick = await call(GamePick.objects.get, game=game)
    assert (pick.amount, pick.max_ball) == (Decimal("10.00"), 45)
    await page.screenshot(path="/tmp/console-pick.png", full_page=True)

    # Once sales close the pick form goes: the terms are fixed and announced.
    await call(sales.sell_range, game=game, series=card_series, first=51, last=60, actor=cashier)
    await page.click("[data-step=close-sales]")
    await expect(page.locator("#game-badge")).to_have_text("Game 2 · Sales closed")
    await expect(form).to_be_hidden()
    terms = (await call(announced, game))["SUPER"]
    assert (terms["amount"], terms["max_ball"]) == ("10.00", 45)
