"""``/health/`` (config.health) against the real PostgreSQL, Redis and channel layer, and what each check
says when its part fails: a stale beat, a stalled draw, an unreachable Redis or channel layer."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from bingo.traditional import tasks
from bingo.traditional.models import Game
from halls import heartbeat
from tests.bingo.traditional.test_draw_step import rng_game
from tests.ports import free_port

pytestmark = pytest.mark.django_db(transaction=True)

ALL = {"Database", "Redis", "ChannelLayer", "Beat", "StalledDraws"}


@pytest.fixture(autouse=True)
def isolated_layer(settings: Any) -> None:
    """The layer (and the heartbeat key) under a prefix of this test's own."""
    layer = settings.CHANNEL_LAYERS["default"]
    settings.CHANNEL_LAYERS = {
        "default": {**layer, "CONFIG": {**layer["CONFIG"], "prefix": f"test-health-{uuid.uuid4().hex[:12]}"}}
    }


def health(client: Client) -> tuple[int, dict[str, str]]:
    response = client.get("/health/", HTTP_ACCEPT="application/json")
    answers = {name.split("(")[0]: text for name, text in response.json().items()}
    return response.status_code, answers


def test_a_running_hall_is_healthy_and_says_so_in_json(client: Client) -> None:
    tasks.reap_stalled_draws()  # as beat would, on a worker: writes the heartbeat
    status, answers = health(client)
    assert (status, answers) == (200, dict.fromkeys(ALL, "OK"))
    # ?format=json for a probe that sends no Accept header.
    assert client.get("/health/?format=json").json() == dict.fromkeys(
        client.get("/health/", HTTP_ACCEPT="application/json").json(), "OK"
    )


def test_a_stale_or_missing_beat_is_unhealthy(client: Client, settings: Any) -> None:
    status, answers = health(client)
    assert status == 500 and "has not run" in answers["Beat"]
    heartbeat.beat(tasks.REAPER_HEARTBEAT, at=time.time() - settings.HALL_HEALTH_BEAT_STALE_SECONDS - 5)
    status, answers = health(client)
    assert status == 500 and "ago" in answers["Beat"]
    assert {k for k, v in answers.items() if v == "OK"} == ALL - {"Beat"}


def test_a_draw_with_no_ball_far_past_its_pace_is_unhealthy(
    client: Client, session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr(
        "bingo.traditional.services.draw.dispatch", lambda *a, **k: None
    )  # no broker: nobody draws
    game = rng_game(room, caller, cashier, card_series, ball_set)
    tasks.reap_stalled_draws()
    assert health(client)[0] == 200  # just started: its first ball is not late
    grace = settings.HALL_DRAW_STALL_GRACE_SECONDS
    # Late by less than the reaper's grace plus the health margin: the reaper's business, not yet unhealthy.
    Game.objects.filter(pk=game.pk).update(draw_started_at=timezone.now() - timedelta(seconds=2 + grace + 5))
    assert health(client)[0] == 200
    late = 2 + grace + settings.HALL_HEALTH_DRAW_STALL_SECONDS + 5
    Game.objects.filter(pk=game.pk).update(draw_started_at=timezone.now() - timedelta(seconds=late))
    status, answers = health(client)
    assert status == 500 and f"games {game.pk}" in answers["StalledDraws"]


def test_unreachable_redis_and_channel_layer_are_unhealthy(client: Client, settings: Any) -> None:
    tasks.reap_stalled_draws()
    dead = f"redis://127.0.0.1:{free_port()}/0"
    layer = settings.CHANNEL_LAYERS["default"]
    config = {**layer["CONFIG"], "hosts": [{"address": dead}]}
    settings.CHANNEL_LAYERS = {"default": {**layer, "CONFIG": config}}
    settings.REDIS_URL = dead
    status, answers = health(client)
    assert status == 500
    assert answers["Redis"] == "Unavailable: Redis does not answer."
    assert answers["ChannelLayer"] != "OK"
    assert answers["Database"] == answers["StalledDraws"] == "OK"


def test_embedded_runs_the_checks_that_apply(client: Client, settings: Any) -> None:
    settings.REDIS_URL = None
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "halls.channel_layer.ThreadSafeInMemoryChannelLayer"}}
    tasks.reap_stalled_draws()  # the embedded worker, in this process
    status, answers = health(client)
    assert (status, answers) == (200, dict.fromkeys(ALL - {"Redis"}, "OK"))
