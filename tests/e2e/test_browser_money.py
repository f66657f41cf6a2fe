"""Money said one way (issue 26, halls.money.for_person): the inspector's pages and the cashier's shift
report, in a real browser, write each amount as the person's language does ("1.234,50 €" in Spanish,
"€1,234.50" in English), the same figures as the pages' own formatter, never "EUR" beside "€".

Screenshots left in /tmp for a look: money-minutes-es.png, money-game-es.png, money-statistics-es.png,
money-minutes-en.png, money-shift-report-es.png.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import BrowserContext, Page, expect

from halls.cashier.models import Means, Shift, ShiftState
from halls.cashier.services import tickets
from halls.models import Role
from tests.bingo.traditional.inspector_support import play_session
from tests.conftest import make_user
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e


def _language(code: str) -> Any:
    return {"name": settings.LANGUAGE_COOKIE_NAME, "value": code, "domain": "127.0.0.1", "path": "/"}


def _sold_tickets(venue: Any, cashier: Any) -> int:
    """Two tickets sold for cash on the cashier's shift (1,234.50 and 0.75): its report has four digits."""
    for key, amount in (("money-1", "1234.50"), ("money-2", "0.75")):
        tickets.issue_for_payment(
            venue_id=venue.pk, amount=Decimal(amount), means=Means.CASH, key=key, actor=cashier
        )
    return int(Shift.objects.get(cashier=cashier, state=ShiftState.OPEN).pk)


async def test_amounts_are_written_in_the_readers_language(
    page: Page,
    context: BrowserContext,
    server_url: str,
    venue: Any,
    room: Any,
    session: Any,
    card_series: Any,
    ball_set: Any,
    caller: Any,
    cashier: Any,
) -> None:
    played = await call(
        play_session, session=session, room=room, series=card_series, caller=caller, cashier=cashier
    )
    shift_id = await call(_sold_tickets, venue, cashier)
    await call(make_user, "inspectora", venue, Role.INSPECTOR)

    # The inspector, in Spanish: the session's minutes, a game's record, the statistics.
    await context.add_cookies([_language("es")])
    await log_in(page, server_url, "inspectora", "/")
    await page.goto(f"{server_url}/inspector/sessions/{session.pk}/")
    game = page.locator('[data-game="1"]')
    await expect(game).to_contain_text("60,00 €")
    await expect(page.locator("[data-total]")).to_contain_text("60,00 €")
    await expect(page.locator("main")).not_to_contain_text("60.00")
    await page.screenshot(path="/tmp/money-minutes-es.png", full_page=True)

    await page.goto(f"{server_url}/inspector/games/{played.played.pk}/")
    await expect(page.locator("main")).to_contain_text("60,00 €")
    await expect(page.locator("main")).not_to_contain_text("EUR")
    await page.screenshot(path="/tmp/money-game-es.png", full_page=True)

    await page.goto(f"{server_url}/inspector/venues/{venue.pk}/statistics/")
    await expect(page.locator("[data-total]")).to_contain_text("60,00 €")
    await page.screenshot(path="/tmp/money-statistics-es.png", full_page=True)

    # The same minutes in English: the sign before the figure, a point for the cents.
    await context.add_cookies([_language("en")])
    await page.goto(f"{server_url}/inspector/sessions/{session.pk}/")
    await expect(game).to_contain_text("€60.00")
    await expect(game).not_to_contain_text("60,00")
    await page.screenshot(path="/tmp/money-minutes-en.png", full_page=True)

    # The cashier's shift report, in Spanish: grouped thousands, the euro sign, no "EUR".
    await context.clear_cookies()
    await context.add_cookies([_language("es")])
    await log_in(page, server_url, "cashier", f"/cashier/shifts/{shift_id}/report/")
    report = page.locator("body")
    await expect(report).to_contain_text("1.235,25 €")  # the two tickets sold
    await expect(report).to_contain_text(
        "1.295,25 €"
    )  # the cash expected: the tickets and the 60,00 € of cards
    await expect(report).not_to_contain_text("EUR")
    await page.screenshot(path="/tmp/money-shift-report-es.png", full_page=True)
