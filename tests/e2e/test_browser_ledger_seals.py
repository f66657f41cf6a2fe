"""The inspector, in Spanish, verifies a venue whose cashier ledger was tampered with (issue 28): the
ledger's row names the redemption whose legs were edited, and the page prints the installation's public
anchor key (the one /.well-known/hall-anchor-key publishes).

Screenshot left in /tmp for a look: seals-inspector-audit.png.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import BrowserContext, Page, expect

from halls.models import Role
from halls.services import anchor_key
from tests.cashier import ledger_seal_support as tamper
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in

pytestmark = [pytest.mark.e2e, pytest.mark.cashier_off_shift]


def tampered_day(venue: Any, cashier: Any) -> int:
    day = tamper.a_day(venue, cashier)
    tamper.move_one_between_the_legs(day.redemption)
    return day.redemption.pk


async def test_the_inspector_sees_the_tampered_transaction_and_the_public_key(
    page: Page, context: BrowserContext, server_url: str, venue: Any, cashier: Any
) -> None:
    redemption = await call(tampered_day, venue, cashier)
    await call(make_user, "inspectora", venue, Role.INSPECTOR)
    document = await call(anchor_key.document)
    spanish = {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "domain": "127.0.0.1", "path": "/"}
    await context.add_cookies([spanish])  # type: ignore[list-item]
    await log_in(page, server_url, "inspectora", f"/inspector/venues/{venue.pk}/audit/")
    await expect(page.locator('[data-section="anchor-key"] [data-field="kid"]')).to_have_text(document["kid"])
    await expect(page.locator('[data-section="anchor-key"]')).to_contain_text("Clave pública de los anclajes")
    await page.click('[data-action="verify"]')
    row = page.locator(f'[data-chain="ledger-{venue.pk}"]')
    await expect(row).to_have_attribute("data-ok", "no")
    await expect(row).to_contain_text(f"transacción {redemption} (ticket_redeem")
    await expect(row).to_contain_text("apuntes")
    await page.screenshot(path="/tmp/seals-inspector-audit.png", full_page=True)
    published = await page.request.get(f"{server_url}/.well-known/hall-anchor-key")
    assert (await published.json())["key"] == document["key"]
