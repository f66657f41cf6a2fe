"""The caller's voice on disk: every clip of bingo.traditional.voice.CLIPS as a WAV file, generated offline
(espeak-ng).

`build` runs at install time (`manage.py build_voice`, `make voice`; `make test` calls it; the demo runs it in
the background, so it serves at once), never inside a game's play: a screen only ever fetches files this
wrote, and one that asks for a clip not made yet hears nothing for it (a 404: the player skips it). The
balls and fixed announcements are made first, the numbers 0…999 last; `progress.json` says how far a build
has come (`progress`: the setup page and the caller console show it), and the manifest is written as it goes,
so a build stopped half-way goes on from where it was. The directory holds one
`<key>.wav` per clip and `manifest.json`, which records for each clip the exact text, the engine and voice it
was generated with, how it was processed (PROCESS: its silences trimmed) and the file's SHA-256, so a run only
regenerates what changed and a test can tell which words a file says; a clip the catalogue dropped is deleted.
Not committed: about 75 MB of WAV (1 225 clips, a thousand of them the numbers 0…999), regenerated identically
(espeak-ng is deterministic) from Debian's package by scripts/ensure_voice.sh.
"""

from __future__ import annotations

import array
import fcntl
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import wave
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bingo.traditional.voice import CLIPS

MANIFEST = "manifest.json"
PROGRESS = "progress.json"
# Progress and the manifest are written every this many clips (and at the end).
CHECKPOINT = 25
KEY_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")

# What is done to the engine's output, recorded per clip (a change here regenerates every clip). espeak-ng
# ends each clip with about 0.3 s of silence and starts it with 0.04 s: clips played one after another then
# sounded word by word, with a gap at each joint. Each clip keeps 10 ms before its first sound and 60 ms
# after its last, or a sentence's pause (0.25 s) after a text ending in . : ? or !.
PROCESS = "trim-1"
SILENCE = 300  # of 32767: below this a 16-bit sample is silence
LEAD_SECONDS = 0.01
TAIL_SECONDS = 0.06
PAUSE_SECONDS = 0.25


class VoiceBuildError(RuntimeError):
    pass


@dataclass(frozen=True)
class Progress:
    """How far the clips are: ``state`` "ready" (every clip made), "building" (``made`` of ``total`` so far),
    "missing" (no build has run: ``made`` clips found), or "failed" (``error`` says why)."""

    state: str
    made: int
    total: int
    error: str = ""


@dataclass(frozen=True)
class BuildReport:
    generated: int
    kept: int
    directory: Path


def clip_file(directory: Path, key: str) -> Path | None:
    """The file of a clip key, or None for a key that is not a clip's (never a path outside `directory`)."""
    if not KEY_RE.match(key) or key not in CLIPS:
        return None
    return directory / f"{key}.wav"


def read_manifest(directory: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"clips": {}}
    return data


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def trim(path: Path, text: str) -> None:
    """Cut the silence before and after the speech of a 16-bit mono WAV, in place (see PROCESS)."""
    with wave.open(str(path), "rb") as wav:
        params = wav.getparams()
        samples = array.array("h", wav.readframes(wav.getnframes()))
    if params.sampwidth != 2 or params.nchannels != 1:
        raise VoiceBuildError(f"{path.name}: not 16-bit mono audio")
    if sys.byteorder != "little":
        samples.byteswap()
    first = next((i for i, v in enumerate(samples) if abs(v) > SILENCE), None)
    if first is None:
        raise VoiceBuildError(f"{path.name}: no speech in the clip")
    last = len(samples) - 1 - next(i for i, v in enumerate(reversed(samples)) if abs(v) > SILENCE)
    rate = params.framerate
    tail = PAUSE_SECONDS if text.rstrip()[-1:] in {".", ":", "?", "!"} else TAIL_SECONDS
    start = max(0, first - int(LEAD_SECONDS * rate))
    end = min(len(samples), last + 1 + int(tail * rate))
    kept = samples[start:end]
    if sys.byteorder != "little":
        kept.byteswap()
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(kept.tobytes())


