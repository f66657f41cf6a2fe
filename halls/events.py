"""Typed events on per-stream sequences, published to Channels groups only after commit.

A stream (``room.7``) has a cursor row whose ``seq`` is bumped in the same transaction as the change the
event describes; screens use the numbers to notice a gap and reload their snapshot. Delivery is at most
once, so nothing depends on a message arriving (DESIGN §4).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Coroutine, Mapping, Sequence
from concurrent.futures import Future
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from channels.layers import get_channel_layer
from channels_redis.pubsub import RedisPubSubChannelLayer
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.utils import timezone

from halls import locks
from halls.eventtypes import EventSchemaError, EventType, check
from halls.models import StreamCursor

log = logging.getLogger("hall.events")

# The message type consumers implement as ``hall_event``.
CHANNEL_MESSAGE_TYPE = "hall.event"
# A payload that does not match its type: raised when True (the tests, which also list it in MISMATCHES,
# for a caller that swallows the error), else logged and published anyway.
STRICT = False
MISMATCHES: list[str] = []


@dataclass(frozen=True)
class Event:
    stream: str
    seq: int
    type: EventType
    data: Mapping[str, Any]
    at: str

    def encode(self) -> str:
        """The JSON text a screen receives; encoded once per event, not once per screen."""
        return json.dumps(
            {"stream": self.stream, "seq": self.seq, "type": self.type, "at": self.at, "data": self.data},
            cls=DjangoJSONEncoder,
            separators=(",", ":"),
        )


def group_name(stream: str) -> str:
    return f"stream.{stream}"


def current_seq(stream: str) -> int:
    return StreamCursor.objects.filter(stream=stream).values_list("seq", flat=True).first() or 0


def checked(type: EventType, data: Mapping[str, Any]) -> None:
    """The payload against its type (halls.eventtypes): a key and an isinstance per field."""
    try:
        check(type, data)
    except EventSchemaError as exc:
        if STRICT:
            MISMATCHES.append(str(exc))
            raise
        log.exception("event payload does not match its type")


def emit(stream: str, type: EventType, data: Mapping[str, Any]) -> Event:
    """Number the event in the caller's transaction and publish it once that transaction commits."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("events.emit must run inside the service's transaction")
    checked(type, data)
    event = Event(stream=stream, seq=next_seq(stream), type=type, data=data, at=timezone.now().isoformat())
    transaction.on_commit(lambda: publish(event))
    return event


def emit_many(events: Sequence[tuple[str, EventType, Mapping[str, Any]]]) -> list[Event]:
    """`emit` for several ``(stream, type, data)`` in order: every stream's cursor bumped by its count in
    one statement (cursors locked in stream order), the events published in order after the caller's
    transaction commits."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("events.emit_many must run inside the service's transaction")
    counts: dict[str, int] = {}
    for stream, type, data in events:
        checked(type, data)
        counts[stream] = counts.get(stream, 0) + 1
    if connection.vendor == "postgresql":
        last = _bump_many(counts)
    else:  # SQLite: one writer at a time, one statement or two per stream
        last = {stream: next_seq(stream, n) for stream, n in counts.items()}
    # Each stream's numbers: the cursor moved by its count, the events numbered up to the new value.
    first = {stream: last[stream] - n + 1 for stream, n in counts.items()}
    at = timezone.now().isoformat()
    made = []
    for stream, type, data in events:
        made.append(Event(stream=stream, seq=first[stream], type=type, data=data, at=at))
        first[stream] += 1

    transaction.on_commit(lambda: publish_many(made))
    return made


# The cursors made or moved in stream order (the order their rows are locked in), one statement: a
# stream's first event (a terminal's first purchase) makes its cursor at its count.
_BUMP_MANY_SQL = """
INSERT INTO {table} (stream, seq)
SELECT v.stream, v.n FROM unnest(%s::text[], %s::bigint[]) WITH ORDINALITY AS v(stream, n, i) ORDER BY v.i
ON CONFLICT (stream) DO UPDATE SET seq = {table}.seq + EXCLUDED.seq
RETURNING stream, seq
"""


def _bump_many(counts: dict[str, int]) -> dict[str, int]:
    """The cursors of `counts` moved by their counts (made if new), locked in stream order: stream -> new
    seq."""
    sql = _BUMP_MANY_SQL.format(table=connection.ops.quote_name(StreamCursor._meta.db_table))
    streams = sorted(counts)
    locks.take_many(locks.Rank.STREAM, streams)  # the statement locks their cursors
    with connection.cursor() as cursor:
        cursor.execute(sql, [streams, [counts[s] for s in streams]])
        return {stream: int(seq) for stream, seq in cursor.fetchall()}


def next_seq(stream: str, n: int = 1) -> int:
    """Bump the stream's cursor and return the new number: one statement, the row locked till commit."""
    locks.take(locks.Rank.STREAM, stream)  # the UPDATE locks the cursor's row
    table = connection.ops.quote_name(StreamCursor._meta.db_table)
    bump = f"UPDATE {table} SET seq = seq + %s WHERE stream = %s RETURNING seq"  # noqa: S608 (a model's table)
    with connection.cursor() as cursor:
        cursor.execute(bump, [n, stream])
        row = cursor.fetchone()
        if row is None:
            # The stream's first event: a concurrent first one finds this row (or makes it first) and waits.
            StreamCursor.objects.get_or_create(stream=stream)
            cursor.execute(bump, [n, stream])
            row = cursor.fetchone()
    return int(row[0])


