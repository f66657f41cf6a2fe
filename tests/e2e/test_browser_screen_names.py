"""The setup page refuses, in Spanish, a new screen named as another screen of its room (whatever the case):
the refusal names it and nothing is written.

Screenshot left in /tmp for a look (1280x800): setup-screen-exists-es.png.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Page, expect

from halls.models import Room, Screen
from tests.e2e.browser_support import call, log_in

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"


async def test_a_repeated_screen_name_is_refused_in_spanish(
    page: Page, server_url: str, room: Room, screen: Screen, operator: Any
) -> None:
    await page.set_viewport_size({"width": 1280, "height": 800})
    await log_in(page, server_url, "operator", "/setup/")
    form = page.locator("#screen-form")
    await form.locator('input[name="name"]').fill("pantalla PRINCIPAL")
    await form.locator('button[type="submit"]').click()
    error = page.locator("#setup-error")
    await expect(error).to_have_attribute("data-code", "screen_exists")
    await expect(error).to_contain_text(
        f"No se ha hecho: La sala {room.name} ya tiene una pantalla llamada «Pantalla principal»: "
        "elija otro nombre."
    )
    await error.scroll_into_view_if_needed()
    await page.screenshot(path="/tmp/setup-screen-exists-es.png")
    assert await call(Screen.objects.filter(room=room).count) == 1
