"""The venue's link process: its outbox to the central, the central's streams back (halls.link.transport).
Long-running (deploy/systemd/hall-link.service); exits cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from halls.errors import DomainError
from halls.link.services import venue_side
from halls.link.transport import AuthorityConfig, AuthoritySender, Link, LinkConfig

log = logging.getLogger("hall.link")


class Command(BaseCommand):
    help = (
        "Run this venue's link to the central (HALL_CENTRAL_URL) and its notices to the gaming authority "
        "(HALL_AUTHORITY_URL), either or both, until SIGTERM."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.HALL_ROLE != "venue":
            raise CommandError("HALL_ROLE=central: the link process runs at venue installations only.")
        authority = _authority_config()
        if authority is not None and not settings.HALL_CENTRAL_URL:
            # A venue of no network: the authority's notices only.
            self.stdout.write(f"run_link: notices to the authority at {authority.url}")
            self.stdout.flush()
            asyncio.run(self._run(None, authority))
            self.stdout.write("run_link: stopped")
            return
        missing = [
            name
            for name in ("HALL_CENTRAL_URL", "HALL_LINK_VENUE", "HALL_LINK_KEY", "HALL_LINK_SECRET")
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
        config = LinkConfig(
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
        sequence = venue_side.say_hello(venue_id=venue_id)
        self.stdout.write(
            f"run_link: venue {settings.HALL_LINK_VENUE} to {settings.HALL_CENTRAL_URL}"
            f" (its hello is message {sequence})"
        )
        self.stdout.flush()
        asyncio.run(self._run(config, authority))
        self.stdout.write("run_link: stopped")

    async def _run(self, config: LinkConfig | None, authority: AuthorityConfig | None) -> None:
        link = Link(config) if config is not None else None
        sender = AuthoritySender(authority) if authority is not None else None
        loop = asyncio.get_running_loop()

        def stop() -> None:
            for each in (link, sender):
                if each is not None:
                    each.stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)
        await asyncio.gather(*(each.run() for each in (link, sender) if each is not None))
        if link is not None:
            log.info("link stopped: %d messages sent, %d entries applied", link.sent, link.applied)
        if sender is not None:
            log.info("authority sender stopped: %d notices sent", sender.sent)


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
