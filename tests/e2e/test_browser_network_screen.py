"""A traditional member room's hall screen with the network's interconnected prize meters, in a real
browser: the meter block ("Premio interconexionado", amount, max ball) has its own place on the screen —
it never covers the side panel (cards sold, Line, Bingo), the board, the current ball or the footer's
announcement — at 1920×1080, 1280×720 and 1280×800, with one meter and with two, and over the venue's
pool meter ribbon.

Screenshots (in /work/notes/shots when that folder exists, else /tmp):
network-screen-<n>[-ribbon]-<w>x<h>.png.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
from playwright.async_api import FloatRect, Locator, Page, expect

from bingo.network.interconnected.services import prizes, venue
from halls.models import Screen
from tests.bingo.network.interconnected.ib_support import follow, make_hall, make_network, make_prize
from tests.e2e.browser_support import call, open_screen
from tests.e2e.test_browser_meters import make_pools

pytestmark = pytest.mark.e2e

SHOTS = Path("/work/notes/shots")
VIEWPORTS = [(1920, 1080), (1280, 720), (1280, 800)]
# What the meter block must leave in sight on a traditional room's screen.
KEPT_CLEAR = [".stat--cards", "#line-stat", "#bingo-stat", "#board", ".bingo-draw", "#foot-tag", "#foot-text"]


def _set_up(meters: int, pools: bool) -> Screen:
    halls = [make_hall(n) for n in (1, 2)]
    if pools:  # the venue's table pools: the meter ribbon along the bottom, the footer band above it
        make_pools(halls[0].venue, halls[0].operator)
    network = make_network(halls)
    first = make_prize(network, halls, seed="103.12", max_ball=45)
    prizes.open_round(prize=first, actor="central-operator")
    if meters == 2:
        second = prizes.create_prize(
            network=network,
            code="IB2",
            name="Interconexionado Melilla 2",
            percent=Decimal("5"),
            max_ball=50,
            seed=Decimal("2500.00"),
            wait_seconds=900,
            authorisation_ref="ML-IB-2026/2",
            halls=[h.venue for h in halls],
            actor="central-operator",
        )
        venue.join_room(room=halls[0].room, network=network, prize_code="IB2", actor=halls[0].operator)
        prizes.open_round(prize=second, actor="central-operator")
    follow()
    return Screen.objects.create(venue=halls[0].venue, room=halls[0].room, name="Pantalla")


async def _box(locator: Locator) -> FloatRect:
    box = await locator.bounding_box()
    assert box is not None, locator
    return box


def _overlap(a: FloatRect, b: FloatRect) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


async def assert_clear(page: Page, meter: Locator, selectors: list[str]) -> None:
    box = await _box(meter)
    viewport = page.viewport_size
    assert viewport is not None
    assert box["x"] >= 0 and box["y"] >= 0, box
    assert box["x"] + box["width"] <= viewport["width"], box
    assert box["y"] + box["height"] <= viewport["height"], box
    for selector in selectors:
        other = await _box(page.locator(selector).first)
        assert not _overlap(box, other), (viewport, selector, box, other)


@pytest.mark.parametrize(("meters", "pools"), [(1, False), (2, False), (2, True)])
async def test_the_interconnected_meter_has_its_own_place_on_a_traditional_rooms_screen(
    page: Page, server_url: str, meters: int, pools: bool
) -> None:
    screen = await call(_set_up, meters, pools)
    await open_screen(page, server_url, screen.token)
    kept_clear = KEPT_CLEAR
    if pools:
        await expect(page.locator(".screen-body")).to_have_class(re.compile(r"\bhas-ribbon\b"))
        kept_clear = [*KEPT_CLEAR, ".jp-ribbon"]
    meter = page.locator("#ib-prize")
    await expect(meter.locator(".ib-prize__item")).to_have_count(meters)
    first = meter.locator('.ib-prize__item[data-prize="IB1"]')
    await expect(first.locator(".ib-prize__tag")).to_have_text("Premio interconexionado")
    await expect(first.locator(".ib-prize__amount")).to_contain_text("103,12")
    await expect(first.locator(".ib-prize__ball")).to_have_text("Bingo hasta la bola 45")
    # The longest announcement the footer shows: its text keeps to the left of the block.
    await page.locator("#foot-text").evaluate(
        "node => { node.textContent = 'La partida 12 empieza en breve: cartones a la venta en las cajas, "
        "serie A de 2,00 € y serie B de 3,00 €'; }"
    )
    shots = SHOTS if SHOTS.is_dir() else Path("/tmp")
    for width, height in VIEWPORTS:
        await page.set_viewport_size({"width": width, "height": height})
        await page.wait_for_timeout(100)  # the stage rescales on resize (halls/screen.js)
        ribbon = "-ribbon" if pools else ""
        await page.screenshot(path=str(shots / f"network-screen-{meters}{ribbon}-{width}x{height}.png"))
        await assert_clear(page, meter, kept_clear)
        # Each prize's figures are whole inside the block, side by side.
        block = await _box(meter)
        items = [await _box(item) for item in await meter.locator(".ib-prize__item").all()]
        right, bottom = block["x"] + block["width"] + 0.5, block["y"] + block["height"] + 0.5
        for item in items:
            assert block["x"] <= item["x"] and item["x"] + item["width"] <= right, (width, height)
            assert block["y"] <= item["y"] and item["y"] + item["height"] <= bottom, (width, height)
        assert not any(_overlap(a, b) for i, a in enumerate(items) for b in items[i + 1 :])
        overflowing = await meter.locator(".ib-prize__item").evaluate_all(
            "items => items.filter(n => n.scrollWidth > n.clientWidth).length"
        )
        assert overflowing == 0, (width, height)
