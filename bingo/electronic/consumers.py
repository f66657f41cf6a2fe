"""The player terminal's WebSocket: ``ws/electronic/terminal/?device=<cash device id>&token=<device token>``.

A thin door (DESIGN §3): it checks the terminal's device token (halls.cashier.services.devices,
wrong tokens counted per address as on the device API), then follows two streams through the process's hub
(halls.fanout), like a hall screen: its speciality's room stream (balls, prizes, meters, sales opened and
closed) and its own "terminal.<id>" (its cards, prizes, balance, state). Each event reaches the hub once,
encoded once by its publisher, and is written as that same text to every terminal following the stream.
Delivery is at most once: the page reloads its snapshot (services.readmodels.terminal_snapshot, through the
terminal API) on a gap in either stream's seq, on the heads the hub's sweep sends, and on reconnect.

The terminal buys over it too (bingo.electronic.purchase_frames: the frames, their answers, their batches):
each purchase frame is parsed and queued for the socket's worker task, which hands it to the process's batch
of purchases and writes the answer frame like any other, so the hub's writes never wait behind a purchase.

The sweep re-checks every terminal socket (`kind` "terminal"): a retired device or a rotated token closes it
(4404), as a deactivated screen's; so does a terminal moved to another speciality. A rotation or a retirement
also re-checks the device's sockets at once (fanout.recheck_on_commit through the hubs' control group).

A connect is one database read (device, terminal and speciality in one query) and one hub join of both
streams: at 2,000 terminals a second read and a join per stream made the connects queue. The hub watches the
socket's device and token from before the read until its joins are done, so a token rotated after the read
is still heard (the watch is marked and the socket closes with 4404 instead of opening); after the joins the
re-check reaches it as a member.

Asked with ``?snapshot=1`` (terminal_stream.js), the socket's first frame is its speciality's snapshot
("stream.snapshot", ``"part": "speciality"``: what every terminal of the speciality shows, with the room
stream's seq), from the process's cache (services.readmodels.speciality_part_for_socket: no query when
cached), as the hall screens' (halls.consumers): 2,000 terminals reconnecting after a web process died each
POSTed their snapshot to the terminal API, and showed the current ball 19-26 s after the kill (issue 30).
The frames the hub relays while it is read are kept and sent after it; the page drops what it holds by seq.
The terminal's own part (its row, its cards bought, the inserted card's part: the card number never in a URL)
stays on the terminal API's POST, which the page makes afterwards, off the path of showing the ball.
The connect's one query reads the terminal's own stream's cursor too (the frame's `own_seq`; null on a connect
the hub answered from what it kept): a page whose own part is at that seq keeps it and makes no POST (after a
restart most terminals' own streams have not moved). An own event committed between that read and the join
does not reach this socket: the page sees it missing at the next own event (a gap) or in the hub's next head
of the stream, as any lost event, and reloads.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qs

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from django.db.models import CharField, OuterRef, Subquery, Value
from django.db.models.functions import Cast, Concat
from django.db.models.query import QuerySet
from django.utils import timezone

from bingo.electronic import purchase_frames
from bingo.electronic.models import Terminal, terminal_stream
from bingo.electronic.services import readmodels
from halls import ack_batcher, acks, fanout, metrics, snapshot_cache, socket_reads, throttling
from halls.cashier.services import devices
from halls.consumers import DirectReceive, wants_snapshot
from halls.models import DisplayAck, StreamCursor, room_stream
from halls.services.acks import Received

log = logging.getLogger("hall.terminals")

KIND = "terminal"
CLOSE_REFUSED = 4401  # no such device in service, not a terminal, or a wrong token
CLOSE_GONE = fanout.CLOSE_GONE  # the device retired or its token rotated since the socket opened
CLOSE_UNAVAILABLE = 1011  # the hub could not follow the streams (the channel layer is down): retry later
CLOSE_TOO_SLOW = 1013  # the socket could not keep up: reconnect (and reload the snapshot)
CLOSE_TOO_BIG = 1009  # a frame far beyond any purchase (RFC 6455: message too big)
SNAPSHOT_TYPE = "stream.snapshot"  # the socket's first frame when asked with ?snapshot=1


@dataclass(frozen=True)
class Found:
    """What a terminal's connect reads of its device and token (kept by the hub while it hears the
    re-checks): the streams it follows (room first) and its speciality (whose snapshot it may be sent)."""

    streams: tuple[str, str]
    speciality_id: int
    # The terminal's own stream's cursor, read with the token (None: not read by this connect, or kept by the
    # hub from an earlier one): a page whose own part is at that seq needs no POST of it after a reconnect.
    own_seq: int | None = None


# The speciality's part of the last entry encoded, per cache key: encoded once per entry for every socket.
_encoded: dict[snapshot_cache.Key, tuple[snapshot_cache.Entry, str]] = {}


def _public_members(key: snapshot_cache.Key, entry: snapshot_cache.Entry) -> str:
    """The entry's public part as a JSON object's text without its opening brace ('"speciality":…}')."""
    known = _encoded.get(key)
    if known is not None and known[0] is entry:
        return known[1]
    part: readmodels.SpecialityPart = entry.value
    text = json.dumps(part.public, cls=DjangoJSONEncoder, separators=(",", ":"))[1:]
    _encoded[key] = (entry, text)
    return text


def snapshot_language(scope: dict[str, Any]) -> str:
    """The language of the snapshot frame: the page's (``lang=`` of the URL: the language its API calls name
    in their Accept-Language), else the handshake's."""
    try:
        params = parse_qs(scope.get("query_string", b"").decode("ascii"), max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        params = {}
    named = purchase_frames.language_of((params.get("lang") or [""])[0], "")
    return named or purchase_frames.handshake_language(scope)


def snapshot_text(found: Found, entry: snapshot_cache.Entry, language: str) -> str:
    """The socket's first frame: the speciality's part (the terminal API snapshot's shared fields, `seqs`
    naming the room stream only) and the two streams' names; the own stream's cursor as the connect read it
    (`own_seq`, or null). No card, no own row: those stay on the POST."""
    room, own = found.streams
    head = json.dumps(
        {
            "type": SNAPSHOT_TYPE,
            "part": "speciality",
            "streams": {"room": room, "terminal": own},
            "seqs": {room: entry.seq},
            "own_seq": found.own_seq,
            "server_time": timezone.now().isoformat(),
        },
        separators=(",", ":"),
    )
    return head[:-1] + "," + _public_members(readmodels.part_key(room, language), entry)


def allowed_streams(idents: set[str]) -> dict[str, set[str]]:
    """The hub's re-check (fanout.register_kind): for each ident still valid (the device in service with that
    token, a terminal), the two streams it may follow."""
    by_device: dict[int, str] = {}
    for ident in idents:
        device, _sep, token_hash = ident.partition(":")
        if device.isdigit():
            by_device[int(device)] = token_hash
    # Plain values, not three model rows per terminal, nor a model built to name a stream (26 -> 8 ms of
    # CPU for 1,000): the sweep re-checks every socket of the process every 10 s on the loop's sync thread.
    found = Terminal.objects.filter(device_id__in=by_device, device__active=True).values_list(
        "pk", "device_id", "device__token_hash", "speciality__room_id"
    )
    return {
        devices.socket_ident(device_id, token_hash): {room_stream(room_id), terminal_stream(pk)}
        for pk, device_id, token_hash, room_id in found
        if token_hash == by_device.get(device_id)
    }


fanout.register_kind(KIND, allowed_streams)


def _query(scope: dict[str, Any]) -> tuple[int, str] | None:
    """The device id and token of the URL's query string; None when they are unusable."""
    try:
        params = parse_qs(scope.get("query_string", b"").decode("ascii"), max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        return None
    ids, tokens = params.get("device", []), params.get("token", [])
    if len(ids) != 1 or len(tokens) != 1 or not ids[0].isdigit() or len(ids[0]) > 18:
        return None
    return int(ids[0]), tokens[0]


# What a connect reads of a device's terminal, as plain values: (terminal id, device id, the device's token
# hash, speciality id, its room's id, the terminal's own stream's cursor or None). Not three model rows per
# terminal (Terminal, its device, its speciality, every field of each): building them was most of the
# storm's reading thread's CPU, beside the loop that takes the sockets (issue 30).
Row = tuple[int, int, str, int, int, int | None]
_ROW = ("pk", "device_id", "device__token_hash", "speciality_id", "speciality__room_id", "own_seq")


@functools.cache
def _terminals() -> QuerySet[Terminal]:
    """Terminals with their own stream's cursor (``own_seq``) in the same query: a page whose own part is at
    that seq is current (issue 30: no POST of it after a reconnect). Built once (never evaluated itself:
    each read filters a copy of it)."""
    own = Concat(Value("terminal."), Cast(OuterRef("pk"), output_field=CharField()))  # models.terminal_stream
    cursor = StreamCursor.objects.filter(stream=own).values("seq")[:1]
    return Terminal.objects.annotate(own_seq=Subquery(cursor)).filter(device__active=True)


@functools.cache
def _row_values() -> QuerySet[Terminal, Row]:
    """`_terminals` as plain `Row` values, built once (never evaluated itself: each read filters a copy)."""
    return _terminals().values_list(*_ROW)


def _rows(device_ids: set[int]) -> dict[int, Row]:
    """The active devices' terminals among `device_ids`, by device id: one query."""
    return {row[1]: row for row in _row_values().filter(device_id__in=device_ids)}


def _found(row: Row) -> Found:
    pk, _device, _hash, speciality_id, room_id, seq = row
    return Found((room_stream(room_id), terminal_stream(pk)), speciality_id, int(seq or 0))


def _read_terminal(query: tuple[int, str] | None, address: str) -> Found | None:
    """The streams the socket follows (room first), or None (refused; counted as a failure): the connect's
    one database read, the device, its terminal and its speciality in one query."""
    if throttling.AddressThrottle("device_failures").over(address):
        return None
    return _read_terminals([(query, address)])[0]


def _read_terminals(items: Sequence[tuple[tuple[int, str] | None, str]]) -> list[Found | None]:
    """`_read_terminal` for the connects of a moment (halls.socket_reads): each address's throttle looked
    at once, the devices, their terminals and specialities in one query; each wrong token counted."""
    over = throttling.over_many("device_failures", (address for _query, address in items))
    usable = [
        query if query is not None and not over[address] and 0 < len(query[1]) <= 200 else None
        for query, address in items
    ]
    rows = _rows({query[0] for query in usable if query is not None})
    answers: list[Found | None] = []
    for query, (_query, address) in zip(usable, items, strict=True):
        row = None
        if query is not None:
            digest = devices.hash_token(query[1])
            row = rows.get(query[0])
            # The hash compared in constant time (as devices.authenticate), about the same work when unknown.
            if not hmac.compare_digest(row[2] if row else digest, digest):
                row = None
        if row is None:
            throttling.count_failure(address, "device_failures")
            answers.append(None)
        else:
            answers.append(_found(row))
    return answers


def _read_terminal_once(query: tuple[int, str] | None, address: str) -> Found | None:
    try:
        return _read_terminal(query, address)
    finally:
        connection.close()  # a thread of the loop's pool: no connection left behind on it


# An unusable query (counted as a failure): on any thread of the loop's pool.
_refuse = database_sync_to_async(_read_terminal_once, thread_sensitive=False)


async def _authenticate(query: tuple[int, str] | None, address: str) -> Found | None:
    """The streams the socket follows, or None: read with the other connects of the moment, on the batched
    reads' own threads (halls.socket_reads; they were one query and one pooled connection each: 2,000
    connects at once)."""
    answer: Found | None
    if query is None:
        answer = await _refuse(query, address)
        return answer
    answer = await socket_reads.batcher("terminals", _read_terminals).submit((query, address))
    return answer


class _Follower:
    """The terminal socket as the hub sees it on one of its two streams (the hub keys sockets by stream)."""

    kind = KIND

    def __init__(self, consumer: TerminalConsumer, stream: str) -> None:
        self.consumer = consumer
        self.token = consumer.ident
        self.stream = stream

    @property
    def live(self) -> bool:
        return self.consumer.live

    @live.setter
    def live(self, value: bool) -> None:
        self.consumer.live = self.consumer.live and value

    def deliver(self, frame: dict[str, Any]) -> None:
        self.consumer.deliver(frame)

    async def close(self, code: int | None = None, reason: str | None = None) -> None:
        self.consumer.gone = True
        await self.consumer.close(code=code)


class TerminalConsumer(DirectReceive, AsyncWebsocketConsumer):
    # No channel of its own (as halls.consumers.ScreenConsumer): the hub is the process's one listener.
    channel_layer_alias = "terminals-have-no-channel"

    ident = ""
    streams: list[str]
    followers: list[_Follower]
    live = False  # accepted and still valid: the hub writes to it
    early: list[dict[str, Any]] | None = None  # the hub's frames while its snapshot is read (?snapshot=1)
    gone = False  # the hub closed it (a re-check), maybe before the connect accepted it
    counted = False
    sender: fanout.Sender | None = None
    hub: fanout.StreamHub | None = None
    closing: asyncio.Task[None] | None = None
    language = ""  # of the handshake (a frame may name its own): the language of its refusals
    purchases: asyncio.Queue[purchase_frames.Request | purchase_frames.Refusal | None] | None = None
    worker: asyncio.Task[None] | None = None
    on_refused: ack_batcher.Refused | None = None

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch without its hop to the shared sync thread before every message (as the
        screens'): the connect's database calls close their own connections."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        """Admitted in turn when the process admits many sockets at once; refused at once, before any work,
        when too many wait already or the process is draining (1013 with "retry-after=S": the terminal comes
        back within S seconds); otherwise `_admit`."""
        self.followers = []
        self.hub = fanout.hub()
        if not await self.hub.admit():
            await fanout.try_later(self, self.hub)
            return
        try:
            await self._admit(self.hub)
        finally:
            self.hub.admitted_one()

    async def _admit(self, hub: fanout.StreamHub) -> None:
        """The token checked against what this process already found for this device and token (its hash
        is the key of the process's cache: only the right token finds anything there), or one database read
        (with the address's wrong-token throttle); both streams joined; accepted."""
        address = str((self.scope.get("client") or ("",))[0])
        query = _query(self.scope)
        watch = None
        try:
            if query is not None:
                # The hub hears the re-checks for this device and token from before the read on: a token
                # rotated (or the device retired) once the read is done marks the watch.
                self.ident = devices.socket_ident(query[0], devices.hash_token(query[1]))
                watch = await hub.watch(self.ident)
                found = hub.recall(KIND, self.ident)
                if found is None:
                    hub.admit_reads += 1
                    found = await _authenticate(query, address)
                    if found is not None:
                        # Kept without the cursor: a later connect's would be stale.
                        hub.remember(KIND, self.ident, replace(found, own_seq=None), watch)
            else:
                found = await _authenticate(query, address)  # counted as a failure
            if found is None:
                await self.close(code=CLOSE_REFUSED)
                return
            self.streams = list(found.streams)
            self.sender = fanout.Sender(self.base_send, self._too_slow)
            snapshot = wants_snapshot(self.scope)
            # What the hub relayed of the room stream before this socket joins: the snapshot is at or past
            # it, and every later event reaches the socket (kept in `early` until the snapshot is sent).
            head = hub.heads.get(found.streams[0], 0)
            self.early = [] if snapshot else None
            # Following both streams before accepting: once the page sees the socket open and loads its
            # snapshot, no later event of either can be missed.
            self.followers = [_Follower(self, stream) for stream in self.streams]
            await hub.join_all(list(self.followers))
            if snapshot:
                language = snapshot_language(self.scope)
                entry = await readmodels.speciality_part_for_socket(
                    found.speciality_id, found.streams[0], head, language
                )
                text = snapshot_text(found, entry, language)
        except Exception:
            log.exception("terminal %s: could not follow its streams", query[0] if query else "?")
            await self._leave()
            await self.close(code=CLOSE_UNAVAILABLE)
            return
        finally:
            if watch is not None:
                await hub.unwatch(watch)  # the joins hear the re-checks from now on
        if self.gone or (watch is not None and watch.heard):  # changed since the read: reconnect
            await self._leave()
            if not self.gone:
                await self.close(code=CLOSE_GONE)
            return
        await self.accept()
        early, self.early = self.early, None
        self.live = True
        if snapshot:
            self.deliver({"type": "websocket.send", "text": text})
            for frame in early or ():
                self.deliver(frame)  # the page drops what the snapshot already holds (by seq)
        self.counted = True
        metrics.OPEN_SOCKETS.labels(KIND).inc()

    async def _leave(self) -> None:
        followers, self.followers = self.followers, []
        if self.hub is not None and followers:
            await self.hub.leave_all(list(followers))

    async def disconnect(self, code: int) -> None:
        self.live = False
        if self.counted:
            self.counted = False
            metrics.OPEN_SOCKETS.labels(KIND).dec()
        await self._leave()
        await self._stop_worker()

    # --- purchases (bingo.electronic.purchase_frames) ---

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """A purchase frame: parsed and queued for this socket's worker, so the consumer goes back at once
        to its other messages (the hub's writes never wait behind a purchase)."""
        if not self.live:  # not accepted, or closing: never act for nobody
            return
        frame: str | bytes = text_data if text_data is not None else (bytes_data or b"")
        if len(frame) > purchase_frames.ABUSE_BYTES:
            await self.close(code=CLOSE_TOO_BIG)
            return
        if isinstance(frame, str) and self._acknowledged(frame):
            return
        if self.purchases is None:
            self.language = purchase_frames.handshake_language(self.scope)
            self.purchases = asyncio.Queue(maxsize=purchase_frames.MAX_PENDING)
            self.worker = asyncio.get_running_loop().create_task(self._work())
        request = purchase_frames.parse(frame, self.language)
        try:
            self.purchases.put_nowait(request)
        except asyncio.QueueFull:
            self._answer(purchase_frames.busy(request))

    def _acknowledged(self, text: str) -> bool:
        """Acks of what the terminal showed (issue 28): checked and queued for the batch write (True); not
        an ack (False): a purchase frame, as before."""
        now = int(time.time() * 1000)
        try:
            found = acks.read_frame(text, now_ms=now)
        except acks.AckError as exc:
            self._answer(ack_batcher.refusal_text(None, exc.code))
            return True
        if found is None:
            return False
        if self.hub is None:
            return True
        if self.on_refused is None:
            self.on_refused = ack_batcher.reply_refused(self.deliver)
        terminal = int(self.streams[1].rpartition(".")[2])  # "terminal.<id>" (models.terminal_stream)
        batcher = ack_batcher.batcher()
        for ack in found:
            if ack.stream not in self.streams:
                self._answer(ack_batcher.refusal_text(ack.seq, "bad_stream"))
                continue
            known = ack.seq <= self.hub.heads.get(ack.stream, 0)
            batcher.add(
                Received(DisplayAck.Kind.TERMINAL, terminal, ack.stream, ack, now, known), self.on_refused
            )
        return True

    async def _work(self) -> None:
        """This socket's purchases one after the other, in the order sent (one in a batch at a time)."""
        assert self.purchases is not None
        device_id, _sep, token_hash = self.ident.partition(":")
        while (request := await self.purchases.get()) is not None:
            if isinstance(request, purchase_frames.Refusal):
                self._answer(purchase_frames.refused(request))
                continue
            try:
                text = await purchase_frames.batcher().submit((int(device_id), token_hash, request))
            except Exception:  # the batch's transaction rolled back: nothing written, send it again
                log.exception("terminal %s: a purchase batch failed", device_id)
                text = purchase_frames.failed(request)
            self._answer(text)

    def _answer(self, text: str) -> None:
        self.deliver({"type": "websocket.send", "text": text})

    async def _stop_worker(self) -> None:
        """Purchases not taken yet are dropped (unanswered: the page sends them again under their key); the
        one in a batch is written or not, and its retry answers it."""
        if self.worker is None or self.purchases is None:
            return
        while not self.purchases.empty():
            self.purchases.get_nowait()
        self.purchases.put_nowait(None)
        self.worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.worker
        self.worker = None

    def deliver(self, frame: dict[str, Any]) -> None:
        """The hub's write of one frame (either stream's); never waits."""
        if self.early is not None and not self.gone:
            self.early.append(frame)  # joined, its snapshot being read: sent after it
            return
        if self.live and self.sender is not None and not self.sender.write(frame):
            self.live = False

    def _too_slow(self) -> None:
        """The socket's writes wait and its backlog is full: close it; the page reconnects and reloads."""
        self.live = False
        self.closing = asyncio.get_running_loop().create_task(self.close(code=CLOSE_TOO_SLOW))
