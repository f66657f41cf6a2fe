"""The caller's voice made in the background while the demo serves (issue 26: it took 2.5 of the 7.7 minutes
from clone to first page when `make demo` made it first).

`start_voice_build` runs scripts/ensure_voice.sh --install-only (espeak-ng installed from Debian when root),
then `manage.py build_voice`, each in a process of its own at low priority, and returns its stop. The build
only makes what is missing or changed (bingo.traditional.voicefiles: once; a later start finds the clips made
and is
done in a moment), balls and announcements first; it writes its progress beside the clips, which the setup
page and the caller console show. A screen plays the clips that exist and stays silent for the rest, so the
demo needs none of it to start. If a step fails before the build can say why (no espeak-ng and not root),
that is written as the build's progress, with the log's last words. ``HALL_DEMO_VOICE=0`` turns it off.
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

from bingo.traditional import voicefiles

SCRIPT = "scripts/ensure_voice.sh"
LOG = "voice-build.log"
NICENESS = 10  # the web server and the draws come first on a small machine
STOP_TIMEOUT = 5.0


def enabled() -> bool:
    return os.environ.get("HALL_DEMO_VOICE", "1") != "0"


def start_voice_build(
    say: Callable[[str], None],
    *,
    commands: list[list[str]] | None = None,
    die_with_parent: Callable[[], object] | None = None,
) -> Callable[[], None]:
    """Start the build in the background; returns its stop. `commands` run one after the other while each
    succeeds (by default: the engine installed, then `manage.py build_voice`); `die_with_parent`: run in each
    child before exec, so the kernel stops it if the demo dies outright (the demo's PR_SET_PDEATHSIG hook)."""
    directory = Path(settings.HALL_VOICE_DIR)
    steps = commands or [
        ["bash", SCRIPT, "--install-only"],
        [sys.executable, "manage.py", "build_voice"],
    ]
    settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
    log_path = Path(settings.VAR_DIR) / LOG
    env = {**os.environ, "PY": sys.executable, "HALL_VOICE_DIR": str(directory)}

    def before_exec() -> None:  # only system calls between fork and exec
        os.nice(NICENESS)
        if die_with_parent is not None:
            die_with_parent()

    stopping = threading.Event()
    running: list[subprocess.Popen[bytes]] = []

    def run() -> None:
        with log_path.open("wb") as log:
            for step in steps:
                if stopping.is_set():
                    return
                proc = subprocess.Popen(  # noqa: S603 (the project's own script and command)
                    step,
                    cwd=settings.BASE_DIR,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its group (build_voice and its engine) is stopped as one
                    preexec_fn=before_exec,
                )
                running[:] = [proc]
                if proc.wait() != 0:
                    break
            else:
                return
        if stopping.is_set():
            return
        after = voicefiles.progress(directory)
        if after.state != "failed":  # it failed before the build could say why (no engine, not root)
            tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
            voicefiles.write_progress(directory, "failed", after.made, after.total, " ".join(tail))

    thread = threading.Thread(target=run, name="demo-voice", daemon=True)
    thread.start()
    say(f"The caller's voice is being made in the background (log: {log_path}); screens play what exists.")

    def stop() -> None:
        stopping.set()
        for proc in running:
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
