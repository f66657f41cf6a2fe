"""The caller never loses a ball (issue 10), in a real browser: balls typed as fast as keys go are all
recorded, in order, each with a visible answer (a refused one too); a lost answer is asked again without
a second ball; a mis-keyed ball is corrected and the correction shows on the console, on a hall screen
and in the recall. After a claim a correction is proposed (four eyes) and shows once a second caller
approves it.

Screenshots left in /tmp for a look: console-correction.png, screen-correction.png.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from playwright.async_api import Route, expect

from bingo.cards import CardGrid
from bingo.traditional.models import Ball, BallCorrection, Card, CardSeries, Game
from bingo.traditional.services import claims, draw
from halls.models import Proposal, Role
from halls.services import proposals
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in, start_game

pytestmark = pytest.mark.e2e

# Twenty distinct balls, in the order the reader reads them (two-digit ones first: "45" then "10" is the
# issue's "4510").
BALLS = [45, 10, 7, 88, 23, 61, 2, 39, 90, 14, 56, 71, 30, 5, 82, 19, 66, 43, 27, 9]


def stored_balls(game: Game) -> list[int]:
    return list(Ball.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))


async def test_balls_typed_fast_are_all_recorded_and_a_mis_keyed_one_is_corrected(
    page, context, server_url, eager_tasks, room, screen, manual_game, card_series, ball_set, caller, cashier
):
    game = await call(start_game, manual_game, card_series, caller, cashier, last_serial=60)
    hall = await context.new_page()
    await hall.set_viewport_size({"width": 1920, "height": 1080})
    await hall.goto(f"{server_url}/screens/{screen.token}/")
    await expect(hall.locator("body")).to_have_attribute("data-stream", "live")
    await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await expect(page.locator("#game-badge")).to_have_text("Game 1 · Drawing")

    # Twenty balls as fast as keys go: every key and Enter without waiting for any answer.
    await page.focus("#ball-input")
    for number in BALLS:
        await page.keyboard.type(str(number))
        await page.keyboard.press("Enter")
    log = page.locator("#ball-log li")
    await expect(page.locator('#ball-log li[data-state="ok"]')).to_have_count(20, timeout=20_000)
    await expect(log).to_have_count(20)
    # Each entry has its own answer, naming the ball it became (the log is newest first).
    for ordinal, number in enumerate(BALLS, start=1):
        entry = log.nth(20 - ordinal)
        await expect(entry).to_have_attribute("data-number", str(number))
        await expect(entry).to_have_attribute("data-ordinal", str(ordinal))
        await expect(entry.locator(".ball-log__answer")).to_have_text(f"ball {ordinal} ✓")
    assert await call(stored_balls, game) == BALLS
    await expect(page.locator("#console-ordinal")).to_have_text("Ball 20 of 90")
    await expect(hall.locator("#ball-ordinal")).to_have_text("Bola 20 de 90")

    # A refused ball is answered with the server's reason, and the ball typed after it still goes in.
    for text in ("45", "8"):
        await page.keyboard.type(text)
        await page.keyboard.press("Enter")
    await expect(page.locator('#ball-log li[data-ordinal="21"]')).to_have_attribute("data-number", "8")
    await expect(page.locator('#ball-log li[data-ordinal="21"]')).to_have_attribute("data-state", "ok")
    refused_entry = page.locator('#ball-log li[data-state="refused"]')
    await expect(refused_entry).to_have_attribute("data-number", "45")
    await expect(refused_entry).to_contain_text("Ball 45 was already drawn, at ordinal 1.")
    assert await call(stored_balls, game) == [*BALLS, 8]

    # A lost answer: the ball is recorded but the page never hears back; the retry (same ordinal)
    # answers with that ball, and no second ball is drawn.
    taken: list[str] = []
    lost = asyncio.Event()

    async def lose_first_answer(route: Route) -> None:
        if not taken:
            taken.append(route.request.url)  # before any await: a retry meanwhile goes through
            await route.fetch()  # the server records the ball ...
            await route.abort()  # ... and the answer is lost on the way back
            lost.set()
            return
        await route.continue_()

    await page.route(re.compile(r"/api/games/\d+/balls/$"), lose_first_answer)
    await page.keyboard.type("33")
    await page.keyboard.press("Enter")
    await expect(page.locator('#ball-log li[data-ordinal="22"]')).to_have_attribute("data-state", "ok")
    # The page may hear the ball on its stream before this handler's fetch returns (a loaded machine).
    await asyncio.wait_for(lost.wait(), 20)
    assert await call(stored_balls, game) == [*BALLS, 8, 33]
    await page.unroute(re.compile(r"/api/games/\d+/balls/$"))

    # Ball 18 (43) was mis-keyed: the reader read 34. The caller corrects it from its entry.
    await page.locator('#ball-log li[data-ordinal="18"] button').click()
    await expect(page.locator("#correct-ordinal")).to_have_value("18")
    await expect(page.locator("#correct-hint")).to_have_text("Ball 18 is 43 now.")
    await page.fill("#correct-number", "34")
    await page.fill("#correct-reason", "Mis-keyed: the reader read 34")
    await page.click("#correct-submit")
    await expect(page.locator("#correct-msg")).to_contain_text("Ball 18 corrected: 43 → 34.")
    await expect(page.locator("#correction-notice")).to_have_text("Ball corrected: 43 → 34")
    await expect(page.locator("#console-board-34")).to_have_class(re.compile(r"\bis-on\b.*\bis-corrected\b"))
    await expect(page.locator("#console-board-43")).not_to_have_class(re.compile(r"\bis-on\b"))
    await expect(page.locator('#ball-log li[data-ordinal="18"]')).to_contain_text("corrected to 34")
    # A refusal is answered too: 45 is already drawn.
    await page.fill("#correct-ordinal", "3")
    await page.fill("#correct-number", "45")
    await page.fill("#correct-reason", "test")
    await page.click("#correct-submit")
    await expect(page.locator("#correct-msg")).to_contain_text("Ball 45 was already drawn, at ordinal 1.")

    # The hall screen: the notice, the board and the last balls show the corrected number.
    await expect(hall.locator("#correction-notice")).to_have_text("Bola corregida: 43 → 34")
    await expect(hall.locator("#board-34")).to_have_class(re.compile(r"\bis-drawn\b.*\bis-corrected\b"))
    await expect(hall.locator("#board-43")).not_to_have_class(re.compile(r"\bis-drawn\b"))
    corrected = hall.locator('#last-balls .ball[data-ball="34"]')
    await expect(corrected).to_have_attribute("data-corrected", "true")
    await hall.wait_for_timeout(900)  # let the arrival animation settle
    await hall.screenshot(path="/tmp/screen-correction.png")
    # And a screen that loads now (a snapshot) shows it as corrected too.
    await hall.reload()
    await expect(hall.locator("body")).to_have_attribute("data-stream", "live")
    await expect(hall.locator('#last-balls .ball[data-ball="34"]')).to_have_attribute(
        "data-corrected", "true"
    )
    await expect(hall.locator("#board-34")).to_have_class(re.compile(r"\bis-corrected\b"))

    # The recall: the ball in its place with the number it was entered as, and the correction.
    response = await page.request.get(f"{server_url}/api/games/{game.pk}/recall/")
    assert response.ok
    recall = await response.json()
    assert [b["ball"] for b in recall["balls"]] == [*BALLS[:17], 34, *BALLS[18:], 8, 33]
    assert recall["balls"][17]["corrected_from"] == 43
    [correction] = recall["ball_corrections"]
    assert {k: correction[k] for k in ("ordinal", "old", "new", "reason", "corrected_by")} == {
        "ordinal": 18,
        "old": 43,
        "new": 34,
        "reason": "Mis-keyed: the reader read 34",
        "corrected_by": "caller",
    }
    assert await call(BallCorrection.objects.filter(game=game).count) == 1

    await page.screenshot(path="/tmp/console-correction.png", full_page=True)


def top_row_drawn(game: Game, series: CardSeries, caller: Any) -> list[int]:
    """Card 7's top row drawn."""
    row = sorted(n for n in CardGrid.from_json(Card.objects.get(series=series, serial=7).grid).rows[0] if n)
    for number in row:
        draw.enter_ball(game=game, number=number, actor=caller)
    return row


