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
from halls.link.transport import Link, LinkConfig

log = logging.getLogger("hall.link")


class Command(BaseCommand):
    help = "Run this venue's link to the central (HALL_CENTRAL_URL) until SIGTERM."

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.HALL_ROLE != "venue":
            raise CommandError("HALL_ROLE=central: the link process runs at venue installations only.")
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
        asyncio.run(self._run(config))
        self.stdout.write("run_link: stopped")

    async def _run(self, config: LinkConfig) -> None:
        link = Link(config)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, link.stop.set)
        await link.run()
        log.info("link stopped: %d messages sent, %d entries applied", link.sent, link.applied)
