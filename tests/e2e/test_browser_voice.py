"""The caller's voice in a real browser: the room's audio screen says ball 45 ("el cuarenta y cinco", the
clip generated offline), the room's other screen stays silent, and the console's mute silences the audio
screen at once (volume too). Chromium runs as a hall's kiosk does, with
--autoplay-policy=no-user-gesture-required; without it the screen asks once for a click ("Enable sound").

Screenshots left in /tmp for a look: voice-screen.png (the audio screen, speaker on), voice-console.png
(the console with its voice controls, muted), voice-enable-1920x1080.png and voice-enable-1280x800.png (the
"Enable sound" button in the head, clear of the sales announcement).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import Browser, Page, ViewportSize, async_playwright, expect

from bingo.traditional.services import draw, games, sales
from bingo.traditional.voicefiles import build
from halls.models import Screen
from halls.services import voice
from tests.bingo.electronic.support import enqueued
from tests.bingo.electronic.test_game_known_balls import BALLS
from tests.e2e.browser_support import call, log_in, open_screen, start_game
from tests.e2e.conftest import CHROMIUM_ARGS, VIEWPORT
from tests.e2e.test_browser_electronic_screen import _draw
from tests.e2e.test_browser_electronic_screen import _set_up as electronic_room

pytestmark = pytest.mark.e2e

KIOSK_ARGS = [*CHROMIUM_ARGS, "--autoplay-policy=no-user-gesture-required"]
CLIP_45 = "/voice/ball-45.wav"
PLAYED_TO_ITS_END = (
    "src => window.HallVoice.log.some(e => e.src.endsWith(src) && e.played && e.reason === 'ended')"
)


@pytest.fixture
async def kiosk(chromium_path: str) -> AsyncIterator[Browser]:
    build(Path(settings.HALL_VOICE_DIR), engine=settings.HALL_VOICE_ENGINE, voice=settings.HALL_VOICE_NAME)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path, args=KIOSK_ARGS, headless=True)
        yield browser
        await browser.close()


async def new_page(
    browser: Browser, errors: list[str], language: str = "en", viewport: ViewportSize = VIEWPORT
) -> Page:
    context = await browser.new_context(viewport=viewport, locale="es-ES", timezone_id="Europe/Madrid")
    await context.add_cookies(
        [{"name": "django_language", "value": language, "domain": "127.0.0.1", "path": "/"}]
    )
    context.set_default_timeout(15_000)
    page = await context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page


async def voice_log(page: Page) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = await page.evaluate("() => window.HallVoice.log.slice()")
    return entries


async def test_the_audio_screen_says_ball_45_the_other_does_not_and_mute_silences_it(
    kiosk,
    server_url,
    eager_tasks,
    room,
    screen,
    manual_game,
    card_series,
    ball_set,
    caller,
    cashier,
    operator,
):
    other = await call(Screen.objects.create, venue=room.venue, room=room, name="Pantalla barra")
    await call(voice.choose_audio_screen, room=room, screen=screen, actor=operator)
    errors: list[str] = []
    audio_page = await new_page(kiosk, errors)
    silent_page = await new_page(kiosk, errors)
    console = await new_page(kiosk, errors)
    await open_screen(audio_page, server_url, screen.token)
    await open_screen(silent_page, server_url, other.token)
    await expect(audio_page.locator("body")).to_have_attribute("data-voice", "on")
    await expect(audio_page.locator("#voice-badge")).to_be_visible()
    await expect(audio_page.locator("#voice-enable")).to_be_hidden()  # the kiosk needs no click
    await expect(silent_page.locator("body")).to_have_attribute("data-voice", "none")
    await expect(silent_page.locator("#voice-badge")).to_be_hidden()

    # S3: the session's first sale announces the series and their face value, on the screens and in voice.
    game = await call(games.open_sales, game=manual_game, actor=caller)
    await expect(audio_page.locator("#foot-text")).to_contain_text("Series a la venta: A a 2,00\u00a0€")
    await expect(silent_page.locator("#foot-text")).to_contain_text("Series a la venta: A a 2,00\u00a0€")
    await audio_page.wait_for_function(
        "() => window.HallVoice.log.some(e => e.src.endsWith('/voice/series-on-sale.wav') && e.played)"
    )
    # S6–S8 at the close of sales, S9 at the start: said in order, after the series, before any ball.
    await call(sales.sell_range, game=game, series=card_series, first=1, last=30, actor=cashier)
    game = await call(games.close_sales, game=game, actor=caller)
    game = await call(games.start_draw, game=game, actor=caller)
    await audio_page.wait_for_function(
        "() => window.HallVoice.log.some(e => e.src.endsWith('/voice/start.wav') && e.reason === 'ended')",
        timeout=180_000,  # 19 s of speech in 22 clips; far slower on a loaded CI machine
    )
    said = [e["src"].rsplit("/", 1)[1] for e in await voice_log(audio_page)]
    assert said[:2] == ["series-on-sale.wav", "series.wav"]
    assert said.index("cards-sold.wav") < said.index("line-prize.wav") < said.index("start.wav")
    assert all(e["played"] for e in await voice_log(audio_page))
    assert not any(e["played"] for e in await voice_log(silent_page))
    await audio_page.evaluate("() => { window.HallVoice.log.length = 0; }")
    await silent_page.evaluate("() => { window.HallVoice.log.length = 0; }")
    silent_snapshots = await silent_page.evaluate("() => window.hallStream.stats.snapshots")

    await call(draw.enter_ball, game=game, number=45, actor=caller)
    await expect(audio_page.locator("#current-ball-number")).to_have_text("45")
    await expect(silent_page.locator("#current-ball-number")).to_have_text("45")
    # The audio screen played the clip to its end: "playing" then "ended" from the browser's own player.
    await audio_page.wait_for_function(
        "src => window.HallVoice.log.some(e => e.src.endsWith(src) && e.played && e.reason === 'ended')",
        arg=CLIP_45,
    )
    heard = [e for e in await voice_log(audio_page) if e["src"].endswith(CLIP_45)]
    assert len(heard) == 1
    # The other screen heard the ball too, and said nothing. (Unless it reloaded its snapshot meanwhile, as a
    # screen may on a loaded machine: a snapshot never speaks, so there is nothing to log then.)
    await silent_page.wait_for_function(
        "([src, before]) => window.HallVoice.log.some(e => e.src.endsWith(src))"
        " || window.hallStream.stats.snapshots > before",
        arg=[CLIP_45, silent_snapshots],
    )
    said_silent = [(e["played"], e["reason"]) for e in await voice_log(silent_page)]
    reloaded = await silent_page.evaluate("() => window.hallStream.stats")
    assert said_silent == [(False, "not_audio_screen")] or (said_silent == [] and reloaded), reloaded
    # The clip the screen fetched is the generated file.
    fetched = await audio_page.evaluate(
        "src => fetch(src).then(r => r.arrayBuffer()).then(b => b.byteLength)", CLIP_45
    )
    assert fetched == (Path(settings.HALL_VOICE_DIR) / "ball-45.wav").stat().st_size
    await audio_page.screenshot(path="/tmp/voice-screen.png")

    # The caller mutes the voice from the console: the audio screen hears it live; the next ball is silent.
    await log_in(console, server_url, "caller", f"/console/rooms/{room.pk}/")
    await expect(console.locator("#voice-screen")).to_have_text("Voice on: Pantalla principal")
    await console.click("#voice-mute")
    await expect(console.locator("#voice-mute")).to_have_attribute("aria-pressed", "true")
    await expect(audio_page.locator("body")).to_have_attribute("data-voice", "muted")
    await call(draw.enter_ball, game=game, number=46, actor=caller)
    await expect(audio_page.locator("#current-ball-number")).to_have_text("46")
    await audio_page.wait_for_function(
        "() => window.HallVoice.log.some(e => e.src.endsWith('/voice/ball-46.wav'))"
    )
    said_46 = [e for e in await voice_log(audio_page) if e["src"].endswith("/voice/ball-46.wav")]
    assert [(e["played"], e["reason"]) for e in said_46] == [(False, "muted")]

    # The volume from the console reaches the screen's player too.
    await console.eval_on_selector(
        "#voice-volume", "el => { el.value = '40'; el.dispatchEvent(new Event('change')); }"
    )
    await audio_page.wait_for_function("() => window.HallVoice.state().volume === 40")
    await console.screenshot(path="/tmp/voice-console.png", full_page=True)

    # Unmuted, ball 47 is said again.
    await console.click("#voice-mute")
    await expect(audio_page.locator("body")).to_have_attribute("data-voice", "on")
    await call(draw.enter_ball, game=game, number=47, actor=caller)
    await audio_page.wait_for_function(
        "() => window.HallVoice.log.some(e => e.src.endsWith('/voice/ball-47.wav') && e.played)"
    )
    assert not errors, errors


# A desktop browser's autoplay policy, as headless chromium does not enforce one whatever its flags say: no
# sound before a person clicked the page (a trusted click; Playwright's evaluate counts as a gesture for
# navigator.userActivation, so that cannot tell), NotAllowedError as the browser answers.
GESTURE_POLICY = """
(() => {
  let touched = false;
  document.addEventListener("click", (e) => { if (e.isTrusted) { touched = true; } }, true);
  const play = HTMLMediaElement.prototype.play;
  HTMLMediaElement.prototype.play = function () {
    if (!touched) {
      return Promise.reject(new DOMException("play() needs a user gesture", "NotAllowedError"));
    }
    return play.call(this);
  };
})();
"""


async def test_a_browser_that_wants_a_gesture_gets_one_enable_sound_click(
    browser, server_url, room, screen, operator
):
    """The audio screen in a browser that refuses sound before a gesture: it asks once, and plays after."""
    await call(voice.choose_audio_screen, room=room, screen=screen, actor=operator)
    errors: list[str] = []
    page = await new_page(browser, errors)
    await page.add_init_script(GESTURE_POLICY)
    await open_screen(page, server_url, screen.token)
    await page.wait_for_function("() => window.HallVoice.state().audio && !window.HallVoice.state().probing")
    await expect(page.locator("body")).to_have_attribute("data-voice", "locked")
    await expect(page.locator("#voice-enable")).to_have_text("Activar el sonido")
    await page.screenshot(path="/tmp/voice-enable.png")
    # Nothing is said while locked: the clip is skipped, not queued for later.
    await page.evaluate("() => window.HallVoice.say(['/voice/ball-44.wav'])")
    assert [(e["played"], e["reason"]) for e in await voice_log(page)] == [(False, "locked")]
    assert not await page.evaluate("() => window.HallVoice.remembered()")
    await page.click("#voice-enable")
    await expect(page.locator("#voice-enable")).to_be_hidden()
    await expect(page.locator("body")).to_have_attribute("data-voice", "on")
    assert await page.evaluate("() => window.HallVoice.remembered()")
    await page.evaluate("() => window.HallVoice.say(['/voice/ball-45.wav'])")
    await page.wait_for_function(
        "() => window.HallVoice.log.some(e => e.src.endsWith('ball-45.wav') && e.played)"
    )
    assert not errors, errors


# Every visible element of the screen but the button itself, its ancestors and its own content, whose box
# meets the button's: [] when the button covers nothing. Also returns how many footer elements were checked.
COVERED = """
() => {
  const button = document.getElementById("voice-enable");
  const own = (el) => el === button || el.contains(button) || button.contains(el);
  const box = button.getBoundingClientRect();
  const meets = (r) => r.left < box.right && box.left < r.right && r.top < box.bottom && box.top < r.bottom;
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && style.visibility !== "hidden" && style.display !== "none";
  };
  const covered = [...document.querySelectorAll(".stage *")]
    .filter((el) => !own(el) && shown(el) && meets(el.getBoundingClientRect()))
    .map((el) => {
      const name = el.id ? "#" + el.id : el.className.baseVal ?? el.className;
      return name + ": " + el.textContent.trim().slice(0, 40);
    });
  const foot = [...document.querySelectorAll("footer, footer *")].filter(shown);
  const footCovered = foot.filter((el) => meets(el.getBoundingClientRect())).length;
  return {covered, foot: foot.length, footCovered};
}
"""


@pytest.mark.parametrize("viewport", [{"width": 1920, "height": 1080}, {"width": 1280, "height": 800}])
async def test_the_enable_sound_button_covers_nothing_on_the_screen(
    browser,
    server_url,
    eager_tasks,
    room,
    screen,
    manual_game,
    card_series,
    ball_set,
    caller,
    cashier,
    operator,
    viewport,
):
    """The "Enable sound" button sits in the head beside the speaker: its box meets no element of the screen,
    the footer's sales announcement ("Cartones vendidos …") above all."""
    await call(voice.choose_audio_screen, room=room, screen=screen, actor=operator)
    await call(start_game, manual_game, card_series, caller, cashier, last_serial=48)
    errors: list[str] = []
    page = await new_page(browser, errors, language="es", viewport=viewport)
    await page.add_init_script(GESTURE_POLICY)
    await open_screen(page, server_url, screen.token)
    await expect(page.locator("#voice-enable")).to_be_visible()
    await expect(page.locator("#foot-text")).to_contain_text("Cartones vendidos 48")
    found = await page.evaluate(COVERED)
    await page.screenshot(path=f"/tmp/voice-enable-{viewport['width']}x{viewport['height']}.png")
    assert found["foot"] >= 3, found  # the footer (its tag and its text) was there to be checked
    assert found["footCovered"] == 0, found
    assert found["covered"] == [], found
    # It is in the head, beside the speaker.
    head = await page.locator(".screen-head").bounding_box()
    button = await page.locator("#voice-enable").bounding_box()
    badge = await page.locator("#voice-badge").bounding_box()
    assert head and button and badge
    assert head["y"] <= button["y"] and button["y"] + button["height"] <= head["y"] + head["height"]
    assert 0 < badge["x"] - (button["x"] + button["width"]) < 60
    assert not errors, errors


