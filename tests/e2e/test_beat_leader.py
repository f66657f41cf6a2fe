"""Beat as one leader among two (issue 30): two real beats on celery-redbeat (config.beat) and a worker.
The first holds the Redis lock and sends; the second waits and sends nothing. The leader is killed with
SIGKILL: the other takes the lock within its timeout (HALL_BEAT_LOCK_SECONDS plus one poll) and goes on
from the schedule's state in Redis: every short entry (the electronic tick, the stalled-draw reaper, the
network tick) runs again after the kill, the reaper's heartbeat (the worker ran what the new leader sent)
is fresh, and an hourly entry that ran before the kill is not run again (no run doubled by the change)."""

from __future__ import annotations

import json
import os
import signal
import time
from datetime import datetime

import pytest
import redis
from django.conf import settings
from django.utils import timezone
from redbeat.decoder import RedBeatJSONDecoder

from tests.e2e.celery_support import START_TIMEOUT, CeleryProcesses, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

LOCK_SECONDS = 5
SHORT = ("electronic-tick", "reap-stalled-draws", "tick-network-games")
HOURLY = "purge-door-visits"
ACQUIRED = "beat: Acquired lock"


def last_run(client: redis.Redis, procs: CeleryProcesses, entry: str) -> datetime | None:
    meta = client.hget(procs.env["HALL_REDBEAT_PREFIX"] + entry, "meta")
    if meta is None:
        return None
    value = json.loads(meta, cls=RedBeatJSONDecoder).get("last_run_at")
    return value if isinstance(value, datetime) else None


def test_the_other_beat_takes_the_schedule_when_the_leader_dies(celery_procs: CeleryProcesses) -> None:
    celery_procs.env.update({"HALL_BEAT_LOCK_SECONDS": str(LOCK_SECONDS), "HALL_REAPER_SECONDS": "1"})
    client = redis.Redis.from_url(str(settings.REDIS_URL))
    celery_procs.start_worker("worker")
    leader = celery_procs.start_beat("beat-1")
    celery_procs.wait_leading("beat-1")
    wait_for(lambda: last_run(client, celery_procs, HOURLY), 15, "the hourly entry's run", celery_procs.logs)
    hourly = last_run(client, celery_procs, HOURLY)

    celery_procs.start_beat("beat-2")
    started = lambda: "beat: Starting" in celery_procs.log("beat-2")  # noqa: E731
    wait_for(started, START_TIMEOUT, "beat-2 up", celery_procs.logs)
    time.sleep(3.0)  # the standby: waiting for the lock, sending nothing
    standby = celery_procs.log("beat-2")
    assert ACQUIRED not in standby and "Sending due task" not in standby, standby

    os.kill(leader.pid, signal.SIGKILL)
    killed = time.monotonic()
    killed_at = timezone.now()
    leader.wait(5)
    wait_for(lambda: ACQUIRED in celery_procs.log("beat-2"), 20, "beat-2 leading", celery_procs.logs)
    took = time.monotonic() - killed
    print(f"\nBEAT TAKEOVER after {took:.2f} s (lock {LOCK_SECONDS} s)")
    assert took <= LOCK_SECONDS + 2.0, celery_procs.logs()

    # Every short entry runs again after the kill, sent by the new leader; the worker ran the reaper.
    def resumed() -> bool:
        runs = [last_run(client, celery_procs, entry) for entry in SHORT]
        return all(run is not None and run > killed_at for run in runs)

    wait_for(resumed, 10, "the short entries sent after the kill", celery_procs.logs)
    beat = client.get(celery_procs.redis_key("heartbeat", "reaper"))
    wait_for(
        lambda: float(client.get(celery_procs.redis_key("heartbeat", "reaper")) or 0) > killed_at.timestamp(),
        10,
        "the reaper run after the kill",
        celery_procs.logs,
    )
    assert beat is not None
    # The hourly entry that ran before the kill is not run again by the new leader.
    assert last_run(client, celery_procs, HOURLY) == hourly
    assert f"Sending due task {HOURLY}" not in celery_procs.log("beat-2")
    client.close()
