"""The caller console shows the game's ball set against its manufacturer's limit (a warning at the limit,
R-06, TB-07) and its drawing device, and switches the draw to the reserve mid-game (TB-31, TB-46): the
balls drawn stay, the next one is entered from the reserve, the switch is in the recall.

Screenshot left in /tmp for a look: console-equipment.png.
"""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from bingo.traditional.models import BallSet, DeviceSwitch, Game
from bingo.traditional.services import devices, draw, games
from tests.e2e.browser_support import call, log_in, start_game

pytestmark = pytest.mark.e2e


async def test_the_console_warns_at_the_limit_and_switches_to_the_reserve(
    page, server_url, eager_tasks, room, session, card_series, ball_set, caller, cashier, operator
):
    await call(lambda: BallSet.objects.filter(pk=ball_set.pk).update(certified_games=300, games_played=300))
    main = await call(devices.register_device, room=room, name="Bombo 1", kind="pneumatic", actor=operator)
    await call(
        devices.register_device, room=room, name="Turbina", kind="turbine", reserve=True, actor=operator
    )
    game = await call(games.create_game, room=room, actor=caller, draw_source="manual")
    assert game.draw_device_id == main.pk
    game = await call(start_game, game, card_series, caller, cashier, last_serial=12)
    await call(draw.enter_ball, game=game, number=45, actor=caller)

    await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await expect(page.locator("#game-equipment")).to_have_text(
        "Ball set Juego 1: 300 of 300 games · Device: Bombo 1"
    )
    await expect(page.locator("#ball-set-warning")).to_contain_text("replace it (TB-07)")

    await page.locator("#device-box summary").click()
    await expect(page.locator("#device-select option")).to_have_text(["Turbina (reserve)"])
    await page.fill("#device-reason", "El bombo 1 no sopla")
    await page.click("#device-form button[type=submit]")
    await expect(page.locator("#game-msg")).to_contain_text("The draw goes on with Turbina after ball 1.")
    await expect(page.locator("#game-equipment")).to_contain_text("Device: Turbina")
    await page.fill("#ball-input", "7")
    await page.press("#ball-input", "Enter")
    await expect(page.locator("#console-ordinal")).to_have_text("Ball 2 of 90")
    await page.screenshot(path="/tmp/console-equipment.png", full_page=True)
    switch = await call(DeviceSwitch.objects.select_related("switched_by").get, game=game)
    assert (switch.at_ordinal, switch.reason, switch.switched_by.username) == (
        1,
        "El bombo 1 no sopla",
        "caller",
    )


async def test_the_caller_chooses_the_ball_set_of_the_next_game(
    page, server_url, room, session, ball_set, caller, operator
):
    from bingo.traditional.services import ballsets

    await call(ballsets.register_ball_set, venue=room.venue, name="Juego nuevo", actor=operator)
    await log_in(page, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await expect(page.locator("#game-ball-set option")).to_have_text(["Juego 1", "Juego nuevo"])
    await page.locator("#game-ball-set").select_option(label="Juego nuevo")
    await page.click("#create-game button[type=submit]")
    await expect(page.locator("#game-equipment")).to_have_text("Ball set Juego nuevo: 0 of 10000 games")
    created = await call(lambda: list(Game.objects.values_list("ball_set__name", flat=True)))
    assert created == ["Juego nuevo"]
