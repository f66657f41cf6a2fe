"""``/health/``: is this installation able to run its games? (django-health-check; one line per check,
JSON with ``?format=json`` or ``Accept: application/json``, HTTP 500 when one fails so ``curl -f`` and
orchestrators read it as is).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from datetime import timedelta
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext
from health_check.base import HealthCheck
from health_check.checks import Database
from health_check.exceptions import ServiceUnavailable
from health_check.views import HealthCheckView

from bingo.electronic.services import games as electronic_games
from bingo.traditional.services import draw
from bingo.traditional.tasks import REAPER_HEARTBEAT
from halls import heartbeat

ROUND_TRIP_TYPE = "health.probe"


@dataclasses.dataclass
class ChannelLayer(HealthCheck):
    """A message through the channel layer and back, within `timeout` (screens, machines and the console all
    depend on the layer; embedded, it is the in-memory one)."""

    timeout: timedelta = dataclasses.field(default=timedelta(seconds=3), repr=False)

    async def run(self) -> None:
        layer = get_channel_layer()
        if layer is None:
            raise ServiceUnavailable(gettext("No channel layer is configured."))
        channel = await layer.new_channel("health.")
        token = uuid.uuid4().hex
        receiving = asyncio.ensure_future(layer.receive(channel))
        try:
            # The pub/sub layer subscribes when the receive starts: a message sent before is not heard,
            # so it is sent again until it arrives.
            async with asyncio.timeout(self.timeout.total_seconds()):
                while True:
                    await layer.send(channel, {"type": ROUND_TRIP_TYPE, "token": token})
                    done, _ = await asyncio.wait([receiving], timeout=0.2)
                    if done:
                        break
        except TimeoutError as exc:
            raise ServiceUnavailable(
                gettext("A message sent through the channel layer did not come back.")
            ) from exc
        finally:
            if not receiving.done():
                receiving.cancel()
        message = receiving.result()
        if message.get("token") != token:
            raise ServiceUnavailable(gettext("The channel layer returned another message."))


@dataclasses.dataclass
class Beat(HealthCheck):
    """The reaper's heartbeat is younger than ``HALL_HEALTH_BEAT_STALE_SECONDS``: beat schedules it and a
    worker runs it, so both run (embedded, the worker inside the server process writes it)."""

    def run(self) -> None:
        stale_after = float(settings.HALL_HEALTH_BEAT_STALE_SECONDS)
        try:
            last = heartbeat.last(REAPER_HEARTBEAT)
        except Exception as exc:
            raise ServiceUnavailable(gettext("The heartbeat could not be read.")) from exc
        if last is None:
            raise ServiceUnavailable(gettext("Beat has not run the stalled-draw reaper yet."))
        age = time.time() - last
        if age > stale_after:
            raise ServiceUnavailable(
                gettext("Beat last ran the stalled-draw reaper %(age)s s ago.") % {"age": format(age, ".0f")}
            )


def _stalled_games() -> list[tuple[int | str, int]]:
    """Bingo's RNG draws and electronic bingo's ("E<id>") stalled past the allowance."""
    extra = timedelta(seconds=float(settings.HALL_HEALTH_DRAW_STALL_SECONDS))
    when = timezone.now() - extra
    found: list[tuple[int | str, int]] = list(draw.stalled_draws(now=when))
    found += [(f"E{game_id}", ordinal) for game_id, ordinal in electronic_games.stalled_draws(now=when)]
    return found


@dataclasses.dataclass
class StalledDraws(HealthCheck):
    """No RNG draw waits for its next ball past its pace, the reaper's grace and
    ``HALL_HEALTH_DRAW_STALL_SECONDS`` more: the reaper re-enqueues within its grace, so past that the
    draws are not being served."""

    async def run(self) -> None:
        stalled = await database_sync_to_async(_stalled_games)()
        if stalled:
            games = ", ".join(str(game_id) for game_id, _ in stalled[:10])
            raise ServiceUnavailable(
                gettext("%(count)s draws get no ball (games %(games)s).")
                % {"count": len(stalled), "games": games}
            )


@dataclasses.dataclass
class Redis(HealthCheck):
    """A PING to the broker's and channel layer's Redis."""

    timeout: timedelta = dataclasses.field(default=timedelta(seconds=3), repr=False)

    async def run(self) -> None:
        from halls.redis_clients import async_client

        client = async_client(socket_timeout=self.timeout.total_seconds(), socket_connect_timeout=2)
        try:
            await client.ping()
        except Exception as exc:
            raise ServiceUnavailable(gettext("Redis does not answer.")) from exc
        finally:
            await client.aclose()


def checks() -> list[Any]:
    found: list[Any] = [Database, ChannelLayer, Beat, StalledDraws]
    if settings.REDIS_URL:  # embedded there is no Redis to PING
        found.insert(1, Redis)
    return found


class HallHealthView(HealthCheckView):
    """The checks above; which of them run is decided per request (Redis only where there is one)."""

    def get_checks(self) -> Any:
        self.checks = checks()
        return super().get_checks()
