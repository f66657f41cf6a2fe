"""A venue's link to the central (halls.link.transport.Link, what `manage.py run_link` runs) in a thread of
the venue's own process, for the embedded network demo; and an installation's feed to the regulator's node
(halls.link.transport.FeedSender, run_link's too) the same way.

Embedded, the channel layer and the Celery broker are in memory, one per process: the stream entries the
link applies must reach this process's screens (the prize's meter) and its worker (a simultaneous game's
entries are applied by a task). `manage.py run_link` in a process of its own does that on Redis; here the
same Link runs beside the server and the worker instead, with the same settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable

from django.conf import settings

from halls.link.services import venue_side
from halls.link.transport import FeedConfig, FeedSender, Link, LinkConfig

log = logging.getLogger("hall.link")

STOP_TIMEOUT = 10.0


def config(*, venue_id: int, key: str, secret: str) -> LinkConfig:
    return LinkConfig(
        central_url=settings.HALL_CENTRAL_URL,
        key=key,
        secret=secret,
        venue_id=venue_id,
        batch=settings.HALL_LINK_BATCH,
        poll_seconds=settings.HALL_LINK_POLL_SECONDS,
        heartbeat_seconds=settings.HALL_LINK_HEARTBEAT_SECONDS,
        catchup_seconds=settings.HALL_LINK_CATCHUP_SECONDS,
        backoff_max_seconds=settings.HALL_LINK_BACKOFF_MAX_SECONDS,
        connect_timeout=settings.HALL_LINK_CONNECT_TIMEOUT,
        timeout=settings.HALL_LINK_TIMEOUT,
    )


def start_link(link_config: LinkConfig) -> Callable[[], None]:
    """Say hello (as run_link does) and run the link in a daemon thread with its own event loop; returns
    its stop (the loops end at their next step, as on run_link's SIGTERM)."""
    venue_side.say_hello(venue_id=link_config.venue_id)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, Link] = {}

    def run() -> None:
        asyncio.set_event_loop(loop)

        async def main() -> None:
            holder["link"] = link = Link(link_config)
            started.set()
            await link.run()
            log.info("link stopped: %d messages sent, %d entries applied", link.sent, link.applied)

        try:
            loop.run_until_complete(main())
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="demo-link", daemon=True)
    thread.start()
    started.wait(STOP_TIMEOUT)

    once = threading.Lock()

    def stop() -> None:
        if not once.acquire(blocking=False):
            return  # stopped already (or being stopped by another thread)
        link = holder.get("link")
        if link is not None and thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the link has ended
                loop.call_soon_threadsafe(link.stop.set)
        thread.join(STOP_TIMEOUT)

    return stop


def feed_config() -> FeedConfig:
    """The feed sender's settings (as `manage.py run_link` reads them; HALL_REGULATOR_URL set)."""
    return FeedConfig(
        url=settings.HALL_REGULATOR_URL,
        batch=settings.HALL_FEED_BATCH,
        poll_seconds=settings.HALL_LINK_POLL_SECONDS,
        heartbeat_seconds=settings.HALL_FEED_HEARTBEAT_SECONDS,
        backoff_max_seconds=settings.HALL_LINK_BACKOFF_MAX_SECONDS,
        connect_timeout=settings.HALL_LINK_CONNECT_TIMEOUT,
        timeout=settings.HALL_LINK_TIMEOUT,
    )


def start_feed(config: FeedConfig) -> Callable[[], None]:
    """The feed to the regulator's node (halls.link.transport.FeedSender) in a daemon thread with its own
    event loop, as start_link runs the link; returns its stop."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, FeedSender] = {}

    def run() -> None:
        asyncio.set_event_loop(loop)

        async def main() -> None:
            holder["feed"] = feeder = FeedSender(config)
            started.set()
            await feeder.run()
            log.info("feed sender stopped: %d messages sent to the regulator's node", feeder.sent)

        try:
            loop.run_until_complete(main())
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="demo-feed", daemon=True)
    thread.start()
    started.wait(STOP_TIMEOUT)
    once = threading.Lock()

    def stop() -> None:
        if not once.acquire(blocking=False):
            return
        feeder = holder.get("feed")
        if feeder is not None and thread.is_alive():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(feeder.stop.set)
        thread.join(STOP_TIMEOUT)

    return stop
