"""The central's network pages in a real browser, in Spanish: the pools page with the interconnected
prize's meter live (a hall's contribution arriving while the page is open moves it), its decision and the
simultaneous game's prizes; the report per region reconciling with the pools, and its CSV link.

Screenshots left in /tmp for a look: central-pools-es.png, central-report-es.png.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import BrowserContext, Page, expect

from halls.models import Role
from tests.bingo.network.interconnected.central_pages_support import Scene, build_scene
from tests.bingo.network.interconnected.ib_support import deliver, on_sale
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e


def _contribute(scene: Scene) -> None:
    """Hall 2's next game joins the round in progress: 10 cards × 2.00, 2.00 to the pool."""
    on_sale(scene.halls[1], first=31, cards=10)
    deliver(scene.halls[1])


async def test_the_pools_page_and_the_report_in_spanish(
    page: Page, context: BrowserContext, server_url: str, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.HALL_ROLE = "central"
    scene: Scene = await call(build_scene, monkeypatch)
    boss = await call(make_user, "jefe-central", scene.halls[0].venue, Role.OPERATOR)
    spanish = {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "domain": "127.0.0.1", "path": "/"}
    await context.add_cookies([spanish])  # type: ignore[list-item]

    await log_in(page, server_url, boss.username, "/central/pools/")
    await expect(page.locator("h1")).to_have_text("Premios de la red y sus marcadores")
    meter = page.locator('[data-meter="IB1"]')
    await expect(meter).to_have_attribute("data-amount", "102.01")
    await expect(meter).to_contain_text("102,01")
    await expect(page.locator('[data-decision="1"]')).to_contain_text("Bingo 2")
    await expect(page.locator('[data-open-round="2"]')).to_contain_text("1 / 3")
    await expect(page.locator('[data-game="SB-1"]')).to_contain_text("5,85")
    await call(_contribute, scene)  # the page is not reloaded: its poll brings the new meter
    await expect(meter).to_have_attribute("data-amount", "104.01", timeout=10_000)
    await expect(meter).to_contain_text("104,01")
    await page.screenshot(path="/tmp/central-pools-es.png", full_page=True)

    await page.goto(f"{server_url}/central/reports/?by=region")
    await expect(page.locator("h1")).to_have_text("Informe de la red")
    await expect(page.locator("#reconciled")).to_have_text("Cuadra con los botes")
    # Exact contributions shown as money, the places beyond the cent only where there are some.
    await expect(page.locator('[data-row="ML"]')).to_contain_text("16,00\u00a0€")  # halls 1 and 2: 8 + 8
    await expect(page.locator('[data-row="CE"]')).to_contain_text("6,00\u00a0€")
    await expect(page.locator('[data-check="IB1"]')).to_have_attribute("data-holds", "yes")
    href = await page.locator("#report-csv").get_attribute("href")
    assert href is not None and href.startswith("/central/reports.csv?") and "by=region" in href
    await page.screenshot(path="/tmp/central-report-es.png", full_page=True)
