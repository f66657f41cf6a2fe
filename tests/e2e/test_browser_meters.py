"""Pool meters on the hall screen and on the table-side meter page, in a real browser.

A bingo game is in play in the room while the venue's carousel takes pool bets: the meter ribbon grows
along the bottom of the screen without the bingo screen reloading its snapshot, and a straight flush at
a table is announced over the board (table, seat, hand, amount paid, new amount) while the current ball
stays in sight. The publisher runs as beat would, every 0.25 s, in a thread of the test.

Screenshots at 1920×1080 are left in /tmp: screen-meters.png (the ribbon under a game in play),
screen-meters-hit.png (a hit announced), meter-page.png and meter-page-hit.png (the table-side page).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from playwright.async_api import Page, expect

from bingo.traditional.models import BallSet, CardSeries, Game
from bingo.traditional.services import draw
from halls.models import Screen, Venue
from halls.money import cents_down
from jackpots import engine
from jackpots.models import Pool
from jackpots.poker import rank_hand
from jackpots.services import awards, contributions, pools, screen_events
from jackpots.services.pools import LevelSpec
from jackpots.sources import PoolSource
from tests.e2e.browser_support import call, open_screen, snapshot_counter, start_game

pytestmark = pytest.mark.e2e

D = Decimal


@pytest.fixture
def publisher(server_url: str) -> Iterator[None]:
    """The beat entry's work, in a thread: publish_meters every 0.25 s while the test runs."""
    screen_events.reset_poll_state()
    stop = threading.Event()

    def run() -> None:
        try:
            while not stop.wait(0.25):
                screen_events.publish_meters()
        finally:
            connection.close()

    thread = threading.Thread(target=run, name="meter-beat", daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(5)


def make_pools(venue: Venue, actor: Any) -> tuple[Pool, Pool]:
    carousel = pools.create_pool(
        name="Carrusel Póker",
        code="ML-CARR-1",
        jurisdiction=venue.jurisdiction,
        authorisation_ref="AUT-ML-2026/07",
        rule_pack="ML_PSD_CARRUSEL",
        venue=venue,
        levels=[LevelSpec(name="Carrusel", seed=D("10000.00"), contribution_rate=D("0.80"))],
        carousel_bet=D("1.00"),
        actor=actor,
    )
    bolsa = pools.create_pool(
        name="Bolsa Blackjack",
        code="ML-BJ-1",
        jurisdiction=venue.jurisdiction,
        authorisation_ref="AUT-ML-2026/08",
        rule_pack="",
        venue=venue,
        levels=[LevelSpec(name="Bolsa", seed=D("3475.20"), contribution_rate=D("0.50"))],
        carousel_bet=None,
        actor=actor,
    )
    for number in (1, 2):
        pools.add_member(pool=carousel, source_type="table", source_id=str(number), venue=venue, actor=actor)
    pools.add_member(pool=bolsa, source_type="table", source_id="5", venue=venue, actor=actor)
    return carousel, bolsa


def pool_bets(pool: Pool, count: int, bet: Decimal, prefix: str, table: int = 1) -> None:
    for n in range(count):
        contributions.contribute(
            pool=pool,
            source=PoolSource.of("table", table).at("hand", 40 + n // 6).at("seat", n % 6 + 1),
            bet=bet,
            idempotency_key=f"{prefix}-{n}",
            actor="mesa-1",
        )


def straight_flush(pool: Pool, actor: Any, hand: int, seat: str = "4") -> awards.AwardResult:
    return awards.award_hand(
        pool=pool,
        winners=[engine.Winner(seat, rank_hand("9H 8H 7H 6H 5H"), False)],
        idempotency_key=f"hand-{hand}",
        actor=actor,
        context={"table": 1, "table_name": "Mesa 1", "table_number": 1, "hand": hand, "source": "table:1"},
    )


def money(amount: Decimal) -> re.Pattern[str]:
    """The figure as es-ES shows it: 12.345,67 (the thousands dot may be missing below 10,000)."""
    whole, cents = f"{amount:.2f}".split(".")
    grouped = f"{int(whole):,}".replace(",", r"\.?")
    return re.compile(rf"{grouped},{cents}")


async def test_hall_screen_meters_grow_live_and_a_hit_is_announced(
    page: Page,
    server_url: str,
    publisher: None,
    screen: Screen,
    venue: Venue,
    operator: Any,
    manual_game: Game,
    card_series: CardSeries,
    ball_set: BallSet,
    caller: Any,
    cashier: Any,
) -> None:
    carousel, bolsa = await call(make_pools, venue, operator)
    await call(pool_bets, carousel, 200, D("10.00"), "x", 2)  # the night so far: 200 × 8.00 € to the meter
    game = await call(start_game, manual_game, card_series, caller, cashier, 60)
    for number in (3, 88, 45, 12, 71, 26, 59, 34, 11, 29, 32):
        await call(draw.enter_ball, game=game, number=number, actor=caller)
    snapshots = snapshot_counter(page)
    await open_screen(page, server_url, screen.token)

    ribbon = page.locator("#jp-ribbon")
    await expect(ribbon).to_be_visible()
    await expect(page.locator(".screen-body")).to_have_class(re.compile(r"\bhas-ribbon\b"))
    meter = page.locator(f"#jp-level-{(await call(lambda: carousel.levels.get().pk))} .jp-meter__amount")
    await expect(meter).to_have_attribute("data-amount", "11600.00")
    await expect(meter).to_have_text(money(D("11600.00")))
    await expect(page.locator("#jp-meters .jp-meter__label")).to_have_text(
        ["Carrusel Póker", "Bolsa Blackjack"]
    )

    # Pool bets at the tables: the meter follows them, a quarter of a second at a time, to the cent.
    await call(pool_bets, carousel, 120, D("2.50"), "a")  # 120 × 2.00 € to the meter
    await expect(meter).to_have_attribute("data-amount", "11840.00")
    await expect(meter).to_have_text(money(D("11840.00")))
    await call(pool_bets, bolsa, 7, D("0.33"), "b", 5)  # 7 × 0.165 € = 1.155 €: shown 3476.35, not .36
    bolsa_meter = page.locator(f"#jp-level-{(await call(lambda: bolsa.levels.get().pk))} .jp-meter__amount")
    await expect(bolsa_meter).to_have_attribute("data-amount", "3476.35")

    # The bingo game goes on under the ribbon: balls arrive, and no pool event made it reload its snapshot.
    await call(draw.enter_ball, game=game, number=66, actor=caller)
    await expect(page.locator("#current-ball")).to_have_attribute("data-ball", "66")
    await expect(page.locator("#ball-ordinal")).to_have_text("Bola 12 de 90")
    assert len(snapshots) == 1, snapshots
    await page.wait_for_timeout(900)
    await page.screenshot(path="/tmp/screen-meters.png")

    # A straight flush at table 1 wins 10 % of the meter; the hit is announced over the board.
    result = await call(straight_flush, carousel, operator, 41)
    paid = result.lines[0].amount
    left = cents_down(result.meter_after)
    assert paid == D("1184.00") and left == D("10656.00")
    hit = page.locator("#jp-hit")
    await expect(hit).to_be_visible()
    await expect(page.locator("#jp-hit-title")).to_have_text("¡Carrusel!")
    await expect(page.locator("#jp-hit-pool")).to_have_text("Carrusel Póker")
    await expect(page.locator("#jp-hit-amount")).to_have_text(money(paid))
    await expect(page.locator("#jp-hit-hand")).to_have_text("Escalera de color")
    await expect(page.locator("#jp-hit-where")).to_have_text("Mesa 1 · Asiento 4 · Mano 41")
    await expect(page.locator("#jp-hit-next")).to_have_text(re.compile(r"Nuevo bote: " + money(left).pattern))
    await expect(meter).to_have_attribute("data-amount", str(left))
    await expect(meter).to_have_text(money(left))
    await expect(page.locator("#current-ball")).to_be_visible()  # the ball column stays in sight
    await page.wait_for_timeout(1000)
    await page.screenshot(path="/tmp/screen-meters-hit.png")

    # The meter never goes back to its figure from before the hit, whatever the publisher sends next.
    await page.wait_for_timeout(600)
    assert await meter.get_attribute("data-amount") == str(left)
    assert len(snapshots) == 1, snapshots


async def test_table_side_meter_page(
    page: Page, server_url: str, publisher: None, screen: Screen, venue: Venue, operator: Any
) -> None:
    carousel, _ = await call(make_pools, venue, operator)
    await call(pool_bets, carousel, 57, D("1.00"), "c")  # 57 × 0.80 €
    await page.goto(f"{server_url}/screens/{screen.token}/pools/{carousel.pk}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    level = page.locator("#pm-levels .pm-level__amount")
    await expect(level).to_have_attribute("data-amount", "10045.60")
    await expect(level).to_have_text(money(D("10045.60")))
    await expect(page.locator("#pm-name")).to_have_text("Carrusel Póker")
    await expect(page.locator("#pm-levels .pm-level__name")).to_have_text("Carrusel")

    await call(pool_bets, carousel, 10, D("1.00"), "d")
    await expect(level).to_have_attribute("data-amount", "10053.60")
    await page.wait_for_timeout(600)
    await page.screenshot(path="/tmp/meter-page.png")

    result = await call(straight_flush, carousel, operator, 77, seat="2")
    paid = result.lines[0].amount
    left = cents_down(result.meter_after)
    await expect(page.locator("#pm-hit")).to_be_visible()
    await expect(page.locator("#pm-hit-amount")).to_have_text(money(paid))
    await expect(page.locator("#pm-hit-where")).to_have_text(
        "Escalera de color · Mesa 1 · Asiento 2 · Mano 77"
    )
    assert left == D("10000.00")  # 10 % of 10,053.60 leaves less than the seed: reset to it
    await expect(page.locator("#pm-hit-next")).to_contain_text(money(left))
    await expect(level).to_have_attribute("data-amount", str(left))
    await expect(page.locator("#pm-last")).to_contain_text("Último premio")
    await page.wait_for_timeout(1000)
    await page.screenshot(path="/tmp/meter-page-hit.png")

    # A reload shows the same: the meter and, under it, the last hit.
    await page.reload()
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await expect(level).to_have_attribute("data-amount", str(left))
    await expect(page.locator("#pm-last")).to_contain_text(money(paid))
    await expect(page.locator("#pm-last")).to_contain_text("Mesa 1 · Asiento 2 · Mano 77")
