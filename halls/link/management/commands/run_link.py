"""The installation's link process: a venue's outbox to the central and the central's streams back
(halls.link.transport), its notices to the gaming authority, and the feed to the regulator's node (a venue
or a central). Long-running (deploy/systemd/hall-link.service); exits cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from halls.errors import DomainError
from halls.link.services import venue_side
from halls.link.transport import (
    AuthorityConfig,
    AuthoritySender,
    FeedConfig,
    FeedSender,
    Link,
    LinkConfig,
)

log = logging.getLogger("hall.link")


class Command(BaseCommand):
    help = (
        "Run this installation's link: a venue's to the central (HALL_CENTRAL_URL) and its notices to the "
        "gaming authority (HALL_AUTHORITY_URL), and the feed to the regulator's node (HALL_REGULATOR_URL, "
        "a venue or a central), each when set, until SIGTERM."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.HALL_ROLE not in ("venue", "central"):
            raise CommandError(
                f"HALL_ROLE={settings.HALL_ROLE}: the link process runs at a venue or a central."
            )
        feed = _feed_config()
        authority = _authority_config() if settings.HALL_ROLE == "venue" else None
        link = _link_config() if settings.HALL_ROLE == "venue" and settings.HALL_CENTRAL_URL else None
        if link is None and authority is None and feed is None:
            if settings.HALL_ROLE == "central":
                raise CommandError("A central's link process sends the feed: set HALL_REGULATOR_URL.")
            raise CommandError(
                "Nothing to link: set HALL_CENTRAL_URL (a network's venue), HALL_AUTHORITY_URL or "
                "HALL_REGULATOR_URL."
            )
        if link is not None:
            sequence = venue_side.say_hello(venue_id=link.venue_id)
            self.stdout.write(
                f"run_link: venue {settings.HALL_LINK_VENUE} to {settings.HALL_CENTRAL_URL}"
                f" (its hello is message {sequence})"
            )
        if authority is not None:
            self.stdout.write(f"run_link: notices to the authority at {authority.url}")
        if feed is not None:
            self.stdout.write(f"run_link: the feed to the regulator's node at {feed.url}")
        self.stdout.flush()
        asyncio.run(self._run(link, authority, feed))
        self.stdout.write("run_link: stopped")

    async def _run(
        self, config: LinkConfig | None, authority: AuthorityConfig | None, feed: FeedConfig | None
    ) -> None:
        link = Link(config) if config is not None else None
        sender = AuthoritySender(authority) if authority is not None else None
        feeder = FeedSender(feed) if feed is not None else None
        loops = [each for each in (link, sender, feeder) if each is not None]
        loop = asyncio.get_running_loop()

        def stop() -> None:
            for each in loops:
                each.stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)
        await asyncio.gather(*(each.run() for each in loops))
        if link is not None:
            log.info("link stopped: %d messages sent, %d entries applied", link.sent, link.applied)
        if sender is not None:
            log.info("authority sender stopped: %d notices sent", sender.sent)
        if feeder is not None:
            log.info("feed sender stopped: %d messages sent to the regulator's node", feeder.sent)


def _link_config() -> LinkConfig:
    missing = [
        name
        for name in ("HALL_LINK_VENUE", "HALL_LINK_KEY", "HALL_LINK_SECRET")
        if not getattr(settings, name)
    ]
    if missing:
        raise CommandError(
            f"The link needs {', '.join(missing)} (from the central's `manage.py link_credential`)."
        )
    try:
        venue_id = venue_side.local_venue_id(settings.HALL_LINK_VENUE)
    except DomainError as refusal:
        raise CommandError(refusal.message) from refusal
    return LinkConfig(
        central_url=settings.HALL_CENTRAL_URL,
        key=settings.HALL_LINK_KEY,
        secret=settings.HALL_LINK_SECRET,
        venue_id=venue_id,
        batch=settings.HALL_LINK_BATCH,
        poll_seconds=settings.HALL_LINK_POLL_SECONDS,
        heartbeat_seconds=settings.HALL_LINK_HEARTBEAT_SECONDS,
        catchup_seconds=settings.HALL_LINK_CATCHUP_SECONDS,
        backoff_max_seconds=settings.HALL_LINK_BACKOFF_MAX_SECONDS,
        connect_timeout=settings.HALL_LINK_CONNECT_TIMEOUT,
        timeout=settings.HALL_LINK_TIMEOUT,
    )


def _authority_config() -> AuthorityConfig | None:
    """The authority sender's settings, None when HALL_AUTHORITY_URL is not set."""
    if not settings.HALL_AUTHORITY_URL:
        return None
    return AuthorityConfig(
        url=settings.HALL_AUTHORITY_URL,
        token=settings.HALL_AUTHORITY_TOKEN,
        backoff_max_seconds=settings.HALL_LINK_BACKOFF_MAX_SECONDS,
        connect_timeout=settings.HALL_LINK_CONNECT_TIMEOUT,
        timeout=settings.HALL_LINK_TIMEOUT,
    )


def _feed_config() -> FeedConfig | None:
    """The feed sender's settings, None when HALL_REGULATOR_URL is not set."""
    if not settings.HALL_REGULATOR_URL:
        return None
    return FeedConfig(
        url=settings.HALL_REGULATOR_URL,
        batch=settings.HALL_FEED_BATCH,
        poll_seconds=settings.HALL_LINK_POLL_SECONDS,
        heartbeat_seconds=settings.HALL_FEED_HEARTBEAT_SECONDS,
        backoff_max_seconds=settings.HALL_LINK_BACKOFF_MAX_SECONDS,
        connect_timeout=settings.HALL_LINK_CONNECT_TIMEOUT,
        timeout=settings.HALL_LINK_TIMEOUT,
    )
