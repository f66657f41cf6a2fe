"""The authority's portal on the regulator's node in a real browser, in Spanish: the map with each
installation's link, a live game's balls and prize arriving while the page is open (no reload), a pool's
history (its table and chart), an alarm raised and cleared, the chain heads verified, the refused messages
and the tax returns.

Screenshots of each page are left in $HALL_SHOTS (when set) for a look, as the tax page's test does.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.async_api import Page, expect

from halls.regulator.models import FeedRefusal, Installation
from tests.e2e.browser_support import call, log_in
from tests.portal.support import Sender, accept, anchor_line, anchor_payload, authority_user, register

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
VENUE = "ML-B-0001"
GAME = {"venue": VENUE, "room": "Sala 1", "game": "electronic-40"}


def build() -> tuple[Sender, Sender]:
    authority_user("inspectora")
    melilla = register("Bingo Melilla Centro", uid="a1" * 8, licence=VENUE)
    ceuta = register(
        "Bingo Ceuta", uid="b2" * 8, licence="CE-B-0001", latitude="35.8894", longitude="-5.3213"
    )
    register("Bingo Las Palmas", uid="d4" * 8, licence="CN-B-0001", latitude="28.1235", longitude="-15.4363")
    register("Central Melilla", uid="c3" * 8, kind="central", latitude=None, longitude=None)
    accept(ceuta, "heartbeat", {"last_sequence": 0})
    Installation.objects.filter(pk=ceuta.installation.pk).update(
        last_message_at=timezone.now() - timedelta(minutes=15)
    )
    accept(
        melilla, "game.committed", {**GAME, "commitment": "ab" * 32, "committed_at": "2026-12-06T20:00:00Z"}
    )
    accept(melilla, "game.sales", {**GAME, "cards": 120, "sales": "240.00", "sales_digest": None,
                                   "closed_at": "2026-12-06T20:01:00Z"})  # fmt: skip
    accept(melilla, "game.ball", {**GAME, "ordinal": 1, "number": 17})
    accept(melilla, "game.ball", {**GAME, "ordinal": 2, "number": 5})
    start = timezone.now() - timedelta(hours=2)
    for n, amount in enumerate(("1000.00", "1180.50", "1320.75", "400.00", "560.20")):
        pools = [{"pool": "BOLSA", "name": "Bolsa acumulada", "family": "bingo",
                  "levels": [{"level": 1, "amount": amount}]}]  # fmt: skip
        accept(
            melilla, "pool.amounts", {"venue": VENUE, "pools": pools}, at=start + timedelta(minutes=20 * n)
        )
    accept(melilla, "anchor", anchor_payload(melilla, [anchor_line(melilla, seq=40)]))
    accept(melilla, "tax.return", {
        "venue": VENUE, "jurisdiction": "ML", "period": "2026-11",
        "bases": [{"game_type": "traditional", "base": "12000.00"},
                  {"game_type": "electronic", "base": "3150.40"}],
        "rate_table": "BOME 2014, art. 5", "due": "1755.07", "digest": "cd" * 32,
    })  # fmt: skip
    FeedRefusal.objects.create(
        installation=ceuta.installation, sequence=7, kind="game.ball", reason="bad_signature",
        detail="the signature does not hold", received_at=timezone.now(),
    )  # fmt: skip
    return melilla, ceuta


async def shot(page: Page, name: str) -> None:
    folder = os.environ.get("HALL_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(Path(folder) / f"authority-{name}.png"), full_page=True)


async def test_the_portal_in_spanish_live(page: Page, server_url: str, settings: Any) -> None:
    settings.HALL_ROLE = "regulator"
    melilla, ceuta = await call(build)

    await log_in(page, server_url, "inspectora", "/authority/")
    await expect(page.locator("h1")).to_have_text("Instalaciones de la región")
    await expect(page.locator(f'g.rg-pin[data-installation="{melilla.uid}"]')).to_have_attribute(
        "data-state", "live"
    )
    await expect(page.locator(f'g.rg-pin[data-installation="{ceuta.uid}"]')).to_have_attribute(
        "data-state", "silent"
    )
    await expect(page.locator(f'tr[data-installation="{"c3" * 8}"]')).to_contain_text("Nunca oída")
    await expect(page.locator(f'tr[data-installation="{ceuta.uid}"]')).to_contain_text("Silenciosa")
    await expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    await shot(page, "map")

    # A live game: the page is open when its next balls and its prize are accepted; they appear without a
    # reload (the marker set on the page survives).
    await page.goto(f"{server_url}/authority/live/")
    await expect(page.locator("h1")).to_have_text("Sesiones y partidas en directo")
    game = page.locator('article[data-game="electronic-40"]')
    await expect(game).to_have_attribute("data-balls", "2")
    await expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    await page.evaluate("window.stillTheSamePage = true")
    await call(accept, melilla, "game.ball", {**GAME, "ordinal": 3, "number": 88})
    await expect(game.locator('[data-ball="88"]')).to_be_visible()
    await expect(game).to_have_attribute("data-balls", "3")
    await call(accept, melilla, "game.prize", {
        **GAME, "prize": "L", "name": "Línea", "amount": "24.00", "ordinal": 3, "cards": ["000123"],
        "pool": None, "where": VENUE,
    })  # fmt: skip
    await expect(game.locator('tr[data-prize="L"]')).to_contain_text("24,00\u00a0€")
    await expect(game).to_contain_text("En juego")
    assert await page.evaluate("window.stillTheSamePage === true")
    await shot(page, "live")

    # A pool's history: the table and the chart.
    await page.goto(f"{server_url}/authority/pools/")
    await expect(page.locator('tr[data-pool="BOLSA"] td[data-amount]')).to_contain_text("560,20\u00a0€")
    await shot(page, "pools")
    await page.locator('tr[data-pool="BOLSA"] a').click()
    await expect(page.locator("h1")).to_have_text("Bolsa acumulada")
    await expect(page.locator("#pool-history tbody tr")).to_have_count(5)
    await expect(page.locator("#pool-chart polyline")).to_have_count(1)
    await expect(page.locator("#pool-history")).to_contain_text("1.320,75\u00a0€")
    await shot(page, "pool")

    # An alarm: balls of a game never committed, while the alarms page is open; then cleared.
    await page.goto(f"{server_url}/authority/alarms/")
    await expect(page.locator("#alarms-open")).to_have_count(0)
    await call(accept, melilla, "game.ball", {**GAME, "game": "electronic-41", "ordinal": 1, "number": 9})
    alarm = page.locator('#alarms-open tr[data-kind="no_commitment"]')
    await expect(alarm).to_contain_text("Partida sin su compromiso")
    await expect(alarm).to_contain_text("electronic-41")
    await expect(page.locator("#nav-alarms .rg-count")).to_have_text("1")
    await shot(page, "alarms")
    await alarm.locator("button").click()
    await expect(page.locator('#alarms-cleared tr[data-kind="no_commitment"]')).to_contain_text("inspectora")
    await expect(page.locator("#nav-alarms .rg-count")).to_have_count(0)
    await shot(page, "alarms-cleared")

    # The chain heads, verified now.
    await page.goto(f"{server_url}/authority/anchors/")
    await expect(page.locator(f'#heads tr[data-installation="{melilla.uid}"]')).to_contain_text("venue-1")
    await page.locator("#verify-all").click()
    await expect(page.locator(f'#verdicts tr[data-installation="{melilla.uid}"]')).to_contain_text(
        "Verificado"
    )
    await shot(page, "anchors")

    await page.goto(f"{server_url}/authority/refused/")
    await expect(page.locator('#refusals tr[data-reason="bad_signature"]')).to_contain_text("Bingo Ceuta")
    await shot(page, "refused")
    await page.goto(f"{server_url}/authority/taxes/")
    await expect(page.locator('#tax-returns tr[data-period="2026-11"]')).to_contain_text("1.755,07\u00a0€")
    await shot(page, "taxes")
