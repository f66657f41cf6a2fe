"""The caller's voice on disk (bingo.traditional.voicefiles, `manage.py build_voice`): each clip a WAV
generated offline
by espeak-ng from its Spanish text, served as a file; the announcements of a game made of clips that exist."""

from __future__ import annotations

import array
import json
import subprocess
import tempfile
import wave
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from bingo.traditional import voice
from bingo.traditional.models import CardSeries, Game
from bingo.traditional.services import games, sales
from bingo.traditional.voicefiles import PROCESS, SILENCE, build, clip_file, read_manifest, trim
from halls.models import GameSession, Room


@pytest.fixture(scope="session")
def voice_dir() -> Path:
    """The installed clips (`make voice` made them for the test run; built here if missing: idempotent)."""
    directory = Path(settings.HALL_VOICE_DIR)
    build(directory, engine=settings.HALL_VOICE_ENGINE, voice=settings.HALL_VOICE_NAME)
    return directory


def duration(path: Path) -> float:
    with wave.open(str(path), "rb") as wav:
        assert wav.getnchannels() == 1
        assert wav.getsampwidth() == 2
        return wav.getnframes() / wav.getframerate()


def test_the_ball_45_clip_is_a_wav_generated_from_el_cuarenta_y_cinco(
    voice_dir: Path, tmp_path: Path
) -> None:
    path = clip_file(voice_dir, voice.ball_clip(45))
    assert path is not None and path.is_file()
    assert 0.5 < duration(path) < 5  # a spoken phrase, not an empty header
    entry = read_manifest(voice_dir)["clips"]["ball-45"]
    assert entry["text"] == "el cuarenta y cinco"
    assert (entry["engine"], entry["voice"]) == ("espeak-ng", "es")
    assert entry["process"] == PROCESS
    # espeak-ng is deterministic: the same text, said again now and trimmed, is the same file byte for byte.
    again = tmp_path / "again.wav"
    subprocess.run(["espeak-ng", "-v", "es", "-w", str(again), "--", "el cuarenta y cinco"], check=True)
    raw = duration(again)
    trim(again, "el cuarenta y cinco")
    assert again.read_bytes() == path.read_bytes()
    assert raw - duration(path) > 0.2  # espeak-ng's 0.3 s of trailing silence is gone
    other = tmp_path / "other.wav"
    subprocess.run(["espeak-ng", "-v", "es", "-w", str(other), "--", "el cincuenta y cuatro"], check=True)
    trim(other, "el cincuenta y cuatro")
    assert other.read_bytes() != path.read_bytes()


def silence_at_the_ends(path: Path) -> tuple[float, float]:
    with wave.open(str(path), "rb") as wav:
        rate = wav.getframerate()
        samples = array.array("h", wav.readframes(wav.getnframes()))
    loud = [i for i, v in enumerate(samples) if abs(v) > SILENCE]
    return loud[0] / rate, (len(samples) - 1 - loud[-1]) / rate


def test_clips_said_one_after_another_join_as_speech_does(voice_dir: Path) -> None:
    """The splicing gaps are gone: a clip inside a sentence ends 60 ms after its last sound (espeak-ng left
    0.3 s), a sentence's last clip keeps a pause; numbers below a thousand are one clip each. The S6 formula
    for 103 cards, spliced, lasts within 20 % of the same sentence said whole (5.4 s against 4.7 s; the
    word clips took 7.7 s)."""
    lead, tail = silence_at_the_ends(voice_dir / "num-118.wav")
    assert lead <= 0.02 and tail <= 0.07
    lead, tail = silence_at_the_ends(voice_dir / "of-the-series.wav")
    assert lead <= 0.02 and 0.2 <= tail <= 0.26
    clips = voice.formula_clips([[1, 103]], 103)
    assert clips == ["cards-sold", "num-103", "from-number", "num-1", "to", "num-103", "of-the-series"]
    spliced = sum(duration(voice_dir / f"{c}.wav") for c in clips)
    text = " ".join(voice.CLIPS[c] for c in clips)
    with tempfile.TemporaryDirectory() as folder:
        sentence = Path(folder) / "whole.wav"
        subprocess.run(["espeak-ng", "-v", "es", "-w", str(sentence), "--", text], check=True)
        whole = duration(sentence)
    assert spliced < whole * 1.2, (spliced, whole)


