"""The room's own game comes first on its screens, in a real browser against the live server.

The venue has pools on the screens (the meter ribbon along the bottom): a table carrusel and a machine
progressive. While the room's own game announces something (a claim being verified, the "¿Algún bingo
más?" band, the ¡Línea! or ¡Bingo! winner) a table or machine hit does not cover it: it waits, and is
announced once the room's announcement ends; a hit being shown when the room's game takes the screen
goes back to the head of the line. The claim band is never under the meter ribbon. A voided game shows
the caller's public message, never the internal reason.

Screenshots at 1920×1080 are left in var/screenshots/: priority-claim-band.png (the "¿Algún bingo
más?" band over the ribbon while a machine hit waits), priority-bingo.png (¡Bingo! with a machine and
a table hit waiting), priority-hit-after.png (the waiting hit, announced after), priority-void.png.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from bingo.cards import CardGrid
from bingo.traditional.models import Card, CardSeries, Game
from bingo.traditional.services import claims, draw, games, sales
from halls.models import Screen, Venue
from jackpots.models import Pool, PoolLevel
from jackpots.services import awards, pools
from jackpots.services.pools import LevelSpec
from tests.e2e.browser_support import call, open_screen, start_game
from tests.e2e.test_browser_meters import make_pools, publisher, straight_flush

__all__ = ["publisher"]

pytestmark = pytest.mark.e2e

D = Decimal
SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
REASON = "Cajero: serie B vendida dos veces, revisar con gerencia"
MESSAGE = "Incidencia técnica: se devolverá el importe de los cartones"


def machine_pool(venue: Venue, actor: Any) -> Pool:
    pool = pools.create_pool(
        name="Progresivo Sala",
        code="SLOT-SALA",
        jurisdiction=venue.jurisdiction,
        authorisation_ref="AUT-SLOT-2026/01",
        rule_pack="",
        venue=venue,
        levels=[LevelSpec(name="Mayor", seed=D("1500.00"), contribution_rate=D("0.02"))],
        carousel_bet=None,
        actor=actor,
    )
    pools.add_member(pool=pool, source_type="machine", source_id="17", venue=venue, actor=actor)
    return pool


def machine_hit(pool: Pool, key: str) -> awards.AwardResult:
    return awards.award_level(
        level=PoolLevel.objects.get(pool=pool, position=0),
        percent=D("100"),
        winner={"source": "machine:17", "label": "1017", "hand": "g-9"},
        idempotency_key=key,
        actor="gateway",
    )


def start_second(game: Game, series: CardSeries, caller: Any, cashier: Any) -> Game:
    """The next game, on the series' other half (a card is sold once)."""
    game = games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=series, first=31, last=60, actor=cashier)
    game = games.close_sales(game=game, actor=caller)
    return games.start_draw(game=game, actor=caller)


def numbers_of(series: CardSeries, serial: int) -> list[list[int]]:
    grid = CardGrid.from_json(Card.objects.get(series=series, serial=serial).grid)
    return [sorted(n for n in row if n) for row in grid.rows]


async def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.wait_for_timeout(700)  # entrance animations settle
    await page.screenshot(path=str(SHOTS / name))