async def test_mute_and_volume_from_one_console_reach_the_audio_screen_and_every_other_console_live(
    kiosk, server_url, eager_tasks, room, screen, manual_game, caller, operator
):
    """Two consoles of the room open at once and the audio screen: what the caller changes on one console is
    on the screen and on the other console at once (room.voice over the channel layer), without a reload;
    so is the operator's choice of another audio screen."""
    other = await call(Screen.objects.create, venue=room.venue, room=room, name="Pantalla barra")
    await call(voice.choose_audio_screen, room=room, screen=screen, actor=operator)
    errors: list[str] = []
    audio_page = await new_page(kiosk, errors)
    first = await new_page(kiosk, errors)
    second = await new_page(kiosk, errors)
    await open_screen(audio_page, server_url, screen.token)
    await expect(audio_page.locator("body")).to_have_attribute("data-voice", "on")
    for console in (first, second):
        await log_in(console, server_url, "caller", f"/console/rooms/{room.pk}/")
        await expect(console.locator("body")).to_have_attribute("data-stream", "live")
        await expect(console.locator("#voice-mute")).to_have_attribute("aria-pressed", "false")
        await expect(console.locator("#voice-volume-value")).to_have_text("80%")
    loads = {"first": 0, "second": 0}

    def reload(url: str) -> bool:
        """The console's page or snapshot (not the screens' watch, which asks while a screen is late)."""
        return "/console/" in url and not url.endswith("/console/screens/")

    first.on("request", lambda r: loads.__setitem__("first", loads["first"] + reload(r.url)))
    second.on("request", lambda r: loads.__setitem__("second", loads["second"] + reload(r.url)))

    # Muted on the first console: the screen falls silent, the second console shows it muted.
    await first.click("#voice-mute")
    await expect(audio_page.locator("body")).to_have_attribute("data-voice", "muted")
    await expect(second.locator("#voice-mute")).to_have_attribute("aria-pressed", "true")
    await expect(second.locator("#voice-mute")).to_have_text("Unmute voice")
    await expect(first.locator("#voice-mute")).to_have_attribute("aria-pressed", "true")

    # The volume from the second console: on the screen's player and on the first console's slider.
    await second.eval_on_selector(
        "#voice-volume",
        "el => { el.value = '35'; el.dispatchEvent(new Event('input'));"
        " el.dispatchEvent(new Event('change')); }",
    )
    await audio_page.wait_for_function("() => window.HallVoice.state().volume === 35")
    await expect(first.locator("#voice-volume-value")).to_have_text("35%")
    await expect(first.locator("#voice-volume")).to_have_value("35")

    # Unmuted from the second console: the first console and the screen follow.
    await second.click("#voice-mute")
    await expect(first.locator("#voice-mute")).to_have_attribute("aria-pressed", "false")
    await expect(first.locator("#voice-mute")).to_have_text("Mute voice")
    await expect(audio_page.locator("body")).to_have_attribute("data-voice", "on")

    # The operator makes the bar's screen the audio screen: both consoles name it.
    await call(voice.choose_audio_screen, room=room, screen=other, actor=operator)
    for console in (first, second):
        await expect(console.locator("#voice-screen")).to_have_text("Voice on: Pantalla barra")
    await expect(audio_page.locator("body")).to_have_attribute("data-voice", "none")
    await first.screenshot(path="/tmp/voice-consoles.png", full_page=True)
    # All of it live: no console reloaded its page or its snapshot.
    assert loads == {"first": 0, "second": 0}, loads
    assert not errors, errors