def test_every_clip_of_the_catalogue_is_on_disk_with_its_text(voice_dir: Path) -> None:
    clips = read_manifest(voice_dir)["clips"]
    assert set(clips) == set(voice.CLIPS)
    for key, text in voice.CLIPS.items():
        assert clips[key]["text"] == text
        assert (voice_dir / f"{key}.wav").stat().st_size > 1000, key


def test_a_build_regenerates_only_what_changed(tmp_path: Path) -> None:
    few = {"ball-1": "el uno", "line": "¡Línea!"}
    first = build(tmp_path, engine="espeak-ng", voice="es", clips=few)
    assert (first.generated, first.kept) == (2, 0)
    again = build(tmp_path, engine="espeak-ng", voice="es", clips=few)
    assert (again.generated, again.kept) == (0, 2)
    (tmp_path / "line.wav").write_bytes(b"RIFF tampered")
    changed = build(tmp_path, engine="espeak-ng", voice="es", clips={**few, "ball-1": "el uno."})
    assert (changed.generated, changed.kept) == (2, 0)  # the altered file and the changed text
    assert json.loads((tmp_path / "manifest.json").read_text())["clips"]["ball-1"]["text"] == "el uno."


def test_the_command_reports_what_it_did(voice_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("build_voice")
    assert f"0 clips generated, {len(voice.CLIPS)} kept" in capsys.readouterr().out


@pytest.mark.django_db
def test_a_clip_is_served_as_the_file_and_nothing_else_is(voice_dir: Path) -> None:
    client = Client()
    response = client.get("/voice/ball-45.wav")
    assert response.status_code == 200
    assert response["Content-Type"] == "audio/wav"
    assert response.getvalue() == (voice_dir / "ball-45.wav").read_bytes()
    for bad in (
        "/voice/ball-91.wav",
        "/voice/manifest.wav",
        "/voice/..%2Fmanifest.json.wav",
        "/voice/.lock.wav",
    ):
        assert client.get(bad).status_code == 404, bad


def said(keys: list[str]) -> str:
    return " ".join(voice.CLIPS[k] for k in keys)


def test_the_first_sale_of_a_session_announces_the_series_and_the_close_the_prizes_in_voice(
    voice_dir: Path,
    session: GameSession,
    room: Room,
    manual_game: Game,
    card_series: CardSeries,
    caller: User,
    cashier: User,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    published: list[Any] = []
    monkeypatch.setattr("halls.events.publish", published.append)
    with django_capture_on_commit_callbacks(execute=True):
        game = games.open_sales(game=manual_game, actor=caller)
    opened = next(e for e in published if e.type == "game.sales_opened")
    assert opened.data["offered"] == [{"series": "A", "face_value": "2.00", "cards": 60}]
    assert said(opened.data["voice"]) == "Series a la venta: serie uno valor facial dos euros"
    assert game.announcement["offered"] == opened.data["offered"]

    sales.sell_range(game=game, series=card_series, first=1, last=12, actor=cashier)
    game = games.close_sales(game=game, actor=caller)
    assert game.announcement["offered"] == opened.data["offered"]  # kept with the sales announcement
    assert said(game.announcement["voice"]) == (
        "Cartones vendidos doce del número uno al doce de las series en juego. "
        "Premio de línea: dos euros con cuarenta céntimos Premio de bingo: doce euros"
    )
    for key in [*game.announcement["voice"], *opened.data["voice"]]:
        assert (voice_dir / f"{key}.wav").is_file(), key

    # The session's next game: no series announcement (said once, before the first sale).
    games.start_draw(game=game, actor=caller)
    games.void_game(game=game, actor=caller, reason="test")
    second = games.create_game(room=room, actor=caller, draw_source="manual")
    published.clear()
    with django_capture_on_commit_callbacks(execute=True):
        second = games.open_sales(game=second, actor=caller)
    opened = next(e for e in published if e.type == "game.sales_opened")
    assert (opened.data["offered"], opened.data["voice"]) == ([], [])
    assert "offered" not in second.announcement
