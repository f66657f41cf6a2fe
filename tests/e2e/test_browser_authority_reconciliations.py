"""The wide-area reconciliations on the authority's portal in a real browser, in Spanish (issue 31): a
network's central reconciles venue A's meters (a row in the pool's ledger no batch of A's explains) and
venue B's; both sides' records of A's reach the regulator's node on the feed (B is of another authority's
region: its jurisdiction's feed is off, so never told), and the authority reads them from the portal's menu,
newest first, with each level's totals and each difference; filtered by side. A venue's operator signing in
to the node is refused.

Screenshots left for a look in $HALL_SHOTS (when set): authority-reconciliations.png,
authority-reconciliations-central.png.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from halls.feed.kinds import FeedKind
from halls.link.models import Destination, OutboxMessage
from halls.models import Jurisdiction, Venue
from tests.e2e.browser_support import call, log_in
from tests.jackpots.widearea import support
from tests.jackpots.widearea.test_reconciliation import a_stray_ledger_row, reconcile
from tests.portal.support import accept, authority_user, register

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
NBSP = "\u00a0"
KIND = FeedKind.WIDE_AREA_RECONCILED.value


async def shot(page: Page, name: str) -> None:
    folder = os.environ.get("HALL_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(Path(folder) / name), full_page=True)


def reconciled_and_told() -> None:
    """The network plays and reconciles with the feed on for A's jurisdiction only; what the installation
    owes the node is then accepted by the node (this test's database plays both)."""
    net = support.build()
    Venue.objects.filter(pk=net.b.pk).update(jurisdiction=Jurisdiction.ML)
    support.plays(net.machines["a"], 1, ["1.00", "0.60"])
    support.plays(net.machines["b"], 1, ["2.00"])
    support.sync(net)
    a_stray_ledger_row(net)
    reconcile(net, "a")
    reconcile(net, "b")
    authority_user("inspectora")
    senders = {  # the central's records from the central's installation, a venue's from its own
        "central": register("Central Red WAN", uid="c3" * 8, kind="central", jurisdiction="AN10"),
        "venue": register("Casino Sevilla", uid="a1" * 8, licence="WA-A", jurisdiction="AN10"),
    }
    owed = OutboxMessage.objects.filter(destination=Destination.REGULATOR, kind=KIND).order_by("sequence")
    for message in owed:
        fact = message.payload
        accept(senders[fact["payload"]["side"]], KIND, fact["payload"], at=datetime.fromisoformat(fact["at"]))


async def test_the_authority_reads_the_reconciliations_of_its_venues(
    page: Page, server_url: str, settings: Any
) -> None:
    settings.HALL_FEED_BY_JURISDICTION = {Jurisdiction.AN10: {"enabled": True}}
    await call(reconciled_and_told)
    settings.HALL_ROLE = "regulator"
    await page.set_viewport_size({"width": 1400, "height": 900})
    await log_in(page, server_url, "inspectora", "/authority/")
    await page.locator("#nav-reconciliations").click()
    await page.wait_for_url(f"{server_url}/authority/reconciliations/")
    await expect(page.locator("html")).to_have_attribute("lang", "es")
    await expect(page.locator("h1")).to_have_text("Conciliaciones de área amplia")
    await expect(page.locator("#nav-reconciliations")).to_have_class("is-current")
    items = page.locator('.wa-pool[data-pool="WAN-GRAND"] .wa-reconciliation')
    await expect(items).to_have_count(2)  # A's, on both sides; none of B's
    await expect(page.locator('.wa-reconciliation[data-venue="WA-B"]')).to_have_count(0)
    await expect(items.nth(0)).to_have_attribute("data-side", "venue")  # newest first
    await expect(items.nth(1)).to_have_attribute("data-side", "central")
    for n in range(2):
        item = items.nth(n)
        await expect(item).to_have_attribute("data-state", "differs")
        await expect(item.locator(".wa-state")).to_have_text("Con diferencias")
        played = item.locator('.wa-totals tr[data-level="Grand"][data-part="bet"] td.num')
        await expect(played).to_have_count(4)
        await expect(played.nth(0)).to_contain_text(f"1,60{NBSP}€")  # what A says it forwarded
        await expect(played.nth(3)).to_contain_text(f"3,60{NBSP}€")  # the ledger: A's batch and the stray row
        await expect(item.locator(".wa-differences tbody tr")).to_have_count(3)
        bet = item.locator('.wa-differences tr[data-check="ledger"][data-field="bet"] .wa-delta')
        await expect(bet).to_have_attribute("data-delta", "-2.000000")
        await expect(bet).to_contain_text(f"-2,00{NBSP}€")
    await expect(items.nth(0)).to_contain_text("Casino Sevilla (WA-A)")  # the venue's registered name
    await expect(items.nth(1)).to_contain_text("Central Red WAN")
    await shot(page, "authority-reconciliations.png")

    await page.select_option("#wa-side", "central")
    await page.click("#wa-filter")
    await expect(page.locator(".wa-reconciliation")).to_have_count(1)
    await expect(page.locator(".wa-reconciliation")).to_have_attribute("data-side", "central")
    await shot(page, "authority-reconciliations-central.png")


async def test_a_venues_operator_is_refused_on_the_node(page: Page, server_url: str, settings: Any) -> None:
    settings.HALL_FEED_BY_JURISDICTION = {Jurisdiction.AN10: {"enabled": True}}
    await call(reconciled_and_told)
    settings.HALL_ROLE = "regulator"
    answer = await page.goto(f"{server_url}/accounts/login/?next=/authority/reconciliations/")
    assert answer is not None
    await page.fill("#id_username", "wa-operator")
    await page.fill("#id_password", "pw-wa-operator")
    async with page.expect_response(f"{server_url}/authority/reconciliations/") as refused:
        await page.press("#id_password", "Enter")
    assert (await refused.value).status == 403
    await expect(page.locator("h1")).to_have_text("No permitido")  # the node's refusal page
    await expect(page.locator(".wa-reconciliation")).to_have_count(0)