async def test_an_electronic_rooms_audio_screen_says_each_ball_of_its_game(
    kiosk, server_url, venue, operator, cashier
):
    """Electronic bingo's hall screens speak too: the engine draws a ball of the room's game and the room's
    audio screen plays that ball's clip to its end; the room's other screen stays silent."""
    with enqueued():
        speciality, game, screen = await call(electronic_room, venue, operator, cashier)
        other = await call(Screen.objects.create, venue=venue, room=speciality.room, name="Pantalla barra")
        await call(voice.choose_audio_screen, room=speciality.room, screen=screen, actor=operator)
        errors: list[str] = []
        audio_page = await new_page(kiosk, errors)
        silent_page = await new_page(kiosk, errors)
        await open_screen(audio_page, server_url, screen.token)
        await open_screen(silent_page, server_url, other.token)
        await expect(audio_page.locator("body")).to_have_attribute("data-room-kind", "electronic")
        await expect(audio_page.locator("body")).to_have_attribute("data-voice", "on")
        await expect(silent_page.locator("body")).to_have_attribute("data-voice", "none")

        for ordinal in (1, 2):
            ball = BALLS[ordinal - 1]
            clip = f"/voice/ball-{ball}.wav"
            await call(_draw, game, ordinal)
            await expect(audio_page.locator("#es-ball")).to_have_attribute("data-ball", str(ball))
            await audio_page.wait_for_function(PLAYED_TO_ITS_END, arg=clip)
            await expect(silent_page.locator("#es-ball")).to_have_attribute("data-ball", str(ball))
        said = [e["src"].rsplit("/", 1)[1] for e in await voice_log(audio_page)]
        assert said == [f"ball-{BALLS[0]}.wav", f"ball-{BALLS[1]}.wav"], said
        fetched = await audio_page.evaluate(
            "src => fetch(src).then(r => r.arrayBuffer()).then(b => b.byteLength)",
            f"/voice/ball-{BALLS[0]}.wav",
        )
        assert fetched == (Path(settings.HALL_VOICE_DIR) / f"ball-{BALLS[0]}.wav").stat().st_size
        assert not any(e["played"] for e in await voice_log(silent_page))
        await audio_page.screenshot(path="/tmp/voice-electronic.png")
        assert not errors, errors