def approve_the_correction(game: Game) -> None:
    """The proposed correction approved by a second caller of the venue, with their own password."""
    proposal = Proposal.objects.get(kind="ball.correct", target=f"game:{game.pk}")
    second = make_user("caller2", game.room.venue, Role.CALLER)
    proposals.approve(proposal=proposal, approver=second, password="pw-caller2")


async def test_a_correction_that_undoes_a_claimed_line_shows_everywhere(
    page, context, server_url, eager_tasks, room, screen, manual_game, card_series, ball_set, caller, cashier
):
    game = await call(start_game, manual_game, card_series, caller, cashier, last_serial=60)
    row = await call(top_row_drawn, game, card_series, caller)
    hall = await context.new_page()
    await hall.goto(f"{server_url}/screens/{screen.token}/")
    await expect(hall.locator("body")).to_have_attribute("data-stream", "live")
    await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    # The line is claimed (valid: the draw pauses for "any more lines?").
    await call(claims.file_claim, game=game, kind="line", series_code="A", serial=7, actor=caller)
    await expect(hall.locator("#claim-verdict")).to_have_text("Línea correcta")
    await expect(page.locator("#window-question")).to_have_text("Any more lines?")
    await expect(page.locator("[data-step=resume]")).to_be_disabled()

    # The row's first ball was mis-keyed: the card had no line after all.
    spare = next(n for n in range(90, 0, -1) if n not in row)
    await page.locator("#correct-box summary").click()
    await page.fill("#correct-ordinal", "1")
    await page.fill("#correct-number", str(spare))
    await page.fill("#correct-reason", "Mis-keyed")
    await page.click("#correct-submit")
    # Four eyes: after a claim the correction is proposed; a second caller approves it.
    await expect(page.locator("#correct-msg")).to_contain_text("a second person approves it")
    proposal = await call(Proposal.objects.get, kind="ball.correct", target=f"game:{game.pk}")
    await expect(page.locator("#correct-msg")).to_contain_text(f"Proposal no. {proposal.pk}:")
    assert await call(BallCorrection.objects.filter(game=game).count) == 0
    await call(approve_the_correction, game)
    await expect(page.locator("#correction-notice")).to_have_text(f"Ball corrected: {row[0]} → {spare}")
    # The console: the claim is no longer valid, nothing waits to be confirmed, the draw can resume.
    await expect(page.locator("#window-prompt")).to_be_hidden()
    await expect(page.locator("#claims-table tbody tr").first).to_contain_text("not complete")
    await expect(page.locator("[data-step=resume]")).to_be_enabled()
    # The screen: the claim shown as not valid, the question gone, the notice up.
    await expect(hall.locator("#claim-overlay")).to_have_attribute("data-valid", "false")
    await expect(hall.locator("#foot-tag")).not_to_have_text("¿Alguna línea más?")
    await expect(hall.locator("#correction-notice")).to_have_text(f"Bola corregida: {row[0]} → {spare}")
    await page.click("[data-step=resume]")
    await expect(page.locator("#game-badge")).to_have_text("Game 1 · Drawing")