# Inside `publish_many`: each stream's last send not waited for yet (the streams' sends overlap).
_sending: ContextVar[dict[str, Future[Any]] | None] = ContextVar("hall_events_sending", default=None)


def publish(event: Event) -> None:
    """Send a committed event to its group. A failure is logged: screens recover from their snapshot."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = _channel_message(event)
    sending = _sending.get()
    try:
        if sending is not None and event.stream in sending:
            sending.pop(event.stream).result(_Publisher.TIMEOUT)  # a stream's events in their order
        sent = _publisher.submit(layer, layer.group_send(group_name(event.stream), message))
        if sending is None:
            sent.result(_Publisher.TIMEOUT)
        else:
            sending[event.stream] = sent
    except Exception:
        log.exception("could not publish %s #%s on %s", event.type, event.seq, event.stream)


def _channel_message(event: Event) -> dict[str, str]:
    """The text screens receive, encoded once here; the stream, for the hub that fans it out."""
    return {"type": CHANNEL_MESSAGE_TYPE, "stream": event.stream, "text": event.encode()}


def publish_many(events: Sequence[Event]) -> None:
    """`publish` for several committed events, one wait for them all: each stream's events sent in order,
    the streams' at once (a group of purchases tells each of its terminals: one round trip, not one each)."""
    token = _sending.set({})
    try:
        for event in events:
            publish(event)
    finally:
        sending = _sending.get() or {}
        _sending.reset(token)
    for stream, sent in sending.items():
        try:
            sent.result(_Publisher.TIMEOUT)
        except Exception:
            log.exception("could not publish an event on %s", stream)


def publish_unawaited(event: Event) -> None:
    """`publish`, without waiting for the channel layer's answer: for a stream whose readers only reload
    on an event and never count them (the authority's portal), sent from a request that should not hold
    its thread and its database connection for a Redis round trip. A failure is logged when it happens."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = _channel_message(event)

    def logged(sent: Future[Any]) -> None:
        failed = sent.exception()
        if failed is not None:
            log.error("could not publish %s #%s on %s: %r", event.type, event.seq, event.stream, failed)

    _publisher.submit(layer, layer.group_send(group_name(event.stream), message)).add_done_callback(logged)


def send_to_group(layer: Any, group: str, message: dict[str, Any]) -> None:
    """One channel-layer message to a group, from any thread, on the publisher's loop (see below)."""
    _publisher.run(layer, layer.group_send(group, message))


class _Publisher:
    """An event loop of the process's own, in a daemon thread, on which every publish runs.

    `async_to_sync` from a thread without a loop (a Celery worker, a management command) made a new loop
    per call, and the Redis layer a new connection per loop: 2.5-6 ms per event. On one long-lived loop
    the layer keeps its connection, and a publish costs a round trip. The caller waits for it, so one
    thread's events are published in the order they were committed. A forked child (Celery's prefork
    pool) starts a loop of its own.
    """

    TIMEOUT = 5.0

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.pid = 0
        self.layer: Any = None

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self.lock:
            if self.loop is None or self.pid != os.getpid():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="hall-events-publisher", daemon=True).start()
                self.loop, self.pid, self.layer = loop, os.getpid(), None
            return self.loop

    def run(self, layer: Any, coro: Coroutine[Any, Any, Any]) -> None:
        self.submit(layer, coro).result(self.TIMEOUT)

    def submit(self, layer: Any, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        """`coro` started on the publisher's loop: its future (the caller waits for it, or lets it go on
        while it sends others)."""
        loop = self._running_loop()
        if layer is not self.layer:
            # The layer was replaced (settings changed, as in tests): close the old one's connections here.
            old, self.layer = self.layer, layer
            if isinstance(old, RedisPubSubChannelLayer):
                asyncio.run_coroutine_threadsafe(old.flush(), loop)
        return asyncio.run_coroutine_threadsafe(coro, loop)


_publisher = _Publisher()
