"""The probe compose and systemd run (config.healthprobe) against a live server (uvicorn, PostgreSQL,
Redis): exit 0 when /health/ is all OK, 1 with the failing checks named when the beat is stale, and an
allowed Host header taken from ALLOWED_HOSTS."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from bingo.traditional import tasks
from halls import heartbeat

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def isolated(settings: Any) -> None:
    settings.ALLOWED_HOSTS = [".hall.example"]
    layer = settings.CHANNEL_LAYERS["default"]
    settings.CHANNEL_LAYERS = {
        "default": {**layer, "CONFIG": {**layer["CONFIG"], "prefix": f"e2e-health-{uuid.uuid4().hex[:10]}"}}
    }


def probe(server_url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ALLOWED_HOSTS": ".hall.example,other.example"}
    return subprocess.run(
        [sys.executable, "-m", "config.healthprobe", f"{server_url}/health/"],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip


def test_the_probe_passes_a_healthy_hall_and_names_what_fails(
    isolated: None, server_url: str, settings: Any
) -> None:
    tasks.reap_stalled_draws()
    ok = probe(server_url)
    assert (ok.returncode, ok.stderr) == (0, "")
    heartbeat.beat(tasks.REAPER_HEARTBEAT, at=time.time() - settings.HALL_HEALTH_BEAT_STALE_SECONDS - 1)
    failed = probe(server_url)
    assert failed.returncode == 1
    assert failed.stderr.startswith("Beat") and "stalled-draw reaper" in failed.stderr, failed.stderr
