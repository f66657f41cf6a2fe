"""The central's network page ("Red") in a real browser (Debian's chromium via Playwright), in Spanish.

Every member venue with its link: online with a backlog, offline since its socket closed, never connected;
the page reloads itself, so a venue whose link drops turns up offline without anyone touching it. Only
at the central, only for operators. Screenshot at 1920×1080: /tmp/link-network.png.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.async_api import Page, expect

from halls.link.models import VenueLink
from halls.link.services import presence
from halls.models import Network, Role, Venue
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in

ACCEPT_LANGUAGE = "es"

pytestmark = pytest.mark.e2e


def network_of_three(venue: Venue, other_venue: Venue) -> Venue:
    third = Venue.objects.create(name="Bingo Ceuta Puerto", licence_number="CE-B-0003")
    network = Network.objects.create(name="Red Norte", code="NORTE", jurisdiction=venue.jurisdiction)
    network.venues.add(venue, other_venue, third)
    presence.connected(venue_id=venue.pk)
    presence.seen(venue_id=venue.pk, reported=130)
    VenueLink.objects.filter(venue=venue).update(applied_sequence=118, software_version="hall 0.1.0")
    presence.connected(venue_id=other_venue.pk)
    presence.seen(venue_id=other_venue.pk, reported=40)
    VenueLink.objects.filter(venue=other_venue).update(applied_sequence=40, software_version="hall 0.1.0")
    return third


async def test_the_network_page_shows_each_venues_link_and_follows_a_drop(
    page: Page, server_url: str, settings: Any, venue: Venue, other_venue: Venue, operator: User
) -> None:
    settings.HALL_ROLE = "central"
    third = await call(network_of_three, venue, other_venue)
    await log_in(page, server_url, "operator", "/network/")

    await expect(page.locator("h1")).to_have_text("Red de salas")
    rows = page.locator("#network-table tbody tr")
    await expect(rows).to_have_count(3)
    row = {v.pk: page.locator(f'#network-table tr[data-venue="{v.pk}"]') for v in (venue, other_venue, third)}
    await expect(row[venue.pk]).to_have_attribute("data-state", "online")
    await expect(row[venue.pk]).to_contain_text("En línea")
    await expect(row[venue.pk].locator(".nw-backlog")).to_have_text("12")
    await expect(row[third.pk]).to_contain_text("Nunca conectada")
    await expect(page.locator("#sum-backlog")).to_have_text("12")

    # The other venue's line goes down: the page shows it offline at its next reload.
    await call(presence.disconnected, venue_id=other_venue.pk)
    await expect(row[other_venue.pk]).to_have_attribute("data-state", "offline", timeout=12_000)
    await expect(row[other_venue.pk]).to_contain_text("Sin conexión")
    await expect(page.locator("#sum-offline")).to_have_text("1")
    await page.screenshot(path="/tmp/link-network.png", full_page=True)


async def test_the_network_page_is_the_centrals_and_its_operators(
    page: Page, server_url: str, settings: Any, venue: Venue
) -> None:
    await call(make_user, "cajero", venue, Role.CASHIER)
    settings.HALL_ROLE = "central"
    await log_in(page, server_url, "cajero", "/accounts/login/")
    answer = await page.goto(f"{server_url}/network/")
    assert answer is not None and answer.status == 403
    settings.HALL_ROLE = "venue"
    answer = await page.goto(f"{server_url}/network/")
    assert answer is not None and answer.status == 404
