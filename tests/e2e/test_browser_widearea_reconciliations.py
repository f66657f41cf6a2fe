"""The wide-area reconciliations page in a real browser, in Spanish (issue 31): at the central, a pool's
reconciliations of its venues' meters, newest first, one agreed and one where the pool's ledger holds a row
of venue A that no batch of A's explains (found by the ledger check, to the sixth decimal); filtered by
venue; the same reconciliation as venue A recorded it; the venue's inspector reads their own venue's only.

Screenshots left for a look in $HALL_SHOTS (when set): widearea-reconciliations.png,
widearea-reconciliations-venue.png, widearea-reconciliations-inspector.png.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from halls.models import Role
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in
from tests.jackpots.widearea import support
from tests.jackpots.widearea.test_reconciliation import a_stray_ledger_row, reconcile

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
NBSP = "\u00a0"


async def shot(page: Page, name: str) -> None:
    folder = os.environ.get("HALL_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(Path(folder) / name), full_page=True)


def reconciled_network() -> support.Net:
    """Venues A and B play and forward; A's meters and B's reconciled at the central, after a stray row
    of A's in the central pool's ledger."""
    net = support.build()
    support.plays(net.machines["a"], 1, ["1.00", "0.60"])
    support.plays(net.machines["b"], 1, ["2.00"])
    support.sync(net)
    a_stray_ledger_row(net)
    reconcile(net, "a")
    reconcile(net, "b")
    make_user("inspectora-b", net.b, Role.INSPECTOR)
    return net


async def test_the_central_lists_its_reconciliations_and_each_difference(page: Page, server_url: str) -> None:
    net = await call(reconciled_network)
    await page.set_viewport_size({"width": 1400, "height": 900})
    await log_in(page, server_url, "wa-operator", "/widearea/reconciliations/")
    await expect(page.locator("html")).to_have_attribute("lang", "es")
    pool = page.locator('.wa-pool[data-pool="WAN-GRAND"]')
    items = pool.locator(".wa-reconciliation")
    await expect(items).to_have_count(2)
    await expect(items.nth(0)).to_have_attribute("data-venue", "WA-B")  # newest first
    await expect(items.nth(0)).to_have_attribute("data-state", "agreed")
    await expect(items.nth(0).locator(".wa-agreed")).to_be_visible()
    a = items.nth(1)
    await expect(a).to_have_attribute("data-state", "differs")
    # The venue's totals and the central's records of them, level by level (Spanish figures).
    played = a.locator('.wa-totals tr[data-level="Grand"][data-part="bet"] td.num')
    await expect(played).to_have_count(4)
    await expect(played.nth(0)).to_contain_text(f"1,60{NBSP}€")  # what A says it forwarded
    await expect(played.nth(3)).to_contain_text(f"3,60{NBSP}€")  # the ledger: A's batch and the stray row
    differences = a.locator(".wa-differences tbody tr")
    await expect(differences).to_have_count(3)
    bet = a.locator('.wa-differences tr[data-check="ledger"][data-field="bet"] .wa-delta')
    await expect(bet).to_have_attribute("data-delta", "-2.000000")
    await expect(bet).to_contain_text(f"-2,00{NBSP}€")
    await shot(page, "widearea-reconciliations.png")

    await page.select_option("#wa-venue", str(net.a.pk))
    await page.click("#wa-filter")
    await expect(page.locator(".wa-reconciliation")).to_have_count(1)
    await expect(page.locator(".wa-reconciliation")).to_have_attribute("data-venue", "WA-A")

    # What venue A recorded of the central's answer (its own check of the central's records): the same.
    await page.select_option("#wa-side", "venue")
    await page.click("#wa-filter")
    mine = page.locator(".wa-reconciliation")
    await expect(mine).to_have_count(1)
    await expect(mine).to_have_attribute("data-state", "differs")
    await expect(mine.locator('.wa-differences tr[data-check="ledger"]')).to_have_count(3)
    await shot(page, "widearea-reconciliations-venue.png")


async def test_a_venues_inspector_reads_only_their_venues(page: Page, server_url: str) -> None:
    await call(reconciled_network)
    await log_in(page, server_url, "inspectora-b", "/widearea/reconciliations/")
    items = page.locator(".wa-reconciliation")
    await expect(items).to_have_count(1)
    await expect(items).to_have_attribute("data-venue", "WA-B")
    await shot(page, "widearea-reconciliations-inspector.png")
