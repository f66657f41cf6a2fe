"""The prize programs' simulation page in the hall's Spanish, in a real browser (issue 26): the rules'
refusal of a bad program reads Spanish with its amounts as "35,00 €", and the simulator's chart has its
axis, words and tooltips in Spanish; no English reaches the page (tests/e2e/spanish_support.py).

Screenshots left in /tmp for a look: es-programs-refusal.png (the refusal), es-programs-chart.png (the
report and its chart).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.async_api import Page, expect

from bingo.traditional.models import PrizeProgram
from bingo.traditional.services import programs
from halls.models import Role, Room
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in
from tests.e2e.spanish_support import english_on

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
AUTH = "ML-DGJ-2025/017"
PRIMA = {"funding_percent": "2.5", "amount": "30", "authorisation_ref": AUTH}
SPANISH_AMOUNT = re.compile(r"\d{1,3}(\.\d{3})*,\d\d\u00a0?\s?€")


@pytest.fixture(autouse=True)
def _spanish(settings: Any) -> None:
    """The hall's default (Spanish), as a venue runs it."""
    settings.LANGUAGE_CODE = "es"


def manager_and_prima(room: Room) -> PrizeProgram:
    """The venue's operator, staff in the admin, and a Prima of 30 € activated in the room."""
    operadora = make_user("operadora", room.venue, Role.OPERATOR)
    operadora.is_staff = operadora.is_superuser = True
    operadora.save()
    return programs.activate_program(
        room=room, code="PRIMA", program_type="BA-1", params=PRIMA, name="Prima 30", actor=operadora
    )


async def simulate(page: Page, params: dict[str, str]) -> None:
    await page.fill("#id_params", json.dumps(params))
    await page.fill("#id_days", "30")
    await page.fill("#id_games_per_day", "20")
    await page.click("input[name=simulate]")


async def test_the_simulation_page_says_the_refusal_and_the_chart_in_spanish(
    page: Page, server_url: str, room: Room
) -> None:
    prima = await call(manager_and_prima, room)
    await log_in(page, server_url, "operadora", "/admin/bingo/prizeprogram/")
    await page.check(f"input[name=_selected_action][value='{prima.pk}']")
    await page.select_option("select[name=action]", "simulate_before_activation")
    await page.click("button[name=index]")
    await expect(page.locator("#simulate-form")).to_be_visible()
    await expect(page.locator("#id_price")).to_have_value("1,00")  # the price as a Spanish reader types it

    await simulate(page, {**PRIMA, "amount": "35"})
    problems = page.locator("#simulate-problems")
    await expect(problems).to_contain_text("el importe de 35,00\u00a0€ no es un nivel de la Prima")
    await expect(problems).to_contain_text("30,00\u00a0€, 50,00\u00a0€, 100,00\u00a0€")
    await expect(problems).not_to_contain_text("Prima level")
    await page.screenshot(path="/tmp/es-programs-refusal.png", full_page=True)
    found = await english_on(page)
    assert not found, "English on the Spanish simulation page (refusal):\n" + "\n".join(found)

    await simulate(page, PRIMA)
    plot = page.locator("#simulate-plot svg")
    await expect(plot).to_be_visible()
    axis = await plot.locator("g.labels text[text-anchor=end]").evaluate_all(
        "els => els.map(e => e.textContent)"
    )
    assert axis[0] == "0,00 €", axis
    assert all(SPANISH_AMOUNT.fullmatch(t) for t in axis), axis
    await expect(plot.locator("g.labels")).to_contain_text("Días")
    await expect(plot.locator("g.labels")).to_contain_text("Bote (€)")
    await expect(plot.locator("g.legend")).to_contain_text("bote al cierre")
    # The plot's summary: the share of sales as a Spanish number, the counts through ngettext (issue 26).
    await expect(plot).to_contain_text(re.compile(r"\(\d+,\d\d % de las ventas\)"))
    await expect(plot).not_to_contain_text(re.compile(r"\b1 premios\b|\d\.\d\d %|cartón\(es\)"))
    await expect(page.locator(".simulate-figures")).to_contain_text("€")
    # The share of sales paid back as a Spanish percentage ("0,041 %"), not a bare English fraction.
    await expect(page.locator(".simulate-figures")).to_contain_text(re.compile(r"\d+,\d{3} %"))
    await expect(page.locator(".simulate-figures")).not_to_contain_text(re.compile(r"\b0\.\d"))
    await expect(page.locator(".simulate-text")).to_have_count(0)  # the English text report: English only
    await page.screenshot(path="/tmp/es-programs-chart.png", full_page=True)
    found = await english_on(page)
    assert not found, "English on the Spanish simulation page (chart):\n" + "\n".join(found)
