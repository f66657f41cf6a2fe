"""A web process sets the cyclic collector's thresholds from HALL_WEB_GC_THRESHOLDS when config.asgi loads
(and freezes what start-up built): a full collection in a process holding a thousand terminal sockets
paused it ~100 ms, every few seconds of a sales window at Python's own thresholds."""

from __future__ import annotations

import os
import subprocess
import sys

from django.conf import settings

SHOW = "import gc, config.asgi; print(gc.get_threshold(), gc.get_freeze_count() > 0)"


def thresholds_in_a_web_process(thresholds: str | None) -> str:
    """What a process that loaded config.asgi has: its thresholds, and whether start-up is frozen."""
    env = {k: v for k, v in os.environ.items() if k != "HALL_WEB_GC_THRESHOLDS"}
    if thresholds is not None:
        env["HALL_WEB_GC_THRESHOLDS"] = thresholds
    result = subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_the_default_thresholds_are_the_hall_s_not_python_s() -> None:
    assert thresholds_in_a_web_process(None) == "(2000, 10, 1000) True"


def test_the_thresholds_come_from_the_environment() -> None:
    assert thresholds_in_a_web_process("3000,11,500") == "(3000, 11, 500) True"
