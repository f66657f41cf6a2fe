"""The WebSocket of a hall screen: it follows its room's stream through the process's hub (halls.fanout),
which writes each event to it, and takes from the screen only its acknowledgements of what it put on the glass
(issue 28: parsed by halls.acks, handed to the loop's batch of acks, halls.ack_batcher).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer

from halls import ack_batcher, acks, fanout, metrics, socket_reads
from halls.models import DisplayAck, Screen, room_stream
from halls.services import screen_snapshots
from halls.services.acks import Received

log = logging.getLogger("hall.screens")

CLOSE_REFUSED = 4404
CLOSE_UNAVAILABLE = 1011  # the hub could not follow the stream (the channel layer is down): retry later
CLOSE_TOO_SLOW = 1013  # the socket could not keep up: reconnect (and reload the snapshot)


@dataclass(frozen=True)
class Found:
    """What a screen's connect reads of its token (kept by the hub while it hears the re-checks)."""

    screen_id: int
    stream: str
    room_id: int
    name: str


def _screens_for(tokens: list[str]) -> list[Found | None]:
    """For each token, the active screen's id, the stream it follows, its room and name: one query for the
    connects of a moment (halls.socket_reads)."""
    active = Screen.objects.filter(token__in=set(tokens), active=True)
    rows = active.values_list("token", "pk", "room_id", "name")
    # Plain values, not a Screen and its Room per token (issue 30: their building was most of the reading
    # thread's CPU in a reconnect storm, beside the loop that takes the sockets).
    found = {token: Found(pk, room_stream(room_id), room_id, name) for token, pk, room_id, name in rows}
    return [found.get(token) for token in tokens]


async def _screen_for(token: str) -> Found | None:
    answer: Found | None = await socket_reads.batcher("screens", _screens_for).submit(token)
    return answer


def wants_snapshot(scope: dict[str, Any]) -> bool:
    """``?snapshot=1``: the page takes its snapshot from the socket's first frame (halls/stream.js)."""
    return "snapshot=1" in scope.get("query_string", b"").decode("ascii", "replace").split("&")


class DirectReceive:
    """Channels' ``AsyncConsumer.__call__`` for a consumer with no channel layer (the hub is its only
    listener): each message of the socket straight to `dispatch`, without `await_many_dispatch`'s new task and
    ``asyncio.wait`` per message. With the screens' acks (issue 28) every screen sends several messages a
    second: that per-message machinery was most of an ack's server CPU."""

    scope: dict[str, Any]
    base_send: Any
    channel_layer: Any

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.scope = scope
        self.channel_layer = None
        self.base_send = send
        try:
            while True:
                await self.dispatch(await receive())  # type: ignore[attr-defined]
        except StopConsumer:
            pass


