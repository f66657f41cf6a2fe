"""The caller's voice made in the background while the demo serves (issue 26, demo.voice): the build makes
the balls and announcements first and the numbers last, says how far it is (progress.json, `GET
/api/voice/clips/`), serves each clip as soon as it exists, keeps what it made when stopped half-way and goes
on from there, and a build that cannot run says it failed. The engine is a stand-in that copies a short tone
(espeak-ng takes minutes for the 1 225 clips); scripts/ensure_voice.sh runs as `make demo` runs it."""

from __future__ import annotations

import array
import math
import os
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from bingo.traditional import voicefiles
from bingo.traditional.voice import CLIPS
from demo import voice as demo_voice


def _tone(path: Path) -> None:
    samples = array.array("h", (int(8000 * math.sin(i / 3)) for i in range(800)))
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16000)
        wav.writeframes(samples.tobytes())


@pytest.fixture
def engine(tmp_path: Path) -> Path:
    """A stand-in for espeak-ng: `engine -v VOICE -w OUT -- TEXT` writes a short tone to OUT."""
    tone = tmp_path / "tone.wav"
    _tone(tone)
    script = tmp_path / "fake-espeak"
    script.write_text(f'#!/bin/sh\ncp "{tone}" "$4"\n')
    script.chmod(0o755)
    return script


@pytest.fixture
def voice_dir(tmp_path: Path, settings: Any, engine: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "voice"
    settings.HALL_VOICE_DIR = directory
    settings.VAR_DIR = tmp_path / "var"
    monkeypatch.setenv("HALL_VOICE_ENGINE", str(engine))  # the build's process reads its settings from it
    return directory


def _wait(directory: Path, until: str, timeout: float = 240) -> list[voicefiles.Progress]:
    seen: list[voicefiles.Progress] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = voicefiles.progress(directory)
        if not seen or now != seen[-1]:
            seen.append(now)
        if now.state == until:
            return seen
        time.sleep(0.02)
    raise AssertionError(f"no {until} in {timeout} s: {seen[-5:]}")


@pytest.fixture
def stops() -> Iterator[list[object]]:
    started: list[object] = []
    yield started
    for stop in started:
        stop()  # type: ignore[operator]


def test_the_balls_come_first_and_the_numbers_last() -> None:
    order = voicefiles.build_order(CLIPS)
    assert sorted(order) == sorted(CLIPS)
    first_number = next(i for i, key in enumerate(order) if key.startswith("num-"))
    assert all(key.startswith("num-") for key in order[first_number:])
    assert order[:90] == [f"ball-{n}" for n in range(1, 91)]


def test_a_build_stopped_half_way_keeps_what_it_made_and_one_that_fails_says_so(
    tmp_path: Path, engine: Path
) -> None:
    directory = tmp_path / "voice"
    clips = {key: CLIPS[key] for key in voicefiles.build_order(CLIPS)[:60]}
    # The same engine (a change of engine makes every clip again), failing on "el veinte" while told to.
    told = tmp_path / "fail"
    told.touch()
    refuse = f'[ -f "{told}" ] && case "$6" in *veinte*) exit 1;; esac'
    engine.write_text(engine.read_text().replace("\ncp", f"\n{refuse}\ncp"))
    with pytest.raises(voicefiles.VoiceBuildError):
        voicefiles.build(directory, engine=str(engine), voice="es", clips=clips)
    failed = voicefiles.progress(directory, clips)
    assert failed.state == "failed" and 0 < failed.made < len(clips)
    assert "veinte" in failed.error
    # Made before the failure: kept (in the manifest), not made again.
    told.unlink()
    report = voicefiles.build(directory, engine=str(engine), voice="es", clips=clips)
    assert (report.kept, report.generated) == (failed.made, len(clips) - failed.made)
    assert voicefiles.progress(directory, clips) == voicefiles.Progress("ready", len(clips), len(clips))


@pytest.mark.django_db
def test_the_demo_makes_the_voice_in_the_background_and_says_how_far_it_is(
    voice_dir: Path, stops: list[object]
) -> None:
    operator = User.objects.create(username="operator")
    client = Client()
    client.force_login(operator)
    assert client.get("/api/voice/clips/").json()["state"] == "missing"
    assert client.get("/voice/ball-1.wav").status_code == 404  # nothing to say yet: the screen stays silent

    said: list[str] = []
    stops.append(demo_voice.start_voice_build(said.append))
    assert said and "background" in said[0]
    seen = _wait(voice_dir, "ready")
    building = [p for p in seen if p.state == "building"]
    assert building and any(0 < p.made < p.total for p in building), seen
    answer = client.get("/api/voice/clips/").json()
    assert answer == {"state": "ready", "made": len(CLIPS), "total": len(CLIPS), "error": ""}
    served = client.get("/voice/ball-1.wav")
    assert served.status_code == 200 and served["Content-Type"] == "audio/wav"
    _log_says(voice_dir, f"{len(CLIPS)} clips generated, 0 kept")

    # A later start finds them made: nothing is made again.
    stops.append(demo_voice.start_voice_build(said.append))
    time.sleep(0.5)
    _wait(voice_dir, "ready")
    _log_says(voice_dir, f"0 clips generated, {len(CLIPS)} kept")


def test_a_build_stopped_with_the_demo_goes_on_from_where_it_was(
    voice_dir: Path, stops: list[object]
) -> None:
    stop = demo_voice.start_voice_build(lambda _text: None)
    deadline = time.monotonic() + 120
    while (now := voicefiles.progress(voice_dir)).made < 100:
        assert time.monotonic() < deadline, now
        time.sleep(0.01)
    stop()  # Ctrl+C on the demo: the script, build_voice and the engine stop with it
    halted = voicefiles.progress(voice_dir)
    time.sleep(0.5)
    assert voicefiles.progress(voice_dir) == halted and halted.state == "building"
    made = len(voicefiles.read_manifest(voice_dir)["clips"])
    assert 100 <= made < len(CLIPS)
    stops.append(demo_voice.start_voice_build(lambda _text: None))
    _wait(voice_dir, "ready")
    _log_says(voice_dir, f"{len(CLIPS) - made} clips generated, {made} kept")


def _log_says(voice_dir: Path, line: str, timeout: float = 60) -> None:
    """The build's log says `line`: build_voice writes "ready" to its progress before it prints its summary
    and exits, so the line may come a moment after the state."""
    log = voice_dir.parent / "var" / demo_voice.LOG
    deadline = time.monotonic() + timeout
    while line not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)


def test_a_demo_that_cannot_make_the_voice_says_so(voice_dir: Path, stops: list[object]) -> None:
    failing = [["sh", "-c", "echo no espeak-ng here; exit 1"], ["sh", "-c", "echo never run"]]
    stops.append(demo_voice.start_voice_build(lambda _text: None, commands=failing))
    seen = _wait(voice_dir, "failed", timeout=30)
    assert seen[-1].error == "no espeak-ng here"
    assert not os.path.exists(voice_dir / "ball-1.wav")
