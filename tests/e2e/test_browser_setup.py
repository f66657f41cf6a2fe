"""The operator's setup page in a real browser, in Spanish: a ball set registered with its colour map, a
room with its main blower and reserve, a screen whose link opens, a card series, and PSD tables of a
Melilla casino with their carrusel created on the page: over some of them it is refused naming the
missing table and no pool is made; over all, created with its meter and members; a new table joins by
itself, and one cannot be taken out. A table closed for the night stays in the carrusel and opens again;
a room renamed shows its new name on its open hall screen without a reload.

Screenshots left in /tmp for a look: setup-page-es.png, setup-refused-es.png, setup-carrusel-es.png, and at
1280x800 setup-ball-set-es.png (the colour box pre-filled in Spanish), setup-ball-set-refused-es.png.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import BrowserContext, Page, expect

from bingo.balls import default_colours
from bingo.traditional.models import BallSet, DrawDevice
from halls.models import Screen, Venue
from jackpots.models import Pool
from jackpots.tables.models import CasinoTable
from tests.e2e.browser_support import call, log_in, open_screen

pytestmark = pytest.mark.e2e


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
    spanish = {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "domain": "127.0.0.1", "path": "/"}
    await context.add_cookies([spanish])  # type: ignore[list-item]
    await log_in(page, server_url, operator.username, "/setup/")
    await expect(page.locator("h1")).to_have_text("Configuración del establecimiento")

    # The colour box comes filled with the five-colour set in Spanish; registered as it is, the set keeps
    # the colour codes (data), and its row says them in Spanish.
    form = page.locator("#ball-set-form")
    spanish_set = "1-18 rojo, 19-36 amarillo, 37-54 verde, 55-72 azul, 73-90 morado"
    await expect(form.locator('[name="colour_ranges"]')).to_have_value(spanish_set)
    await expect(form.locator("#colour-names")).to_contain_text("rojo, amarillo, verde, azul, morado")
    await page.set_viewport_size({"width": 1280, "height": 800})
    await form.scroll_into_view_if_needed()
    await page.screenshot(path="/tmp/setup-ball-set-es.png")
    await form.locator('[name="name"]').fill("Juego estándar")
    await form.locator("button").click()
    await expect(page.locator('[data-ball-set="Juego estándar"]')).to_contain_text(spanish_set)
    assert await call(lambda: BallSet.objects.get(name="Juego estándar").colours) == default_colours()
    # A part that cannot be read is named in Spanish, and the text typed stays in the box.
    await form.locator('[name="name"]').fill("Juego mal")
    await form.locator('[name="colour_ranges"]').fill("1-45 rojo, 46-90 fucsia")
    await form.locator("button").click()
    await expect(page.locator("#setup-error")).to_contain_text("«46-90 fucsia»: «fucsia» no es un color")
    await expect(form.locator('[name="colour_ranges"]')).to_have_value("1-45 rojo, 46-90 fucsia")
    await expect(form.locator('[name="name"]')).to_have_value("Juego mal")
    await page.locator("#setup-error").scroll_into_view_if_needed()
    await page.screenshot(path="/tmp/setup-ball-set-refused-es.png")
    await page.set_viewport_size({"width": 1920, "height": 1080})

    await form.locator('[name="name"]').fill("Juego Aciplast")
    await form.locator('[name="certified_games"]').fill("1")
    await form.locator('[name="colour_ranges"]').fill("1-30 red, 31-60 green, 61-80 blue, 81-90 white")
    await form.locator("button").click()
    row = page.locator('[data-ball-set="Juego Aciplast"]')
    await expect(row).to_contain_text("0 / 1")
    await expect(row).to_contain_text("1-30 rojo")  # the colours said in Spanish (bingo.traditional.labels)

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

    # The amounts the page pre-fills are in Spanish ("1,00", not "1.00"), and read back as they stand.
    series = page.locator("#series-form")
    await expect(series.locator('[name="face_value"]')).to_have_value("1,00")
    await expect(page.locator('#table-form [name="table_minimum"]')).to_have_value("10,00")
    await expect(page.locator('#carrusel-form [name="carousel_bet"]')).to_have_value("1,00")
    await expect(page.locator('#carrusel-form [name="seed"]')).to_have_value("5000,00")
    await series.locator('[name="code"]').fill("S1")
    await series.locator('[name="strips"]').fill("5")
    await series.locator("button").click()
    await expect(page.locator('[data-series="S1"]')).to_contain_text("30")
    await expect(page.locator('[data-series="S1"]')).to_contain_text("1,00\u00a0€")

    for number in (1, 2):
        await _add_table(page, number)
    new = page.locator("#carrusel-form")
    await new.locator('[name="name"]').fill("Carrusel Póquer")
    await new.locator('[name="code"]').fill("CARR-ML")
    await new.locator('[name="rule_pack"]').select_option("ML_PSD_CARRUSEL")
    await new.locator('[name="authorisation_ref"]').fill("AUT-1")
    await new.locator('[name="seed"]').fill("1.000,00")  # grouped as Spanish writes it
    await new.locator('input[name="tables"]').first.check()
    await new.locator("button").click()
    error = page.locator("#setup-error")
    await expect(error).to_have_attribute("data-code", "carrusel_needs_all_tables")
    await expect(error).to_contain_text("faltan las mesas 2 (Póquer 2)")
    await page.screenshot(path="/tmp/setup-refused-es.png", full_page=True)
    assert await call(
        lambda: (Pool.objects.count(), CasinoTable.objects.filter(pool__isnull=False).count())
    ) == (0, 0)

    for box in await new.locator('input[name="tables"]').all():
        await box.check()
    await new.locator("button").click()
    carrusel = page.locator('[data-carrusel="CARR-ML"]')
    await expect(carrusel.locator("[data-meter]")).to_have_text("1.000,00 €")  # grouped, as the JS writes it
    await expect(carrusel.locator("[data-member]")).to_have_count(2)
    await expect(page.locator('[data-table="2"]')).to_contain_text("CARR-ML")
    await _add_table(page, 3)  # joins by itself
    await expect(carrusel.locator('[data-member="3"]')).to_be_visible()
    await expect(carrusel).to_contain_text("no pueden salir de él")  # a carrusel of all the tables keeps each
    await expect(carrusel.locator(".carrusel__remove")).to_have_count(0)

    # Table 2 closed for the night: still in the carrusel, shown closed; then open again.
    await page.locator('[data-close="2"] summary').click()
    await page.locator('[data-close="2"] [name="reason"]').fill("Sin crupier esta noche")
    await page.locator('[data-close="2"] button').click()
    await expect(page.locator('[data-table="2"]')).to_have_attribute("data-state", "closed")
    await expect(carrusel.locator('[data-member="2"]')).to_contain_text("Cerrada temporalmente")
    await page.screenshot(path="/tmp/setup-carrusel-es.png", full_page=True)
    await page.locator('[data-reopen="2"] button').click()
    await expect(page.locator('[data-table="2"]')).to_have_attribute("data-state", "open")
    await expect(page.locator('[data-table="2"]')).to_contain_text("En servicio")
    await page.screenshot(path="/tmp/setup-page-es.png", full_page=True)

    # The room renamed: its hall screen, open in another tab, shows the new name without a reload.
    hall = await context.new_page()
    token = await call(lambda: Screen.objects.get(name="Pantalla Norte").token)
    await open_screen(hall, server_url, token)
    await expect(hall.locator(".screen-head__room")).to_have_text("Sala Norte")
    rename = page.locator('[data-room="Sala Norte"] [data-rename-room]')
    await rename.locator("summary").click()
    await rename.locator('[name="name"]').fill("Sala del Mar")
    await rename.locator("button").click()
    await expect(page.locator('[data-room="Sala del Mar"]')).to_be_visible()
    await expect(hall.locator(".screen-head__room")).to_have_text("Sala del Mar")
    await expect(hall).to_have_title("Pantalla Norte · Sala del Mar")

    assert await call(lambda: CasinoTable.objects.filter(pool__code="CARR-ML").count()) == 3
    assert await call(lambda: DrawDevice.objects.filter(reserve=True).count()) == 1
    made = await call(lambda: BallSet.objects.get(name="Juego Aciplast"))
    assert made.colours["61"] == "blue" and made.certified_games == 1