class ScreenConsumer(DirectReceive, AsyncWebsocketConsumer):
    # An alias that names no layer, so Channels gives the consumer no channel of its own (get_channel_layer
    # answers None for an alias that is not configured): the hub is the process's one listener, and no
    # channel-layer message goes through this consumer's dispatch.
    channel_layer_alias = "screens-have-no-channel"

    token = ""
    stream = ""
    screen_id = 0
    on_refused: ack_batcher.Refused | None = None
    live = False  # accepted and still valid: the hub writes to it
    early: list[dict[str, Any]] | None = None  # the hub's frames while its snapshot is read (?snapshot=1)
    gone = False  # closed by the hub (a re-check, a drain), maybe before the connect accepted it
    counted = False  # in the open-sockets gauge
    sender: fanout.Sender | None = None
    hub: fanout.StreamHub | None = None
    closing: asyncio.Task[None] | None = None

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch without its `aclose_old_connections()` hop to the shared sync thread before
        every message (as machines.consumers.MachineConsumer): the only database call here is the
        connect's, on the batched reads' own threads (halls.socket_reads)."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        """The token checked (against what this process already found for it, or one database read), the
        stream joined, the socket accepted and, asked with ``?snapshot=1``, sent its snapshot from the
        process's cache (halls.services.screen_snapshots: no query when cached): no other work (issue 30, a
        reconnect storm). Admitted in turn when the process admits many sockets at once; refused at once,
        before any of it, when too many wait already or the process is draining (1013, "retry-after=S")."""
        self.hub = fanout.hub()
        if not await self.hub.admit():
            await fanout.try_later(self, self.hub)
            return
        try:
            await self._admit(self.hub, str(self.scope["url_route"]["kwargs"]["token"]))
        finally:
            self.hub.admitted_one()

    async def _admit(self, hub: fanout.StreamHub, token: str) -> None:
        # The hub hears the re-checks naming this token from before the read: a screen deactivated or
        # moved once the read is done marks the watch (and makes the hub forget what it kept of it).
        watch = await hub.watch(token)
        try:
            found = hub.recall("screen", token)
            if found is None:
                hub.admit_reads += 1
                found = await _screen_for(token)
                if found is not None:
                    hub.remember("screen", token, found, watch)
            if found is None:
                await self.close(code=CLOSE_REFUSED)
                return
            self.screen_id, stream = found.screen_id, found.stream
            self.token, self.stream = token, stream
            self.sender = fanout.Sender(self.base_send, self._too_slow)
            snapshot = wants_snapshot(self.scope)
            # What the hub relayed of the stream before this socket joins: the snapshot is at or past it,
            # and every later event reaches the socket (kept in `early` until the snapshot is sent).
            head = hub.heads.get(stream, 0)
            self.early = [] if snapshot else None
            part = None
            try:
                # Following the stream before accepting: once the screen sees the socket open and loads its
                # snapshot, no later event can be missed.
                await hub.join(self)
                if snapshot:
                    part = await screen_snapshots.room_part_for_socket(found.room_id, head)
            except Exception:
                log.exception("screen %s: could not follow %s", token[:6], stream)
                await hub.leave(self)
                await self.close(code=CLOSE_UNAVAILABLE)
                return
        finally:
            await hub.unwatch(watch)  # once joined, the re-checks reach the socket as a member
        if watch.heard or self.gone:
            # Changed since the read: refused; the screen reconnects and its connect reads it afresh.
            await hub.leave(self)
            if not self.gone:
                await self.close(code=CLOSE_REFUSED)
            return
        await self.accept()
        early, self.early = self.early, None
        self.live = True
        if part is not None:
            text = screen_snapshots.text(part, found.screen_id, found.name, frame=True)
            self.deliver({"type": "websocket.send", "text": text})
            for frame in early or ():
                self.deliver(frame)  # the page drops what the snapshot already holds (by seq)
        self.counted = True
        metrics.OPEN_SOCKETS.labels("screen").inc()

    async def disconnect(self, code: int) -> None:
        self.live = False
        if self.counted:
            self.counted = False
            metrics.OPEN_SOCKETS.labels("screen").dec()
        if self.hub is not None:
            await self.hub.leave(self)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """An ack of what the screen showed: read, checked against what its stream sent, queued for the batch
        write. Anything else a screen sends is ignored."""
        if not text_data or not self.live or self.hub is None:
            return
        now = int(time.time() * 1000)
        try:
            found = acks.read_frame(text_data, now_ms=now)
        except acks.AckError as exc:
            self._refuse(None, exc.code)
            return
        if not found:
            return
        if self.on_refused is None:
            self.on_refused = ack_batcher.reply_refused(self._write)
        head = self.hub.heads.get(self.stream, 0)  # what the hub relayed; above it, the cursor decides
        batcher = ack_batcher.batcher()
        for ack in found:
            if ack.stream is not None and ack.stream != self.stream:
                self._refuse(ack.seq, "bad_stream")
                continue
            received = Received(
                DisplayAck.Kind.SCREEN, self.screen_id, self.stream, ack, now, ack.seq <= head
            )
            batcher.add(received, self.on_refused)

    def _write(self, frame: dict[str, Any]) -> None:
        if self.live and self.sender is not None:
            self.sender.write(frame)

    def _refuse(self, seq: int | None, code: str) -> None:
        self._write({"type": "websocket.send", "text": ack_batcher.refusal_text(seq, code)})

    def deliver(self, frame: dict[str, Any]) -> None:
        """The hub's write of one frame (an ASGI ``websocket.send``); never waits."""
        if self.early is not None and not self.gone:
            self.early.append(frame)  # joined, its snapshot being read: sent after it
            return
        if self.live and self.sender is not None and not self.sender.write(frame):
            self.live = False

    async def close(self, code: int | bool | None = None, reason: str | None = None) -> None:
        """Closed by the hub (a re-check, a drain) or by the connect; once is enough."""
        if self.gone:
            return
        self.gone = True
        await super().close(code=code, reason=reason)

    def _too_slow(self) -> None:
        """The socket's writes wait and its backlog is full: close it; the screen reconnects and reloads."""
        self.live = False
        self.closing = asyncio.get_running_loop().create_task(self.close(code=CLOSE_TOO_SLOW))
