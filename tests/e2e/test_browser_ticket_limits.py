"""The tickets part of the setup page in a real browser, in Spanish: the figures in force shown with the
jurisdiction's defaults, the operator's own maximum and cage figure saved, and a cage figure above the
maximum refused on the page naming both, nothing written.

Screenshots left in /tmp for a look: setup-tickets-es.png, setup-tickets-refused-es.png.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import BrowserContext, Page, expect

from halls.cashier.models import CashierSettings
from halls.models import Venue
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e


def _figures(venue: Venue) -> tuple[Decimal | None, Decimal | None]:
    row = CashierSettings.objects.filter(venue=venue).first()
    return (row.ticket_max_amount, row.ticket_cage_above) if row else (None, None)


async def test_the_operator_sets_the_ticket_limits_in_spanish(
    page: Page, context: BrowserContext, server_url: str, venue: Venue, operator: Any
) -> None:
    spanish = {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "domain": "127.0.0.1", "path": "/"}
    await context.add_cookies([spanish])  # type: ignore[list-item]
    await page.set_viewport_size({"width": 1280, "height": 800})
    await log_in(page, server_url, operator.username, "/setup/")
    section = page.locator("#tickets")
    await expect(section.locator("h2")).to_have_text("Tickets")
    await expect(section.locator("[data-in-force]")).to_contain_text("como máximo 3.000,00")
    form = section.locator(f'[data-venue-tickets="{venue.pk}"]')
    await expect(form.locator('[name="ticket_max_amount"]')).to_have_attribute("placeholder", "3000,00")

    await form.locator('[name="ticket_max_amount"]').fill("1.500,00")
    await form.locator('[name="ticket_cage_above"]').fill("400")
    await form.locator("button").click()
    await expect(page.locator("#tickets [data-in-force]")).to_contain_text("como máximo 1.500,00")
    await expect(page.locator("#tickets [data-in-force]")).to_contain_text("400,00")
    assert await call(_figures, venue) == (Decimal("1500.00"), Decimal("400.00"))
    await page.locator("#tickets").scroll_into_view_if_needed()
    await page.screenshot(path="/tmp/setup-tickets-es.png")

    form = page.locator(f'#tickets [data-venue-tickets="{venue.pk}"]')
    await form.locator('[name="ticket_cage_above"]').fill("2.000")
    await form.locator("button").click()
    error = page.locator("#setup-error")
    await expect(error).to_have_attribute("data-code", "cage_above_maximum")
    await expect(error).to_contain_text("2.000,00")
    await expect(error).to_contain_text("1.500,00")
    await expect(error).to_contain_text("solo en caja")
    assert await call(_figures, venue) == (Decimal("1500.00"), Decimal("400.00"))
    await error.scroll_into_view_if_needed()
    await page.screenshot(path="/tmp/setup-tickets-refused-es.png")
