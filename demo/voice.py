"""The caller's voice made in the background while the demo serves (issue 26: it took 2.5 of the 7.7 minutes
from clone to first page when `make demo` made it first).

`start_voice_build` runs scripts/ensure_voice.sh (espeak-ng installed from Debian when root, then `manage.py
build_voice`) in a process of its own at low priority, and returns its stop. The build only makes what is
missing or changed (bingo.voicefiles: once; a later start finds the clips made and is done in a moment),
balls and announcements first; it writes its progress beside the clips, which the setup page and the caller
console show. A screen plays the clips that exist and stays silent for the rest, so the demo needs none of it
to start. If the script fails before the build starts (no espeak-ng and not root), that is written as the
build's progress too, with the script's last words. ``HALL_DEMO_VOICE=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from bingo import voicefiles

SCRIPT = "scripts/ensure_voice.sh"
LOG = "voice-build.log"
NICENESS = 10  # the web server and the draws come first on a small machine
STOP_TIMEOUT = 5.0


def enabled() -> bool:
    return os.environ.get("HALL_DEMO_VOICE", "1") != "0"


def start_voice_build(say: Callable[[str], None], *, command: list[str] | None = None) -> Callable[[], None]:
    """Start the build in the background (`command`: the script by default); returns its stop."""
    directory = Path(settings.HALL_VOICE_DIR)
    settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
    log_path = Path(settings.VAR_DIR) / LOG
    log = log_path.open("wb")
    proc = subprocess.Popen(  # noqa: S603 (the project's own script)
        command or ["bash", SCRIPT],
        cwd=settings.BASE_DIR,
        env={**os.environ, "PY": sys.executable, "HALL_VOICE_DIR": str(directory)},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its group (the script, build_voice, espeak-ng) is stopped as one
        preexec_fn=lambda: os.nice(NICENESS),  # only a system call between fork and exec
    )
    say(f"The caller's voice is being made in the background (log: {log_path}); screens play what exists.")
    stopping = threading.Event()

    def watch() -> None:
        code = proc.wait()
        log.close()
        if code == 0 or stopping.is_set():
            return
        after = voicefiles.progress(directory)
        if after.state != "failed":  # the script failed before the build could say why
            tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
            voicefiles.write_progress(directory, "failed", after.made, after.total, " ".join(tail))

    thread = threading.Thread(target=watch, name="demo-voice", daemon=True)
    thread.start()

    def stop() -> None:
        stopping.set()
        if proc.poll() is None:
            _signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
        thread.join(STOP_TIMEOUT)

    return stop


def _signal_group(proc: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(proc.pid, signum)
