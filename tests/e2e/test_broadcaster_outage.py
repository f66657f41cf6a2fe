"""The machines' progressive broadcaster (`manage.py broadcast_progressives`, a real process) outlives a
30 s Redis outage: the link group hears its levels again within seconds of Redis returning, with nobody
restarting anything.

The listener is what a web process runs for its machines' sockets: the Redis pub/sub channel layer,
subscribed to the link group (machines.floor), here in this process on the private Redis
(tests/e2e/redis_support.py) that the test kills and restarts on the same port.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from channels_redis.pubsub import RedisPubSubChannelLayer
from django.conf import settings

from halls.models import Venue
from machines.services import broadcast
from tests.e2e.celery_support import database_url
from tests.e2e.machines_support import link_floor
from tests.e2e.redis_support import PrivateRedis

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

OUTAGE_SECONDS = 30.0
HEARD_AGAIN_WITHIN = 10.0


Heard = list[tuple[float, dict[str, Any]]]


async def listen(layer: RedisPubSubChannelLayer, group: str, heard: Heard) -> None:
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    while True:
        message = await layer.receive(channel)
        heard.append((time.monotonic(), json.loads(message["text"])))


async def outage(
    redis_server: PrivateRedis, group_id: int, prefix: str, proc: subprocess.Popen[bytes]
) -> float:
    layer = RedisPubSubChannelLayer(hosts=[{"address": redis_server.url}], prefix=prefix)
    heard: Heard = []
    listener = asyncio.create_task(listen(layer, broadcast.channel_group(group_id), heard))
    try:
        deadline = time.monotonic() + 30
        while len(heard) < 8:  # two seconds of broadcasts
            assert time.monotonic() < deadline, "no broadcast heard"
            await asyncio.sleep(0.1)
        redis_server.kill()
        gone = time.monotonic()
        await asyncio.sleep(OUTAGE_SECONDS)
        assert proc.poll() is None, "the broadcaster exited during the outage"
        assert not [at for at, _ in heard if at > gone + 1], "heard a broadcast with Redis gone"
        redis_server.start()
        back = time.monotonic()
        while not [at for at, _ in heard if at > back]:
            assert time.monotonic() < back + HEARD_AGAIN_WITHIN + 10, "no broadcast after Redis returned"
            await asyncio.sleep(0.05)
        first = min(at for at, _ in heard if at > back) - back
        await asyncio.sleep(2)
        # And it keeps its cadence (0.25 s) after: about 8 in two seconds.
        assert len([at for at, _ in heard if at > back + first]) >= 5
        return first
    finally:
        listener.cancel()
        await asyncio.gather(listener, return_exceptions=True)
        await layer.flush()


def test_the_broadcaster_survives_a_redis_outage(venue: Venue, operator: Any, tmp_path: Path) -> None:
    floor = link_floor(venue, operator, 2)
    redis_server = PrivateRedis(tmp_path)
    redis_server.start()
    prefix = f"e2e-bcast-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_server.url,
        "CHANNEL_PREFIX": prefix,
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("TEST_DATABASE_NAME", None)
    log_path = tmp_path / "broadcaster.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "broadcast_progressives"],
            cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        first = asyncio.run(outage(redis_server, floor.group.pk, prefix, proc))
        assert proc.poll() is None, log_path.read_text(errors="replace")[-3000:]
        assert first < HEARD_AGAIN_WITHIN, f"heard again {first:.1f} s after Redis returned"
        print(f"broadcasts heard again {first:.2f} s after Redis returned")
    finally:
        proc.terminate()
        proc.wait(15)
        redis_server.stop()
