"""The caller console's opening checks in a real browser, in Spanish (R-07, spec §2.7 S1–S2): each material
check is recorded when it is ticked, by whoever ticks it, and shown done with who and when; one recorded
by another person before the console opened shows done on load; the opening with a check not yet
recorded is refused naming it, nothing written; ticked, the session opens and its minutes name each
check's own checker.

Screenshots left in /tmp for a look (1280x800): console-checks-es.png (two checks done, one to tick),
console-checks-refused-es.png (the opening refused naming the check not recorded).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.async_api import Page, expect

from bingo.services import records
from halls.models import GameSession, Role, Room, SessionCheck
from halls.services import sessions
from tests.conftest import ALL_BALLS, make_user
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"


def _checks_of_the_next_session(room: Room) -> list[tuple[str, bool, str]]:
    return [
        (c.check_name, c.ok, c.checked_by.username)
        for c in SessionCheck.objects.filter(room=room, session__isnull=True).select_related("checked_by")
    ]


def _minutes_checks(room: Room) -> list[tuple[str, str]]:
    session = GameSession.objects.get(room=room)
    return [(c["check"], c["by"]) for c in records.session_minutes(session)["checks"]]


async def test_each_check_is_recorded_when_ticked_and_the_opening_takes_them(
    page: Page, server_url: str, room: Room, caller: Any, venue: Any
) -> None:
    tech = await call(make_user, "tecnico", venue, Role.CALLER)
    await call(sessions.record_check, room=room, check_name="reserve", ok=True, actor=tech)
    await page.set_viewport_size({"width": 1280, "height": 800})
    await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(page.locator("#session-badge")).to_have_text("Ninguna sesión abierta")

    # Recorded before the console opened: done, with who (and when).
    reserve = page.locator('.check-row[data-check="reserve"]')
    await expect(reserve).to_have_attribute("data-done", "true")
    await expect(page.locator("#check-reserve-done")).to_contain_text("Comprobado por tecnico a las")
    await expect(page.locator("#check-reserve")).to_be_checked()
    await expect(page.locator("#check-reserve")).to_be_disabled()
    await expect(page.locator("#check-blower-done")).to_have_text("Sin comprobar todavía")

    # Ticked: recorded at once by the one who ticked it.
    await page.check("#check-blower")
    await expect(page.locator('.check-row[data-check="blower"]')).to_have_attribute("data-done", "true")
    await expect(page.locator("#check-blower-done")).to_contain_text("Comprobado por caller a las")
    await expect(page.locator("#check-blower")).to_be_disabled()
    assert await call(_checks_of_the_next_session, room) == [
        ("reserve", True, "tecnico"),
        ("blower", True, "caller"),
    ]

    # The inspection draw complete, the reader not ticked: refused naming it, nothing written.
    await page.fill("#inspect-paste", " ".join(str(n) for n in ALL_BALLS))
    await page.click("#inspect-paste-add")
    await expect(page.locator("#inspect-summary")).to_contain_text("Las 90 bolas")
    await page.screenshot(path="/tmp/console-checks-es.png")
    await page.click("#session-open-btn")
    await expect(page.locator("#session-msg")).to_contain_text("lector de bolas")
    await expect(page.locator("#session-msg")).not_to_contain_text("bombo")
    await page.locator("#session-msg").scroll_into_view_if_needed()
    await page.screenshot(path="/tmp/console-checks-refused-es.png")
    assert not await call(GameSession.objects.exists)

    # The reader ticked: the session opens with the checks as recorded, each by its own checker.
    await page.check("#check-reader")
    await expect(page.locator("#check-reader-done")).to_contain_text("Comprobado por caller")
    await page.click("#session-open-btn")
    await expect(page.locator("#session-badge")).to_have_text(re.compile(r"^Sesión \d+ abierta$"))
    assert await call(_minutes_checks, room) == [
        ("reserve", "tecnico"),
        ("blower", "caller"),
        ("reader", "caller"),
        ("inspection", "caller"),
    ]
    assert await call(_checks_of_the_next_session, room) == []
