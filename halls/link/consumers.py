"""The central's socket for venue installations: ``/ws/link/`` (HALL_ROLE=central).

A thin door (DESIGN §3). At connect the venue's credential comes in the ``Authorization`` header (``Link
<key>:<secret>``, as over HTTPS); a refused one closes the handshake (403). Accepted, the socket joins the
group of every stream the venue follows (services.reach) and first says which, with each one's head:
``{"type": "follow", "streams": {"network.X": 41, "venue.7": 2}}``; then each entry committed on them is
pushed as ``{"type": "entry", "stream", "sequence", "kind", "payload"}`` (halls.link.push), at most once:
the venue catches up by sequence over HTTPS on a gap and on every reconnect.

The venue sends ``{"type": "heartbeat", "reported": <its highest outbox sequence>, "clock": <ISO>}`` every
few seconds: its "last seen" and backlog at the central, and its credential checked again (a revoked or
expired one closes the socket, 4401). Opening and closing are recorded (services.presence).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.utils.dateparse import parse_datetime

from halls.errors import DomainError
from halls.link import push
from halls.link.services import credentials, presence, reach, streams

log = logging.getLogger("hall.link")

CLOSE_REFUSED = 4401


def _open(authorization: str) -> tuple[int, dict[str, int]]:
    venue_id = credentials.from_header(authorization)
    followed = reach.followed(venue_id=venue_id)
    presence.connected(venue_id=venue_id)
    return venue_id, {stream: streams.head(stream=stream) for stream in followed}


def _heartbeat(authorization: str, venue_id: int, reported: int | None, clock: str | None) -> None:
    if credentials.from_header(authorization) != venue_id:
        raise DomainError("credential of another venue", code="bad_credential")
    presence.seen(venue_id=venue_id, reported=reported, clock=parse_datetime(clock) if clock else None)


class LinkConsumer(AsyncWebsocketConsumer):
    venue_id: int | None = None
    groups_joined: tuple[str, ...] = ()

    def _authorization(self) -> str:
        for name, value in self.scope.get("headers", []):
            if name == b"authorization":
                return str(value.decode("latin1"))
        return ""

    async def connect(self) -> None:
        if settings.HALL_ROLE != "central":
            await self.close(code=CLOSE_REFUSED)
            return
        try:
            venue_id, heads = await database_sync_to_async(_open)(self._authorization())
        except DomainError as refusal:
            log.info("link socket refused: %s", refusal.code)
            await self.close(code=CLOSE_REFUSED)
            return
        self.venue_id = venue_id
        self.groups_joined = tuple(push.group_name(stream) for stream in heads)
        for group in self.groups_joined:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()
        await self.send(text_data=json.dumps({"type": "follow", "streams": heads}))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.venue_id is None or not text_data or len(text_data) > 4096:
            return
        try:
            frame: Any = json.loads(text_data)
        except ValueError:
            return
        if not isinstance(frame, dict) or frame.get("type") != "heartbeat":
            return
        reported = frame.get("reported")
        clock = frame.get("clock")
        try:
            await database_sync_to_async(_heartbeat)(
                self._authorization(),
                self.venue_id,
                reported if isinstance(reported, int) and reported >= 0 else None,
                clock if isinstance(clock, str) else None,
            )
        except DomainError:
            await self.close(code=CLOSE_REFUSED)

    async def disconnect(self, code: int) -> None:
        for group in self.groups_joined:
            await self.channel_layer.group_discard(group, self.channel_name)
        if self.venue_id is not None:
            await database_sync_to_async(presence.disconnected)(venue_id=self.venue_id)

    async def link_entry(self, message: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(message["entry"], separators=(",", ":")))
