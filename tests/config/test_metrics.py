"""``/metrics`` (django-prometheus + halls.metrics): the hall's own metrics move with the work they
measure, and with ``PROMETHEUS_MULTIPROC_DIR`` the web process's ``/metrics`` adds up what other processes
(Celery workers, other web workers) observed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.test import Client

from bingo.traditional import tasks
from config.asgi import application
from halls import metrics as hall_metrics
from halls.models import Screen
from tests.bingo.traditional.test_draw_step import rng_game
from tests.ports import free_port

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


def sample(text: str, name: str, labels: str = "") -> float:
    """The value of one sample of the exposition text (0 when absent)."""
    pattern = re.escape(name + (f"{{{labels}}}" if labels else "")) + r" ([0-9.e+-]+)$"
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def metrics(client: Client) -> str:
    response = client.get("/metrics")
    assert response.status_code == 200
    return response.content.decode()


def test_a_draw_step_is_timed(
    client: Client, session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr("bingo.traditional.services.draw.dispatch", lambda *a, **k: None)
    game = rng_game(room, caller, cashier, card_series, ball_set)
    before = sample(metrics(client), "hall_draw_step_seconds_count")
    assert tasks.draw_next_ball(game.pk, 1) is not None
    assert tasks.draw_next_ball(game.pk, 1) is None  # a repeat is a step too (a no-op, quickly)
    assert sample(metrics(client), "hall_draw_step_seconds_count") == before + 2


async def test_open_screen_sockets_are_counted(settings: Any, screen: Screen) -> None:
    layer = settings.CHANNEL_LAYERS["default"]
    settings.CHANNEL_LAYERS = {
        "default": {**layer, "CONFIG": {**layer["CONFIG"], "prefix": f"test-met-{uuid.uuid4().hex[:12]}"}}
    }
    from asgiref.sync import sync_to_async

    async def open_screens() -> float:
        text = await sync_to_async(lambda: Client().get("/metrics").content.decode())()
        return sample(text, "hall_open_sockets", 'kind="screen"')

    before = await open_screens()
    sockets = [WebsocketCommunicator(application, f"/ws/screens/{screen.token}/") for _ in range(3)]
    for s in sockets:
        assert (await s.connect(timeout=5))[0]
    assert await open_screens() == before + 3
    for s in sockets:
        await s.disconnect()
    assert await open_screens() == before
    await get_channel_layer().flush()


def observed_in_two_processes(directory: Path) -> None:
    """Two processes (as two gunicorn workers, or two Celery pool children) each observe a draw step and a
    gateway batch into the multiprocess directory, and exit."""
    script = (
        "import django; django.setup()\n"
        "from halls import metrics\n"
        "metrics.DRAW_STEP.observe(0.02)\n"
        "metrics.GATEWAY_BATCH.observe(0.003)\n"
    )
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    for _ in range(2):
        subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, check=True, timeout=60)
    assert len(list(directory.glob("histogram_*.db"))) == 2  # one file per process


def test_metrics_of_other_processes_are_added_up(
    client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    observed_in_two_processes(tmp_path)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    text = metrics(client)
    assert sample(text, "hall_draw_step_seconds_count") == 2
    assert sample(text, "hall_draw_step_seconds_sum") == pytest.approx(0.04)
    assert sample(text, "hall_gateway_batch_seconds_count") == 2


def test_the_celery_worker_serves_its_pool_children_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    observed_in_two_processes(tmp_path)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    port = free_port()
    server = hall_metrics.serve(port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    finally:
        server.shutdown()
        server.server_close()
    assert sample(text, "hall_draw_step_seconds_count") == 2
