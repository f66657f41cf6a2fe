"""The caller console before its session opens, in a real browser, in Spanish (issue 26): the inspection
balls typed survive a reload (kept on that console until the session opens, under the session the next one
follows, so an old draft never comes back for a later session), and every click on "Abrir la sesión" is
answered on screen, in Spanish, in view: the refusal in the server's words with the checks it names
outlined, or the session open.

Screenshots left in /tmp for a look (1280x720): console-inspection-reloaded-es.png (40 balls back after a
reload), console-open-refused-es.png (the refusal in view, the reader's check outlined),
console-open-done-es.png (the session open, said at the top), console-open-409-es.png (opened on another
console meanwhile: said at the top, the open session shown).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.async_api import Page, WebSocketRoute, expect

from halls.models import GameSession, Room
from halls.services import sessions
from tests.conftest import ALL_BALLS
from tests.e2e.browser_support import CONSOLE_SOCKET, call, log_in

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"


async def _type_balls(page: Page, balls: list[int]) -> None:
    for n in balls:
        await page.fill("#inspect-number", str(n))
        await page.press("#inspect-number", "Enter")


def _close(room: Room, actor: Any) -> None:
    session = GameSession.objects.get(room=room, closed_at__isnull=True)
    sessions.close_session(session=session, actor=actor)


async def test_the_typed_inspection_draw_survives_a_reload_and_every_open_click_is_answered(
    page: Page, server_url: str, room: Room, caller: Any
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    await page.set_viewport_size({"width": 1280, "height": 720})
    await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(page.locator("#session-badge")).to_have_text("Ninguna sesión abierta")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")

    # Ten typed one by one, thirty pasted: forty in the order drawn.
    first = ALL_BALLS[:40]
    await _type_balls(page, first[:10])
    await page.fill("#inspect-paste", " ".join(str(n) for n in first[10:]))
    await page.click("#inspect-paste-add")
    await expect(page.locator("#inspect-count")).to_have_text("40")

    # A reload keeps them, in order, and says so.
    await page.reload()
    await expect(page.locator("#inspect-count")).to_have_text("40")
    await expect(page.locator("#session-msg")).to_contain_text("Sorteo de inspección recuperado: 40 bolas")
    for n in first:
        await expect(page.locator(f"#inspect-board-{n}")).to_have_class(re.compile("is-once"))
    await expect(page.locator(f"#inspect-board-{ALL_BALLS[40]}")).to_have_class(re.compile("is-missing"))
    await page.screenshot(path="/tmp/console-inspection-reloaded-es.png")

    # The rest typed; an undo and a retype are kept too (a second reload).
    await page.fill("#inspect-paste", " ".join(str(n) for n in ALL_BALLS[40:]))
    await page.click("#inspect-paste-add")
    await _type_balls(page, [ALL_BALLS[0]])
    await expect(page.locator("#inspect-count")).to_have_text("91")
    await page.click("#inspect-undo")
    await page.reload()
    await expect(page.locator("#inspect-count")).to_have_text("90")
    await expect(page.locator("#inspect-summary")).to_contain_text("Las 90 bolas")

    # No check ticked: the click is answered at once, then refused in Spanish naming the three checks,
    # in view, each named check outlined; nothing written.
    await page.evaluate("window.scrollTo(0, 0)")
    await page.click("#session-open-btn")
    msg = page.locator("#session-msg")
    await expect(msg).to_contain_text("lector de bolas")
    await expect(msg).to_contain_text("La sesión no puede abrirse")
    await expect(msg).to_have_class(re.compile("msg--error"))
    await expect(msg).to_be_in_viewport()
    for name in ("blower", "reserve", "reader"):
        await expect(page.locator(f'.check-row[data-check="{name}"]')).to_have_class(re.compile("is-missing"))
    assert not await call(GameSession.objects.exists)

    # Two ticked: the refusal names only the reader, whose row alone stays outlined.
    await page.check("#check-blower")
    await page.check("#check-reserve")
    await expect(page.locator("#check-reserve-done")).to_contain_text("Comprobado por caller")
    await page.click("#session-open-btn")
    await expect(msg).to_contain_text("lector de bolas")
    await expect(msg).not_to_contain_text("bombo")
    await expect(msg).to_be_in_viewport()
    await expect(page.locator('.check-row[data-check="reader"]')).to_have_class(re.compile("is-missing"))
    await expect(page.locator('.check-row[data-check="blower"]')).not_to_have_class(re.compile("is-missing"))
    await page.screenshot(path="/tmp/console-open-refused-es.png")

    # All ticked: opened, said at the top of the page, in view.
    await page.check("#check-reader")
    await expect(page.locator('.check-row[data-check="reader"]')).not_to_have_class(re.compile("is-missing"))
    await page.click("#session-open-btn")
    await expect(page.locator("#session-badge")).to_have_text(re.compile(r"^Sesión \d+ abierta$"))
    await expect(page.locator("#page-msg")).to_have_text(re.compile(r"La sesión \d+ está abierta\."))
    await expect(page.locator("#page-msg")).to_be_in_viewport()
    await page.screenshot(path="/tmp/console-open-done-es.png")
    opened = await call(GameSession.objects.get)
    assert opened.inspection_balls == ALL_BALLS

    # The session closed: the next session's inspection draw starts empty (the draft went with the opening).
    await call(_close, room, caller)
    await page.reload()
    await expect(page.locator("#session-badge")).to_have_text("Ninguna sesión abierta")
    await expect(page.locator("#inspect-count")).to_have_text("0")
    await expect(page.locator("#session-msg")).to_be_hidden()
    assert not errors, errors


async def test_a_draft_typed_before_another_console_opened_the_session_does_not_come_back(
    page: Page, server_url: str, room: Room, caller: Any
) -> None:
    """Balls typed here, then the session opened elsewhere (its own inspection draw) and closed: a reload
    here offers the next session an empty draw, not the old balls."""
    await page.set_viewport_size({"width": 1280, "height": 720})
    await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await _type_balls(page, ALL_BALLS[:5])
    await expect(page.locator("#inspect-count")).to_have_text("5")
    await page.close()  # the console is closed with its draft kept in the browser
    other = await page.context.new_page()
    await call(
        sessions.open_session,
        room=room,
        actor=caller,
        blower_ok=True,
        reserve_ok=True,
        reader_ok=True,
        inspection_balls=ALL_BALLS,
    )
    await call(_close, room, caller)
    await other.goto(f"{server_url}/console/rooms/{room.pk}/")
    await expect(other.locator("#session-badge")).to_have_text("Ninguna sesión abierta")
    await expect(other.locator("#inspect-count")).to_have_text("0")
    await expect(other.locator("#session-msg")).to_be_hidden()
    assert (
        await other.evaluate(
            "Object.keys(localStorage).filter(k => k.indexOf('hall.inspection.') === 0).length"
        )
        == 0
    )


async def test_an_open_click_after_another_console_opened_the_session_is_answered_at_the_top(
    page: Page, server_url: str, room: Room, caller: Any
) -> None:
    """The session opened elsewhere while this console missed the news (its socket lost that event): the
    click's 409 is said at the top of the page, in Spanish, and the console then shows the open session."""

    def route(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        server.on_message(
            lambda message: (
                None
                if isinstance(message, str) and '"type":"session.opened"' in message
                else ws.send(message)
            )
        )

    await page.route_web_socket(CONSOLE_SOCKET, route)
    await page.set_viewport_size({"width": 1280, "height": 720})
    await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await page.fill("#inspect-paste", " ".join(str(n) for n in ALL_BALLS))
    await page.click("#inspect-paste-add")
    opened = await call(
        sessions.open_session,
        room=room,
        actor=caller,
        blower_ok=True,
        reserve_ok=True,
        reader_ok=True,
        inspection_balls=ALL_BALLS,
    )
    await expect(page.locator("#session-badge")).to_have_text("Ninguna sesión abierta")  # it missed it
    await page.click("#session-open-btn")
    top = page.locator("#page-msg")
    await expect(top).to_contain_text(f"La sala {room.name} ya tiene una sesión abierta.")
    await expect(top).to_be_in_viewport()
    await expect(page.locator("#session-badge")).to_have_text(f"Sesión {opened.pk} abierta")
    await expect(page.locator("#session-open")).to_be_hidden()
    await page.screenshot(path="/tmp/console-open-409-es.png")
    assert await call(GameSession.objects.count) == 1
