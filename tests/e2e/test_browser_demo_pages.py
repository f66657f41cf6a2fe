"""The demo as a new user meets it, in a real browser, in Spanish (issue 26): the caller console's room list
says "Sala 2" by its blower (never RNG), the console and the setup page show how far the caller's voice is
made while it is made in the background (and nothing once it is), the inspector's login opens the inspector's
pages; and an audio screen plays the clips that exist, stays silent for the others, and plays a clip made
after it opened.

Screenshots left in /tmp (1280x800): demo-console-rooms-es.png, demo-console-voice-progress-es.png,
demo-setup-voice-progress-es.png, demo-inspector-es.png.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from bingo.traditional.services import draw
from bingo.traditional.voice import CLIPS
from bingo.traditional.voicefiles import build, write_progress
from demo.hall import MANUAL_ROOM, DemoHall, seed_bingo, seed_hall
from halls.services import voice
from tests.e2e.browser_support import call, open_screen, start_game
from tests.e2e.test_browser_voice import KIOSK_ARGS, new_page, voice_log
from tests.sqlite.test_demo_voice import _tone

pytestmark = pytest.mark.e2e

ACCEPT_LANGUAGE = "es"
# What a step may take on a loaded machine (the page, the server and the audio share the cores).
LOADED = 60_000
# The audio screen says nothing now: its last clip is done (ended, or skipped and why), none is playing or
# being fetched (halls/voice.js: a clip is logged "pending" when its turn comes, and the next one waits).
SILENT = """() => {
  const log = window.HallVoice.log;
  return !log.length || !["pending", "playing"].includes(log[log.length - 1].reason);
}"""
# This clip's turn came and went (played to its end, or skipped and why).
SETTLED = (
    "src => window.HallVoice.log.some(e => e.src.endsWith(src) && !['pending', 'playing'].includes(e.reason))"
)


@pytest.fixture
async def kiosk(chromium_path: str) -> AsyncIterator[Browser]:
    """Chromium as a hall's kiosk runs it (sound without a click); no clips made beforehand."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path, args=KIOSK_ARGS, headless=True)
        yield browser
        await browser.close()


def _demo_hall() -> DemoHall:
    hall = seed_hall()
    seed_bingo(hall)
    return hall


async def _log_in(page: Page, server_url: str, hall: DemoHall, username: str, path: str) -> None:
    await page.context.clear_cookies()
    await page.context.add_cookies(
        [{"name": "django_language", "value": "es", "domain": "127.0.0.1", "path": "/"}]
    )
    await page.goto(f"{server_url}/accounts/login/?next={path}")
    await page.fill("#id_username", username)
    await page.fill("#id_password", hall.credentials[username])
    await page.press("#id_password", "Enter")
    await page.wait_for_url(f"{server_url}{path}")


async def test_sala_2_is_said_by_its_blower_the_voice_progress_shows_and_the_inspector_logs_in(
    page: Page, server_url: str, settings: Any, tmp_path: Path
) -> None:
    settings.HALL_VOICE_DIR = tmp_path / "voice"
    write_progress(settings.HALL_VOICE_DIR, "building", 300, len(CLIPS))
    hall = await call(_demo_hall)
    await page.set_viewport_size({"width": 1280, "height": 800})
    await _log_in(page, server_url, hall, "caller", "/console/")
    manual = hall.rooms[MANUAL_ROOM]
    tile = page.locator(f'a.tile[data-room="{manual.pk}"] .tile__text')
    await expect(tile).to_have_text("Bombo 1 (bombo neumático) · reserva: Bombo 2 (reserva)")
    await expect(page.locator(".tiles")).not_to_contain_text("RNG")
    await page.screenshot(path="/tmp/demo-console-rooms-es.png")

    # The console of Sala 2 while the clips are made: how far, in Spanish; gone once they are all made.
    await page.goto(f"{server_url}/console/rooms/{manual.pk}/")
    progress = page.locator("#voice-clips")
    await expect(progress).to_have_text(
        f"Voz del locutor: 300 de {len(CLIPS)} fragmentos generados; las pantallas dicen lo ya generado."
    )
    await expect(progress).to_have_attribute("data-state", "building")
    await expect(page.locator("body")).to_have_attribute("data-stream", "live")
    await expect(page.locator("#session-badge")).to_have_text("Ninguna sesión abierta")
    await page.screenshot(path="/tmp/demo-console-voice-progress-es.png")
    write_progress(settings.HALL_VOICE_DIR, "building", 900, len(CLIPS))
    await expect(progress).to_contain_text(f"900 de {len(CLIPS)}")
    write_progress(settings.HALL_VOICE_DIR, "ready", len(CLIPS), len(CLIPS))
    await expect(progress).to_be_hidden()

    # The setup page says it too (a build that could not run: said as such).
    write_progress(settings.HALL_VOICE_DIR, "failed", 91, len(CLIPS), "espeak-ng is not installed")
    await _log_in(page, server_url, hall, "operator", "/setup/")
    setup_progress = page.locator("#voice-clips")
    await expect(setup_progress).to_have_text(
        f"Voz del locutor: no se pudo generar (91 de {len(CLIPS)} fragmentos); "
        "las pantallas callan donde falta un fragmento."
    )
    await expect(setup_progress).to_have_attribute("title", "espeak-ng is not installed")
    await expect(setup_progress).to_have_class("msg msg--error")
    await setup_progress.scroll_into_view_if_needed()
    await page.screenshot(path="/tmp/demo-setup-voice-progress-es.png")

    # The inspector's login: the inspector's pages, the venue in them.
    await _log_in(page, server_url, hall, "inspector", "/inspector/")
    await expect(page.locator("main")).to_contain_text(hall.venue.name)
    await page.screenshot(path="/tmp/demo-inspector-es.png")


