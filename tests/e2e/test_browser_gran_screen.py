"""An electronic room's hall screen in a member hall of a network's Gran Línea (AB-05), in a real browser:
the block is labelled "Gran Línea" with no max ball (the first Line in the whole network wins), its meter
there from the snapshot at once (a screen that reconnects does not wait for the next meter entry), and a
new meter from the central arrives live on the room's stream.

The block sits in the footer bar, clear of the figures and prizes panels, the board, the ball and the
footer's tag, at 1920×1080, 1280×720 and 1280×800.

Screenshots (in /work/notes/shots when that folder exists, else /tmp): gran_screen.png (1920×1080) and
gran_screen-<w>x<h>.png.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone
from playwright.async_api import expect

from bingo.network.interconnected.models import NetworkPrize
from bingo.network.interconnected.services import prizes
from bingo.network.interconnected.services.locks import lock_prize
from halls.models import Screen
from jackpots.services import contributions
from jackpots.sources import PoolSource
from tests.bingo.network.interconnected.gran_support import follow, make_ehall, make_gran, make_network
from tests.e2e.browser_support import call, open_screen
from tests.e2e.test_browser_network_screen import VIEWPORTS, assert_clear

pytestmark = pytest.mark.e2e

SHOTS = Path("/work/notes/shots")


def _set_up() -> tuple[NetworkPrize, Screen]:
    halls = [make_ehall(n) for n in (1, 2)]
    prize = make_gran(make_network(halls), halls)
    follow()  # the round's opening and its meter (100.01) heard by the halls
    screen = Screen.objects.create(venue=halls[0].venue, room=halls[0].speciality.room, name="Pantalla E")
    return prize, screen


def _meter_moves(prize: NetworkPrize) -> None:
    """A hall's sales reach the pool (20.00 at 10 %: 2.00 to the meter); the central sends the meter."""
    with transaction.atomic():
        contributions.contribute(
            pool=prize.pool_id,
            source=PoolSource.of("venue", prize.halls.first().venue_id).at("game", 99),  # type: ignore[union-attr]
            bet=Decimal("20.00"),
            idempotency_key="gran-screen-1",
            actor="test",
        )
    with transaction.atomic():
        prizes.send_meter(lock_prize(prize.pk), at=timezone.now(), force=True)
    follow()


async def test_the_screen_shows_the_gran_linea_by_its_kind_from_the_snapshot_and_live(page, server_url):
    prize, screen = await call(_set_up)
    await open_screen(page, server_url, screen.token)
    item = page.locator('#ib-prize .ib-prize__item[data-prize="GL1"]')
    await expect(item).to_have_attribute("data-kind", "gran_linea")
    await expect(item.locator(".ib-prize__tag")).to_have_text("Gran Línea")
    await expect(item.locator(".ib-prize__amount")).to_contain_text("100,01")
    await expect(item.locator(".ib-prize__ball")).to_have_text("La primera línea de toda la red")
    await expect(page.locator("#ib-prize")).not_to_contain_text("interconexionado")

    await call(_meter_moves, prize)
    await expect(item.locator(".ib-prize__amount")).to_contain_text("102,01")
    shots = SHOTS if SHOTS.is_dir() else Path("/tmp")
    await page.screenshot(path=str(shots / "gran_screen.png"))
    kept_clear = [".egame-figures", ".egame-prizes", "#es-board", ".egame-draw", "#es-foot-tag"]
    for width, height in VIEWPORTS:
        await page.set_viewport_size({"width": width, "height": height})
        await page.wait_for_timeout(100)  # the stage rescales on resize (halls/screen.js)
        await page.screenshot(path=str(shots / f"gran_screen-{width}x{height}.png"))
        await assert_clear(page, page.locator("#ib-prize"), kept_clear)
