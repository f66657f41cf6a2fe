"""The operator's regions page in a real browser, in Spanish: regions with their venues, the agreements
(valid today or what they lack) and the networks with their members' regions, a network spanning a pair
without a valid agreement flagged.

Screenshot left in /tmp for a look: regions-page-es.png.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import BrowserContext, Page, expect

from halls.models import Jurisdiction, Network, Venue
from halls.services import regions
from tests.e2e.browser_support import call, log_in
from tests.halls.region_support import agree, region, venue_in
from tests.halls.region_support import operator as make_operator

pytestmark = pytest.mark.e2e


def two_networks(home: Venue) -> None:
    ml, an, ct = region("ML"), region("AN", Jurisdiction.AN10), region("CT", Jurisdiction.CT)
    company = make_operator("A29000001")
    regions.assign_venue(venue=home, region=ml, operator=company, actor="test")
    malaga, girona = venue_in(an, "AN-1", company), venue_in(ct, "CT-1")
    agreement = agree(ml, an, company=company)
    sur = Network.objects.create(name="Red Sur", code="SUR", jurisdiction=Jurisdiction.ML)
    for venue in (home, malaga):
        regions.join_network(network=sur, venue=venue, actor="test")
    agree(ml, ct, protocol=False)
    norte = Network.objects.create(name="Red Norte", code="NORTE", jurisdiction=Jurisdiction.ML)
    norte.venues.set([home, girona])  # placed before the rule: flagged on the page
    assert agreement.pk


async def test_the_regions_page_lists_regions_agreements_and_networks_in_spanish(
    page: Page, context: BrowserContext, server_url: str, venue: Venue, operator: Any
) -> None:
    await call(two_networks, venue)
    spanish = {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "domain": "127.0.0.1", "path": "/"}
    await context.add_cookies([spanish])  # type: ignore[list-item]
    await log_in(page, server_url, operator.username, "/regions/")
    await expect(page.locator("h1")).to_have_text("Regiones y convenios")
    await expect(page.locator('[data-region="AN"]')).to_contain_text("Andalucía 2010")
    valid = page.locator('[data-agreement][data-valid="yes"]')
    await expect(valid).to_have_count(1)
    await expect(valid).to_contain_text("Vigente hoy")
    await expect(page.locator('[data-agreement][data-valid="no"]')).to_contain_text(
        "el protocolo de colaboración entre administraciones no está registrado"
    )
    await expect(page.locator('[data-network="SUR"]')).to_have_attribute("data-span", "ok")
    norte = page.locator('[data-network="NORTE"]')
    await expect(norte).to_have_attribute("data-span", "out")
    await expect(norte).to_contain_text("Sin convenio válido CT ↔ ML")
    await page.screenshot(path="/tmp/regions-page-es.png", full_page=True)
