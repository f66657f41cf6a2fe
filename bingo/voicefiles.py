"""The caller's voice on disk: every clip of bingo.voice.CLIPS as a WAV file, generated offline (espeak-ng).

`build` runs at install time (`manage.py build_voice`, `make voice`; `make demo` and `make test` call it),
never while a game is played: a screen only ever fetches files this wrote. The directory holds one
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

from bingo.voice import CLIPS

MANIFEST = "manifest.json"
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


def _build(directory: Path, *, engine: str, voice: str, clips: Mapping[str, str], force: bool) -> BuildReport:
    old = read_manifest(directory).get("clips", {})
    entries: dict[str, dict[str, str]] = {}
    generated = kept = 0
    for key, text in clips.items():
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
        _synthesise(engine, voice, text, target)
        entries[key] = {**wanted, "file": target.name, "sha256": _sha256(target)}
        generated += 1
    for key in set(old) - set(entries):  # a clip the catalogue no longer has (the old word clips)
        if KEY_RE.match(key):
            (directory / f"{key}.wav").unlink(missing_ok=True)
    manifest = {"engine": engine, "voice": voice, "process": PROCESS, "clips": entries}
    tmp = directory / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, directory / MANIFEST)
    return BuildReport(generated=generated, kept=kept, directory=directory)