def _make(directory: Path, tmp_path: Path, keys: list[str]) -> None:
    """Make these clips (a short tone each: what the build would write, sooner)."""
    tone = tmp_path / "tone.wav"
    if not tone.exists():
        _tone(tone)
    engine = tmp_path / "fake-espeak"
    engine.write_text(f'#!/bin/sh\ncp "{tone}" "$4"\n')
    engine.chmod(0o755)
    manifest = directory / "manifest.json"
    old = json.loads(manifest.read_text())["clips"] if manifest.exists() else {}
    made = {key: CLIPS[key] for key in [*old, *keys] if key in CLIPS}
    build(directory, engine=str(engine), voice="es", clips=made)


async def test_a_screen_plays_the_clips_made_and_is_silent_for_the_rest(
    kiosk: Any,
    server_url: str,
    eager_tasks: Any,
    settings: Any,
    tmp_path: Path,
    room: Any,
    screen: Any,
    manual_game: Any,
    card_series: Any,
    caller: Any,
    cashier: Any,
    operator: Any,
) -> None:
    directory = tmp_path / "voice"
    settings.HALL_VOICE_DIR = directory
    _make(directory, tmp_path, ["ball-45"])
    await call(voice.choose_audio_screen, room=room, screen=screen, actor=operator)
    errors: list[str] = []
    audio = await new_page(kiosk, errors, language="es")
    await open_screen(audio, server_url, screen.token)
    await expect(audio.locator("body")).to_have_attribute("data-voice", "on", timeout=LOADED)
    game = await call(start_game, manual_game, card_series, caller, cashier)
    # The screen has the draw started (its events all handled) and has said what they asked for (the
    # announcement and "start", missing clips here): nothing of theirs is still playing, loading or loaded
    # ahead when the balls come, so each ball's clip is fetched when its turn comes.
    await expect(audio.locator("#bingo")).to_have_attribute("data-state", "drawing", timeout=LOADED)
    await audio.wait_for_function(SILENT, timeout=LOADED)
    await audio.evaluate("() => { window.HallVoice.log.length = 0; }")

    # Ball 7 has no clip yet: skipped in silence, the screen shows it. Ball 45 has one: said to its end.
    await call(draw.enter_ball, game=game, number=7, actor=caller)
    await expect(audio.locator("#current-ball-number")).to_have_text("7", timeout=LOADED)
    await audio.wait_for_function(SETTLED, arg="/voice/ball-7.wav", timeout=LOADED)
    await call(draw.enter_ball, game=game, number=45, actor=caller)
    await expect(audio.locator("#current-ball-number")).to_have_text("45", timeout=LOADED)
    await audio.wait_for_function(
        "() => window.HallVoice.log.some(e => e.src.endsWith('/voice/ball-45.wav') && e.reason === 'ended')",
        timeout=LOADED,
    )
    heard = {e["src"].rsplit("/", 1)[1]: (e["played"], e["reason"]) for e in await voice_log(audio)}
    assert heard["ball-7.wav"] == (False, "error"), heard
    assert heard["ball-45.wav"] == (True, "ended"), heard

    # Ball 12's clip is made while the screen is open: it says it.
    _make(directory, tmp_path, ["ball-12"])
    await call(draw.enter_ball, game=game, number=12, actor=caller)
    await audio.wait_for_function(
        "() => window.HallVoice.log.some(e => e.src.endsWith('/voice/ball-12.wav') && e.reason === 'ended')",
        timeout=LOADED,
    )
    assert not errors, errors
