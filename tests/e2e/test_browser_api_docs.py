"""The API docs work offline: /api/docs/ in Chromium with every request to another host refused renders
Swagger UI with the API's operations (its files come from drf-spectacular-sidecar, served by the app)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from playwright.async_api import Page, Route

SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


async def test_swagger_ui_renders_with_no_network_but_the_hall(page: Page, server_url: str) -> None:
    hall = urlsplit(server_url).netloc
    refused: list[str] = []

    async def only_the_hall(route: Route) -> None:
        if urlsplit(route.request.url).netloc == hall:
            await route.continue_()
        else:  # a CDN, fonts, anything outside: the hall may have no internet
            refused.append(route.request.url)
            await route.abort()

    await page.route("**/*", only_the_hall)
    # Swagger UI draws the tags it has room for: a tall window shows enough operations to count.
    await page.set_viewport_size({"width": 1280, "height": 4000})
    await page.goto(f"{server_url}/api/docs/")
    operations = page.locator(".opblock")
    await operations.first.wait_for(timeout=15_000)
    assert await operations.count() > 20
    assert await page.locator(".info .title").inner_text() != ""
    assert "Bingo hall API" in await page.locator(".info .title").inner_text()
    assert refused == []  # nothing was even asked of another host
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / "api-docs-offline.png"))