async def test_hits_wait_for_the_rooms_own_announcements(
    page: Page,
    server_url: str,
    publisher: None,
    screen: Screen,
    venue: Venue,
    operator: Any,
    manual_game: Game,
    card_series: CardSeries,
    caller: Any,
    cashier: Any,
) -> None:
    carousel, _ = await call(make_pools, venue, operator)
    slots = await call(machine_pool, venue, operator)
    game = await call(start_game, manual_game, card_series, caller, cashier, 30)
    rows = await call(numbers_of, card_series, 7)
    for number in rows[0]:
        await call(draw.enter_ball, game=game, number=number, actor=caller)
    await open_screen(page, server_url, screen.token)
    await expect(page.locator("#jp-ribbon")).to_be_visible()
    ribbon = await page.locator("#jp-ribbon").bounding_box()
    assert ribbon is not None

    # The Line, claimed and confirmed.
    await call(claims.file_claim, game=game, kind="line", series_code="A", serial=7, actor=caller)
    await call(claims.confirm_claims, game=game, kind="line", actor=caller)
    await expect(page.locator("#prize-title")).to_have_text("¡Línea!")

    # The whole card: a valid Bingo is being verified and the hall is asked "¿Algún bingo más?".
    for number in rows[1] + rows[2]:
        await call(draw.enter_ball, game=game, number=number, actor=caller)
    await call(claims.file_claim, game=game, kind="bingo", series_code="A", serial=7, actor=caller)
    await expect(page.locator("#claim-verdict")).to_have_text("Bingo correcto")
    band = page.locator("#foot-tag")
    await expect(band).to_have_text("¿Algún bingo más?")

    # A machine hits meanwhile: it waits; the verification and the band stay in sight.
    await call(machine_hit, slots, "m-1")
    await expect(page.locator("#jp-hit")).to_have_attribute("data-waiting", "1")
    await expect(page.locator("#jp-hit")).to_be_hidden()
    await expect(page.locator("#claim-overlay")).to_be_visible()
    foot = await page.locator(".bingo-foot").bounding_box()
    assert foot is not None
    assert foot["y"] + foot["height"] <= ribbon["y"], (foot, ribbon)  # the band is above the ribbon
    await expect(band).to_be_visible()
    await shot(page, "priority-claim-band.png")

    # ¡Bingo! A table hits too: both wait behind the room's winner.
    await call(claims.confirm_claims, game=game, kind="bingo", actor=caller)
    prize = page.locator("#prize-overlay")
    await expect(page.locator("#prize-title")).to_have_text("¡Bingo!")
    await call(straight_flush, carousel, operator, 41)
    await expect(page.locator("#jp-hit")).to_have_attribute("data-waiting", "2")
    await expect(page.locator("#jp-hit")).to_be_hidden()
    await expect(prize).to_be_visible()
    await shot(page, "priority-bingo.png")

    # The room's announcement ends (the next game is created): the waiting hits are announced in turn.
    next_game = await call(games.create_game, room=game.room, actor=caller, draw_source="manual")
    await expect(prize).to_be_hidden()
    hit = page.locator("#jp-hit")
    await expect(hit).to_be_visible()
    await expect(page.locator("#jp-hit-where")).to_have_text("Máquina 1017")
    await expect(hit).to_have_attribute("data-waiting", "1")
    await shot(page, "priority-hit-after.png")

    # A claim in the room's own game takes the screen back: the hit shown goes back to the head of the line.
    next_game = await call(start_second, next_game, card_series, caller, cashier)
    await call(draw.enter_ball, game=next_game, number=5, actor=caller)
    await call(claims.file_claim, game=next_game, kind="line", series_code="A", serial=33, actor=caller)
    await expect(page.locator("#claim-verdict")).to_contain_text("No válida")
    await expect(hit).to_be_hidden()
    await expect(hit).to_have_attribute("data-waiting", "2")
    # The next ball takes the refused claim down: the machine's hit is announced again, then the table's.
    await call(draw.enter_ball, game=next_game, number=6, actor=caller)
    await expect(page.locator("#claim-overlay")).to_be_hidden()
    await expect(page.locator("#jp-hit-where")).to_have_text("Máquina 1017")
    await expect(hit).to_have_attribute("data-waiting", "1")

    # Voided: the screens show the caller's public message, never the internal reason.
    await call(games.void_game, game=next_game, actor=caller, reason=REASON, public_message=MESSAGE)
    await expect(page.locator("#foot-tag")).to_have_text("Anulada")
    await expect(page.locator("#foot-text")).to_have_text(MESSAGE)
    assert REASON not in await page.content()
    await shot(page, "priority-void.png")
