"""The inspector's minutes and statistics of a hall's interconnected game, in a real browser, in Spanish
(issue 26): the venue's records (bingo.venuewide.records) read the network wing only through its read model,
and what they show is what the network decided: the interconnected prize the hall's cards won is a row of
the game's prizes (confirmed by no one here) and counts in what the game paid, and the statistics count the
game as interconnected bingo.

Screenshots left for a look: /tmp/circles-inspector-network-minutes.png, -statistics.png.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.conf import settings
from playwright.async_api import BrowserContext, Page, expect

from bingo.network.interconnected.services import prizes as network_prizes
from bingo.network.interconnected.services import readmodels as network
from bingo.traditional.models import PrizeResult
from halls.models import Role
from tests.bingo.network.interconnected import ib_support as ib
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e


def euros(amount: Decimal) -> str:
    """An amount as the Spanish pages write it ("59,00 €"; the amounts here are under a thousand)."""
    return f"{amount:.2f}".replace(".", ",") + " €"


def played_round() -> tuple[ib.Hall, Decimal, Decimal]:
    """Two halls play one round; the first bingos at ball 15 and wins the network prize. That hall, the
    network prize its cards won and its own Bingo."""
    halls = [ib.make_hall(n) for n in (1, 2)]
    prize = ib.make_prize(ib.make_network(halls), halls)
    network_prizes.open_round(prize=prize, actor="central-operator")
    ib.follow()
    games = [ib.on_sale(hall) for hall in halls]
    for hall in halls:
        ib.deliver(hall)
    ib.bingo_at(halls[0], games[0], serial=7, fillers=0)
    ib.bingo_at(halls[1], games[1], serial=7, fillers=5)
    for hall in halls:
        ib.deliver(hall)
    ib.follow()
    (won,) = network.round_prizes_won([games[0].pk])
    own = PrizeResult.objects.get(game=games[0], kind="bingo").amount
    make_user("inspectora", halls[0].venue, Role.INSPECTOR)
    return halls[0], won.amount, own


async def test_the_minutes_and_statistics_show_the_interconnected_prize_the_hall_won(
    page: Page, context: BrowserContext, server_url: str
) -> None:
    hall, network_prize, own_bingo = await call(played_round)
    assert network_prize > 0 and own_bingo > 0
    spanish = {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "domain": "127.0.0.1", "path": "/"}
    await context.add_cookies([spanish])  # type: ignore[list-item]
    await log_in(page, server_url, "inspectora", f"/inspector/sessions/{hall.session.pk}/")

    await expect(page.locator("h1")).to_have_text("Acta de la sesión")
    prizes = page.locator('[data-section="prizes"] tbody tr')
    await expect(prizes).to_have_count(2)  # the hall's own Bingo, then the network's prize
    await expect(prizes.nth(0)).to_contain_text(euros(own_bingo))
    interconnected = prizes.nth(1)
    await expect(interconnected).to_contain_text("Premio interconexionado")
    await expect(interconnected).to_contain_text(euros(network_prize))
    await expect(interconnected.locator("td").nth(6)).to_have_text("—")  # confirmed by no one here
    await expect(page.locator('[data-game="1"] td').last).to_have_text(euros(own_bingo + network_prize))
    await page.screenshot(path="/tmp/circles-inspector-network-minutes.png", full_page=True)

    await page.goto(f"{server_url}/inspector/venues/{hall.venue.pk}/statistics/?period=day")
    row = page.locator('[data-row="Sala 1|interconnected"]')
    await expect(row).to_contain_text("Bingo interconexionado")
    await expect(row.locator("td").nth(7)).to_have_text(euros(own_bingo + network_prize))
    await expect(page.locator("[data-row]")).to_have_count(1)
    await page.screenshot(path="/tmp/circles-inspector-network-statistics.png", full_page=True)
