"""The caller console's opening checks in a real browser, in Spanish (R-07, spec §2.7 S1–S2): each material
check is recorded when it is ticked, by whoever ticks it, and shown done with who and when; one recorded
by another person before the console opened shows done on load; the opening with a check not yet
recorded is refused naming it, nothing written; ticked, the session opens and its minutes name each
check's own checker.

Screenshots left in /tmp for a look (1280x800): console-checks-es.png (two checks done, one to tick),
console-checks-refused-es.png (the opening refused naming the check not recorded),
console-check-fail-form-es.png (a failure's note asked for), console-checks-live-es.png (a check ticked and
one failed on the other console).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from bingo.venuewide import records
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


async def test_a_check_ticked_on_one_console_shows_on_another_and_a_failed_one_keeps_its_note(
    page: Page, browser: Browser, server_url: str, room: Room, caller: Any, venue: Any
) -> None:
    """Two consoles of the room open: each check recorded on one shows done (or not working, with its note)
    on the other without a reload, with who and when; a failed check keeps the opening refused."""
    await call(make_user, "tecnico", venue, Role.CALLER)
    other_context = await browser.new_context(
        viewport={"width": 1280, "height": 800}, locale="es-ES", timezone_id="Europe/Madrid"
    )
    await other_context.add_cookies(
        [{"name": "django_language", "value": "es", "domain": "127.0.0.1", "path": "/"}]
    )
    other_context.set_default_timeout(10_000)
    other = await other_context.new_page()
    errors: list[str] = []
    other.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        await page.set_viewport_size({"width": 1280, "height": 800})
        await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
        await log_in(other, server_url, "tecnico", f"/console/rooms/{room.pk}/")
        for console in (page, other):
            await expect(console.locator("body")).to_have_attribute("data-stream", "live")
            await expect(console.locator("#check-blower-done")).to_have_text("Sin comprobar todavía")

        # Ticked on the first console: the second shows it done, by whom, without a reload.
        await page.check("#check-blower")
        await expect(other.locator('.check-row[data-check="blower"]')).to_have_attribute("data-done", "true")
        await expect(other.locator("#check-blower-done")).to_contain_text("Comprobado por caller a las")
        await expect(other.locator("#check-blower")).to_be_checked()
        await expect(other.locator("#check-blower")).to_be_disabled()

        # The reader fails on the second console: a note is asked for, then the first console shows it.
        await other.click("#check-reader-fail-open")
        await other.click('#check-reader-fail button[type="submit"]')
        await expect(other.locator("#session-msg")).to_contain_text("nota")
        await other.screenshot(path="/tmp/console-check-fail-form-es.png")
        assert await call(_checks_of_the_next_session, room) == [("blower", True, "caller")]
        await other.fill("#check-reader-note", "El lector no lee la bola 7")
        await other.click('#check-reader-fail button[type="submit"]')
        await expect(other.locator("#check-reader-fail")).to_be_hidden()
        for console in (other, page):
            done = console.locator("#check-reader-done")
            await expect(done).to_contain_text("No funciona: El lector no lee la bola 7")
            await expect(done).to_contain_text("tecnico")
            await expect(done).to_have_class(re.compile("is-bad"))
            await expect(console.locator("#check-reader")).not_to_be_checked()
            await expect(console.locator("#check-reader")).to_be_enabled()
        await page.screenshot(path="/tmp/console-checks-live-es.png")

        # The reserve ticked, the reader failed: the opening is refused naming the reader, nothing written.
        await page.check("#check-reserve")
        await expect(other.locator("#check-reserve-done")).to_contain_text("Comprobado por caller")
        await page.fill("#inspect-paste", " ".join(str(n) for n in ALL_BALLS))
        await page.click("#inspect-paste-add")
        await page.click("#session-open-btn")
        await expect(page.locator("#session-msg")).to_contain_text("lector de bolas")
        assert not await call(GameSession.objects.exists)

        # Checked again and working on the second console: the first sees it, opens; the minutes keep both.
        await other.check("#check-reader")
        await expect(page.locator("#check-reader-done")).to_contain_text("Comprobado por tecnico")
        await page.click("#session-open-btn")
        await expect(page.locator("#session-badge")).to_have_text(re.compile(r"^Sesión \d+ abierta$"))
        notes = await call(_minutes_notes, room)
        assert notes == [
            ("blower", True, "caller", ""),
            ("reader", False, "tecnico", "El lector no lee la bola 7"),
            ("reserve", True, "caller", ""),
            ("reader", True, "tecnico", ""),
            ("inspection", True, "caller", ""),
        ]
        assert not errors, errors
    finally:
        await other_context.close()


def _minutes_notes(room: Room) -> list[tuple[str, bool, str, str]]:
    session = GameSession.objects.get(room=room)
    return [(c["check"], c["ok"], c["by"], c["note"]) for c in records.session_minutes(session)["checks"]]
