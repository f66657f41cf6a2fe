"""The operator's setup page in a real browser, in Spanish: a ball set registered with its colour map, a
room with its main blower and reserve, a screen whose link opens, a card series, and PSD tables of a
Melilla casino joined to their carrusel: over some of them it is refused naming the missing table; over
all, joined; a new table joins by itself.

Screenshots left in /tmp for a look: setup-page-es.png, setup-refused-es.png.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import BrowserContext, Page, expect

from bingo.models import BallSet, DrawDevice
from halls.models import Venue
from jackpots.models import Pool
from jackpots.services import pools
from jackpots.services.pools import LevelSpec
from jackpots.tables.models import CasinoTable
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e


def carrusel(venue: Venue, operator: Any) -> Pool:
    return pools.create_pool(
        name="Carrusel",
        code="CARR-ML",
        jurisdiction=venue.jurisdiction,
        authorisation_ref="AUT-1",
        rule_pack="ML_PSD_CARRUSEL",
        venue=venue,
        levels=[LevelSpec(name="Carrusel", seed=Decimal("1000"), contribution_rate=Decimal("0.7"))],
        carousel_bet=Decimal("1.00"),
        actor=operator,
    )


async def _add_table(page: Page, number: int) -> None:
    form = page.locator("#table-form")
    await form.locator('[name="number"]').fill(str(number))
    await form.locator('[name="name"]').fill(f"Póquer {number}")
    await form.locator('[name="rule_pack"]').select_option("ML_PSD_CARRUSEL")
    await form.locator("button").click()
    await expect(page.locator(f'[data-table="{number}"]')).to_be_visible()


async def test_the_setup_page_sets_up_a_venue_in_spanish(
    page: Page, context: BrowserContext, server_url: str, venue: Venue, operator: Any
) -> None:
    pool = await call(carrusel, venue, operator)
    spanish = {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "domain": "127.0.0.1", "path": "/"}
    await context.add_cookies([spanish])  # type: ignore[list-item]
    await log_in(page, server_url, operator.username, "/setup/")
    await expect(page.locator("h1")).to_have_text("Configuración del establecimiento")

    form = page.locator("#ball-set-form")
    await form.locator('[name="name"]').fill("Juego Aciplast")
    await form.locator('[name="certified_games"]').fill("1")
    await form.locator('[name="colour_ranges"]').fill("1-30 red, 31-60 green, 61-80 blue, 81-90 white")
    await form.locator("button").click()
    row = page.locator('[data-ball-set="Juego Aciplast"]')
    await expect(row).to_contain_text("0 / 1")
    await expect(row).to_contain_text("1-30 rojo")  # the colours said in Spanish (bingo.labels)

    room_form = page.locator("#room-form")
    await room_form.locator('[name="name"]').fill("Sala Norte")
    await room_form.locator("button").click()
    await expect(page.locator('[data-room="Sala Norte"]')).to_be_visible()
    devices = page.locator("#device-form")
    await devices.locator('[name="name"]').fill("Bombo 1")
    await devices.locator("button").click()
    await devices.locator('[name="name"]').fill("Turbina de reserva")
    await devices.locator('[name="kind"]').select_option("turbine")
    await devices.locator('[name="reserve"]').check()
    await devices.locator("button").click()
    room = page.locator('[data-room="Sala Norte"]')
    await expect(room).to_contain_text("Turbina de reserva · Bombo de turbina de aire reserva")
    screens = page.locator("#screen-form")
    await screens.locator('[name="name"]').fill("Pantalla Norte")
    await screens.locator("button").click()
    await expect(room.locator('[data-screen="Pantalla Norte"] a')).to_be_visible()

    series = page.locator("#series-form")
    await series.locator('[name="code"]').fill("S1")
    await series.locator('[name="strips"]').fill("5")
    await series.locator("button").click()
    await expect(page.locator('[data-series="S1"]')).to_contain_text("30")

    for number in (1, 2):
        await _add_table(page, number)
    pick = page.locator("#carrusel-form")
    await pick.locator('[name="pool"]').select_option(str(pool.pk))
    await pick.locator('input[name="tables"]').first.check()
    await pick.locator("button").click()
    error = page.locator("#setup-error")
    await expect(error).to_have_attribute("data-code", "carrusel_needs_all_tables")
    await expect(error).to_contain_text("2 (Póquer 2)")
    await page.screenshot(path="/tmp/setup-refused-es.png", full_page=True)
    assert await call(lambda: CasinoTable.objects.filter(pool__isnull=False).count()) == 0

    for box in await pick.locator('input[name="tables"]').all():
        await box.check()
    await pick.locator("button").click()
    await expect(page.locator('[data-table="2"]')).to_contain_text("CARR-ML")
    await _add_table(page, 3)  # joins by itself
    await expect(page.locator('[data-table="3"]')).to_contain_text("CARR-ML")
    await page.screenshot(path="/tmp/setup-page-es.png", full_page=True)

    assert await call(lambda: DrawDevice.objects.filter(reserve=True).count()) == 1
    made = await call(lambda: BallSet.objects.get(name="Juego Aciplast"))
    assert made.colours["61"] == "blue" and made.certified_games == 1
