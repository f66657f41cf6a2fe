"""The till in Spanish, in a real browser (the hall's language by default): the header, the tabs and the
page's own words in Spanish, amounts typed the Spanish way ("1.234,5") and shown as "1.234,50 €", and the
API's refusals shown next to the form in Spanish.

Screenshot left in /tmp for a look: till-es.png (1280×800).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from playwright.async_api import Page, expect

from halls.cashier.models import Shift, Till
from halls.models import Role, Venue
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
NBSP = "\u00a0"


def till_and_cashier(venue: Venue) -> tuple[Till, Any]:
    return Till.objects.create(venue=venue, name="Caja Sur"), make_user("cajera", venue, Role.CASHIER)


async def test_the_till_speaks_spanish(page: Page, server_url: str, venue: Venue) -> None:
    await call(till_and_cashier, venue)
    await page.set_viewport_size({"width": 1280, "height": 800})
    await log_in(page, server_url, "cajera", "/cashier/")
    await expect(page.locator("#head-state")).to_have_text("Sin turno abierto")
    await expect(page.locator("#tab-shift")).to_have_text("Turno")
    await expect(page.locator("#tab-prizes")).to_contain_text("Premios")
    await expect(page.locator("#open-card h2")).to_have_text("Abrir un turno")

    # The page is ready once it has listed the tills (its form handlers are wired by then).
    await expect(page.locator("#open-till")).to_contain_text("Caja Sur")
    # A typed amount that is not one: the page says so, in Spanish, and sends nothing.
    await page.fill("#open-float", "12,345")
    await page.click("#open-form button[type=submit]")
    await expect(page.locator("#open-msg")).to_contain_text("es ambiguo")
    await expect(page.locator("#head-state")).to_have_text("Sin turno abierto")

    # "1.234,5" is 1234.50: the header shows it the Spanish way.
    await page.fill("#open-float", "1.234,5")
    await page.click("#open-form button[type=submit]")
    await expect(page.locator("#head-state")).to_have_text("Turno abierto")
    await expect(page.locator("#head-cash")).to_have_text(f"1.234,50{NBSP}€")
    await expect(page.locator("#head-till")).to_have_text("Caja Sur")

    # A cash-up that does not match, with no witness: the API's refusal, in Spanish, next to the form.
    await page.fill("#close-cash", "1.230")
    await page.fill("#close-bank", "0")
    await expect(page.locator("#close-diff")).to_contain_text(f"Faltan 4,50{NBSP}€")
    await page.click("#close-form button[type=submit]")
    await expect(page.locator("#close-msg")).to_contain_text("testigo")
    await expect(page.locator("#close-msg")).to_have_attribute("data-code", "witness_required")
    await expect(page.locator("#close-msg")).not_to_contain_text("witness_required")  # the code is not shown
    await page.screenshot(path="/tmp/till-es.png")

    # The other tabs speak Spanish too.
    await page.click("#tab-prizes")
    await expect(page.locator("#payables-table")).to_contain_text("No hay premios pendientes.")
    await page.click("#tab-tickets")
    await expect(page.locator("#ticket-issue-card h2")).to_have_text("Emitir un ticket")
    await page.fill("#ticket-amount", "0,001")
    await page.click("#ticket-issue-form button[type=submit]")
    await expect(page.locator("#ticket-issue-msg")).to_contain_text("no es un importe")


async def test_a_spanish_amount_reaches_the_api_as_a_decimal_string(
    page: Page, server_url: str, venue: Venue
) -> None:
    """ "1.234,56" typed in the float: the API receives "1234.56" (a string, never a float) and the shift
    holds exactly that; an ambiguous amount is refused saying how to write it, nothing sent."""
    await call(till_and_cashier, venue)
    await page.set_viewport_size({"width": 1280, "height": 800})
    await log_in(page, server_url, "cajera", "/cashier/")
    await expect(page.locator("#open-till")).to_contain_text("Caja Sur")
    sent: list[Any] = []
    page.on(
        "request",
        lambda r: sent.append(r.post_data_json) if r.method == "POST" and "/shifts" in r.url else None,
    )
    await page.fill("#open-float", "12,345")
    await page.click("#open-form button[type=submit]")
    await expect(page.locator("#open-msg")).to_contain_text(
        "«12,345» es ambiguo: escriba los miles con «.» y los céntimos con «,», como 1.234,50."
    )
    await page.screenshot(path="/tmp/till-amount-ambiguous-es.png")
    assert sent == []
    await page.fill("#open-float", "1.234,56")
    await page.click("#open-form button[type=submit]")
    await expect(page.locator("#head-state")).to_have_text("Turno abierto")
    await expect(page.locator("#head-cash")).to_have_text(f"1.234,56{NBSP}€")
    assert [body["float"] for body in sent] == ["1234.56"]
    assert await call(lambda: [s.float_amount for s in Shift.objects.all()]) == [Decimal("1234.56")]
