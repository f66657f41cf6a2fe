"""A verifiable draw in a real browser (issue 28): the hall screen shows an RNG game's commitment from the
moment the game is created (and a blower's game says it is not verifiable by seed); after the game, the
public page (no login) shows the seed, says "Verificado" and offers the sales file.

Screenshots left in /tmp: draw-screen.png (the commitment on the screen), draw-page.png (the public page).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from bingo.draws.models import DrawCommitment
from bingo.traditional.models import DrawSource
from bingo.traditional.services import commitments, draw, games
from tests.e2e.browser_support import call, open_screen, start_game

pytestmark = pytest.mark.e2e


def create(room: Any, caller: Any, source: str) -> Any:
    return games.create_game(room=room, actor=caller, draw_source=source)


def draw_and_end(game: Any, caller: Any, count: int) -> None:
    for ordinal in range(1, count + 1):
        draw.draw_rng_ball(game_id=game.pk, ordinal=ordinal)
    games.void_game(game=game, actor=caller, reason="fin de la prueba")
    commitments.reveal(game_id=game.pk, actor="rng")  # what the worker's task does


async def test_the_screen_shows_the_commitment_and_the_public_page_verifies_the_draw(
    page, server_url, screen, room, session, card_series, ball_set, caller, cashier, monkeypatch
):
    monkeypatch.setattr(draw, "dispatch", lambda *args, **kwargs: None)  # the steps are drawn here
    monkeypatch.setattr(commitments, "_enqueue_reveal", lambda game_id: None)  # and revealed here
    blower = await call(create, room, caller, DrawSource.MANUAL)
    await page.set_viewport_size({"width": 1920, "height": 1080})
    await open_screen(page, server_url, screen.token)
    proof = page.locator("#draw-proof")
    await expect(proof).to_have_text("Bolas de bombo: no verificable por semilla")
    await call(games.void_game, game=blower, actor=caller, reason="otra")

    # An RNG game created while the screen is on: the commitment arrives with the game.created event.
    game = await call(create, room, caller, DrawSource.RNG)
    await expect(proof).to_have_text(f"Sorteo verificable · compromiso {game.draw_commitment[:16]}…")
    await expect(proof).to_have_attribute("data-state", "verifiable")
    await page.screenshot(path="/tmp/draw-screen.png")

    game = await call(start_game, game, card_series, caller, cashier)
    await call(draw_and_end, game, caller, 12)
    row = await call(DrawCommitment.objects.get, room="traditional", game_ref=str(game.pk))

    # Nobody logged in, a browser asking for Spanish (the page follows the reader's language).
    browser = page.context.browser
    assert browser is not None
    public = await (await browser.new_context(locale="es-ES", accept_downloads=True)).new_page()
    await public.goto(f"{server_url}/draws/traditional/{game.pk}/")
    await expect(public.locator("h1")).to_have_text("Sorteo verificable")
    await expect(public.locator('[data-fact="seed"]')).to_have_text(row.seed)
    await expect(public.locator('[data-fact="balls"] li')).to_have_count(12)
    verdict = public.locator(".draw-verdict")
    await expect(verdict).to_have_attribute("data-verified", "yes")
    await expect(verdict).to_contain_text("Verificado: la semilla coincide con su compromiso y las 12 bolas")
    await expect(public.locator('[data-fact="command"]')).to_contain_text(f"--seed {row.seed}")
    async with public.expect_download() as downloading:
        await public.locator('[data-link="sales"]').click()
    download = await downloading.value
    assert download.suggested_filename == f"ventas-traditional-{game.pk}.json"
    sales = json.loads(Path(await download.path()).read_text(encoding="utf-8"))
    assert sales["format"] == "bingo-sales/v1" and len(sales["cards"]) == 30
    await public.set_viewport_size({"width": 1100, "height": 1300})
    await public.screenshot(path="/tmp/draw-page.png", full_page=True)
