"""The gaming-tax returns page in a real browser, in Spanish (issue 29): the month of play computed (the
bases, the rates and the amount due to the cent), filed (frozen, listed with its CSV and PDF), refused in
Spanish when the period is not closed yet, and no English on the page.

Screenshots left for a look in $HALL_SHOTS (when set): tax-refused.png, tax-draft.png, tax-filed.png.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from halls.models import Role, Venue
from halls.tax.models import TaxReturn
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in
from tests.e2e.spanish_support import english_on
from tests.tax.tax_support import past, play_a_month, rate_table

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
NBSP = "\u00a0"


async def shot(page: Page, name: str) -> None:
    folder = os.environ.get("HALL_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(Path(folder) / name), full_page=True)


async def test_the_operator_computes_and_files_a_month_in_spanish(
    page: Page, server_url: str, venue: Venue, session, room, card_series, caller, cashier, ball_set
) -> None:
    month = await call(
        play_a_month,
        venue=venue,
        session=session,
        room=room,
        series=card_series,
        caller=caller,
        cashier=cashier,
    )
    await call(rate_table)
    await call(make_user, "gerente", venue, Role.OPERATOR)  # a Spanish name on the page's top bar
    label = month.period.label
    await page.set_viewport_size({"width": 1400, "height": 900})
    await log_in(page, server_url, "gerente", f"/tax/venues/{venue.pk}/")
    await expect(page.locator("h1")).to_have_text("Declaraciones del impuesto sobre el juego")
    await page.fill("#tax-period", label)
    await page.click("#tax-compute-button")
    await expect(page.locator("#tax-error")).to_contain_text("no se ha cerrado")
    await shot(page, "tax-refused.png")
    assert await english_on(page) == []

    await call(past, venue, month.period)
    await page.click("#tax-compute-button")
    await expect(page.locator("#tax-status")).to_contain_text("Borrador")
    await expect(page.locator("#tax-lines tr[data-game-type='traditional'] td").nth(0)).to_have_text(
        "Bingo tradicional"
    )
    await expect(page.locator("#tax-lines tr[data-game-type='machine_c'] [data-due]")).to_have_text(
        f"2,92{NBSP}€"
    )
    await expect(page.locator("#tax-total")).to_have_text(f"59,92{NBSP}€")
    await shot(page, "tax-draft.png")
    assert await english_on(page) == []

    await page.click("#tax-file")
    await expect(page.locator("#tax-status")).to_contain_text("Presentada")
    filed = await call(TaxReturn.objects.get, venue=venue, period=label)
    await expect(page.locator("#tax-digest")).to_have_text(filed.digest)
    await expect(page.locator(f"#tax-filed-table tr[data-period='{label}']")).to_contain_text(f"59,92{NBSP}€")
    await shot(page, "tax-filed.png")
    assert await english_on(page) == []