def _synthesise(engine: str, voice: str, text: str, target: Path) -> None:
    # Written beside the target, then renamed: a screen never fetches a half-written file.
    fd, tmp = tempfile.mkstemp(suffix=".wav", dir=target.parent)
    os.close(fd)
    try:
        subprocess.run(  # noqa: S603 (a fixed engine from the settings, the text as one argument)
            [engine, "-v", voice, "-w", tmp, "--", text], check=True, capture_output=True, timeout=30
        )
        if Path(tmp).stat().st_size <= 44:  # a bare WAV header: the engine said nothing
            raise VoiceBuildError(f"{engine} produced no audio for {text!r}")
        trim(Path(tmp), text)
        os.replace(tmp, target)
    except FileNotFoundError as exc:
        raise VoiceBuildError(
            f"{engine} is not installed (scripts/ensure_voice.sh installs espeak-ng)"
        ) from exc
    except subprocess.CalledProcessError as exc:
        raise VoiceBuildError(f"{engine} failed on {text!r}: {exc.stderr.decode(errors='replace')}") from exc
    finally:
        Path(tmp).unlink(missing_ok=True)


def build(
    directory: Path, *, engine: str, voice: str, clips: Mapping[str, str] = CLIPS, force: bool = False
) -> BuildReport:
    """Generate every clip whose text, engine or voice changed (or whose file is missing or altered).
    One build at a time per directory (a lock file): parallel test workers may all ask for it."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build(directory, engine=engine, voice=voice, clips=clips, force=force)


def build_order(clips: Mapping[str, str]) -> list[str]:
    """The clips in the order they are made: what a game says first (balls, announcements, words), the
    numbers 0…999 (only ever parts of the close of sales' figures) last."""
    return sorted(clips, key=lambda key: key.startswith("num-"))


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def write_progress(directory: Path, state: str, made: int, total: int, error: str = "") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    _write_json(directory / PROGRESS, {"state": state, "made": made, "total": total, "error": error})


def progress(directory: Path, clips: Mapping[str, str] = CLIPS) -> Progress:
    """How far the clips in `directory` are (see Progress). Without a progress file (clips made before it
    existed, or none yet): ready if every clip's file is there, else missing with the files found."""
    try:
        data = json.loads((directory / PROGRESS).read_text(encoding="utf-8"))
        return Progress(
            state=str(data["state"]),
            made=int(data["made"]),
            total=int(data["total"]),
            error=str(data.get("error", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        pass
    made = sum(1 for key in clips if (directory / f"{key}.wav").is_file())
    return Progress(state="ready" if made == len(clips) else "missing", made=made, total=len(clips))


def _build(directory: Path, *, engine: str, voice: str, clips: Mapping[str, str], force: bool) -> BuildReport:
    old = read_manifest(directory).get("clips", {})
    entries: dict[str, dict[str, str]] = {}
    generated = kept = 0
    total = len(clips)
    write_progress(directory, "building", 0, total)
    for done, key in enumerate(build_order(clips)):
        if done and done % CHECKPOINT == 0:
            # What is made so far is kept (a build stopped here goes on from it), then the count.
            _write_manifest(directory, engine, voice, {**old, **entries})
            write_progress(directory, "building", done, total)
        text = clips[key]
        target = directory / f"{key}.wav"
        before = old.get(key)
        wanted = {"text": text, "engine": engine, "voice": voice, "process": PROCESS}
        if (
            not force
            and before
            and all(before.get(k) == v for k, v in wanted.items())
            and target.exists()
            and _sha256(target) == before.get("sha256")
        ):
            entries[key] = before
            kept += 1
            continue
        try:
            _synthesise(engine, voice, text, target)
        except VoiceBuildError as exc:
            _write_manifest(directory, engine, voice, {**old, **entries})
            write_progress(directory, "failed", len(entries), total, str(exc))
            raise
        entries[key] = {**wanted, "file": target.name, "sha256": _sha256(target)}
        generated += 1
    for key in set(old) - set(entries):  # a clip the catalogue no longer has (the old word clips)
        if KEY_RE.match(key):
            (directory / f"{key}.wav").unlink(missing_ok=True)
    _write_manifest(directory, engine, voice, entries)
    write_progress(directory, "ready", total, total)
    return BuildReport(generated=generated, kept=kept, directory=directory)


def _write_manifest(directory: Path, engine: str, voice: str, entries: Mapping[str, Any]) -> None:
    manifest = {"engine": engine, "voice": voice, "process": PROCESS, "clips": dict(entries)}
    _write_json(directory / MANIFEST, manifest)
