"""The WebSocket of a machine's interface board (SMIB): ``ws/machines/<asset>/?token=<device token>``.

A thin door (DESIGN §3). On connect it checks the device token (``&venue=<id>`` narrows the asset number
to one venue), joins the machine's group ``machine.<id>`` (lock / unlock pushes from the services) and its
link group's ``machines.link.<group id>`` (the progressive broadcasts), and tells the gateway it is
connected. Each frame is parsed by the pure protocol module and taken by the gateway in a database
thread (plays, meters, events and hits batched with other machines' frames, see below); the reply (an
ack, or the welcome after a hello) goes back on the socket. A frame that is too large or malformed gets a
``rejected`` ack and changes nothing; a frame far beyond any message closes the
socket (1009, message too big). Heartbeats are answered by nothing: they only keep the machine online.

Frames are queued to a worker task of the connection, which takes them one after the other in the order
they came (so one machine's messages are never reordered), while the consumer itself goes on with its
channel-layer messages: a broadcast never waits behind a gateway call, and a machine whose plays queue up
under load still hears its link (it would lock itself after 5 s of silence). A board with more than
MAX_PENDING_FRAMES frames waiting gets ``rejected busy`` for the next ones (nothing taken).

Group commit: play, meters, event, hit, heartbeat and hello frames of all the process's connections go to one
batcher (`halls.loop_batcher.LoopBatcher`, one per event loop). A batch runner takes what is waiting (up to
BATCH_FRAMES frames, gathering at most BATCH_WAIT seconds) and hands it to ONE `gateway.receive_many` call:
one transaction, one commit, a handful of statements for the whole batch, where one call per frame cost a
transaction and ~8 round trips per play. At most BATCH_RUNNERS batches are in the database at once and only
one gathers, so under load the next batch fills while the previous one commits. A connection has at most one
frame in flight (its worker awaits each reply), so one machine's frames never race each other. Connect and
disconnect stay one call each. Hellos go through the batcher too: after a lock-up or a restart a whole floor
says hello within a second, and one transaction per hello (with its audit entry on the venue's chain) was a
storm that never drained; in a batch they share one transaction, one read of the levels, one chain lock.

Why the database calls run on a small pool of threads of their own rather than Channels' one shared sync
thread: the batches, hellos and heartbeats of hundreds of machines would queue behind each other on one
thread. The machine row lock in the gateway serialises anything about one machine; the threads keep their
database connection between calls when CONN_MAX_AGE > 0.

Broadcasts are encoded once by the broadcaster (machines.broadcaster) and sent here as text, so fan-out
costs one socket write per machine and no JSON work.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import weakref
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import parse_qs

from asgiref.sync import SyncToAsync
from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.db import close_old_connections

from halls import metrics, throttling
from halls.loop_batcher import LoopBatcher
from machines import broadcaster, protocol
from machines.floor import LocalFloor, local_floor
from machines.models import LinkMember, Machine, MachineState
from machines.services import gateway, push, registry

log = logging.getLogger("hall.machines.gateway")

T = TypeVar("T")

# The channel-layer message types this consumer implements (see the handlers below).
PROGRESSIVE_TYPE = broadcaster.PROGRESSIVE_TYPE
RELINK_TYPE = push.RELINK_TYPE

# Close codes: the device token was refused (before accept, or later when it is rotated: 4401); the machine
# is out of service (push.CLOSE_OUT_OF_SERVICE, 4403); a frame far beyond any message (RFC 6455).
CLOSE_REFUSED = push.CLOSE_TOKEN_REVOKED
CLOSE_TOO_BIG = 1009
# A frame this large is not a board's message gone wrong but abuse: the socket is closed, not answered.
ABUSE_BYTES = 16 * protocol.MAX_MESSAGE_BYTES
# Frames a board may have waiting for the gateway; one more is refused "busy" (nothing taken).
MAX_PENDING_FRAMES = 32

# Calls of different machines overlap their database round trips and commits on these threads; measured
# with 500 sockets on one process, 2 threads took half the plays 4 or 8 did, 16 no more than 8. Each keeps
# one database connection (CONN_MAX_AGE > 0), so a process holds this many.
_executor = ThreadPoolExecutor(
    max_workers=getattr(settings, "MACHINE_GATEWAY_DB_THREADS", 8), thread_name_prefix="machine-gateway"
)


def in_db_thread(fn: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """`fn` as an awaitable run on the gateway's database threads.

    Old connections are closed around the call, as channels.db.database_sync_to_async does, but by
    Django's own function: Channels' test communicator switches its copy off (for tests holding a
    transaction on the shared sync thread), and these threads never share a test's transaction.
    """

    @functools.wraps(fn)
    def closing(*args: Any, **kwargs: Any) -> T:
        close_old_connections()
        try:
            return fn(*args, **kwargs)
        finally:
            close_old_connections()

    call: Callable[..., Awaitable[T]] = SyncToAsync(closing, thread_sensitive=False, executor=_executor)
    return call


# Group commit (see the module docstring): frames per batch, how long a batch waits for more frames after
# its first, batches in the database at once.
BATCH_FRAMES: int = getattr(settings, "MACHINE_GATEWAY_BATCH_FRAMES", 100)
BATCH_WAIT: float = getattr(settings, "MACHINE_GATEWAY_BATCH_WAIT_MS", 5) / 1000
BATCH_RUNNERS: int = getattr(settings, "MACHINE_GATEWAY_BATCH_RUNNERS", 2)

_Reply = dict[str, Any]


# A welcome taken in a batch carries the link group its machine is in now under this key, for the
# connection to follow; the consumer takes it out before the welcome goes to the board.
LINK_GROUP_KEY = "_link_group_id"


def _receive_batch(batch: Sequence[tuple[int, protocol.Message]]) -> list[_Reply]:
    """The reply to each frame of the batch. A batch of one is `receive` (the same thing: receive is
    receive_many of one), which keeps a single frame's failure its own. Hellos come in batches too (after a
    lock-up a floor says hello at once): their welcomes get the machines' link groups, read in one query."""
    if len(batch) == 1:
        machine_id, message = batch[0]
        replies = [gateway.receive(machine_id=machine_id, messages=[message])[0]]
    else:
        frames = gateway.receive_many([(machine_id, [message]) for machine_id, message in batch])
        replies = [frame[0] for frame in frames]
    greeted = [i for i, (_, message) in enumerate(batch) if isinstance(message, protocol.Hello)]
    if greeted:
        groups = dict(
            LinkMember.objects.filter(
                machine_id__in={batch[i][0] for i in greeted}, left_at__isnull=True
            ).values_list("machine_id", "group_id")
        )
        for i in greeted:
            if replies[i].get("type") == "welcome":
                replies[i][LINK_GROUP_KEY] = groups.get(batch[i][0])
    return replies


def _receive_batch_timed(batch: list[tuple[int, protocol.Message]]) -> list[_Reply]:
    """`_receive_batch` with the gateway's batch metrics (on the database thread)."""
    metrics.GATEWAY_BATCH_FRAMES.observe(len(batch))
    with metrics.timed(metrics.GATEWAY_BATCH):
        return _receive_batch(batch)


FrameBatcher = LoopBatcher[tuple[int, protocol.Message], _Reply]


_batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, FrameBatcher] = weakref.WeakKeyDictionary()


def batcher() -> FrameBatcher:
    """The running loop's batcher (a process serves on one loop; tests may run several loops)."""
    loop = asyncio.get_running_loop()
    found = _batchers.get(loop)
    if found is None:
        found = _batchers[loop] = FrameBatcher(
            _receive_batch_timed,
            executor=_executor,
            size=BATCH_FRAMES,
            wait=BATCH_WAIT,
            runners=BATCH_RUNNERS,
        )
    return found


def active_link_group(machine_id: int) -> int | None:
    group_id: int | None = (
        LinkMember.objects.filter(machine_id=machine_id, left_at__isnull=True)
        .values_list("group_id", flat=True)
        .first()
    )
    return group_id


def _authenticate(venue_id: int | None, asset: str, token: str, address: str) -> tuple[int, str] | int:
    """The machine's id and token hash, or the close code that refuses it (a machine out of service keeps
    no socket: push.CLOSE_OUT_OF_SERVICE)."""
    # An address that sent too many wrong tokens is refused before its token is looked at (halls.throttling).
    if throttling.AddressThrottle("device_failures").over(address):
        return CLOSE_REFUSED
    machine = registry.authenticate(venue_id=venue_id, asset_number=asset, token=token)
    if machine is None:
        throttling.count_failure(address, "device_failures")
        return CLOSE_REFUSED
    if machine.state == MachineState.OUT_OF_SERVICE:
        return push.CLOSE_OUT_OF_SERVICE
    return machine.pk, machine.token_hash


def _admit(machine_id: int, token_hash: str) -> tuple[bool, int | None]:
    """Checked again once the socket hears its machine's group: a token rotated or a machine taken out of
    service between the first check and the join sent its close before this socket could hear it. The
    machine is admitted, and its link group."""
    still = Machine.objects.filter(pk=machine_id, token_hash=token_hash).exclude(
        state=MachineState.OUT_OF_SERVICE
    )
    if not still.exists():
        return False, None
    gateway.connected(machine_id=machine_id)
    return True, active_link_group(machine_id)


def _disconnected(machine_id: int) -> None:
    gateway.disconnected(machine_id=machine_id)


def _query(scope: dict[str, Any]) -> tuple[str, int | None] | None:
    """The token and the optional venue id of the URL's query string; None when they are unusable."""
    try:
        params = parse_qs(scope.get("query_string", b"").decode("ascii"), max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        return None
    tokens = params.get("token", [])
    venues = params.get("venue", [])
    if len(tokens) != 1 or len(venues) > 1:
        return None
    venue_id: int | None = None
    if venues:
        if not venues[0].isdigit() or len(venues[0]) > 18:
            return None
        venue_id = int(venues[0])
    return tokens[0], venue_id


class MachineConsumer(AsyncWebsocketConsumer):
    machine_id: int | None = None
    link_group_id: int | None = None
    floor: LocalFloor | None = None
    broadcast_waiting = False  # a broadcast write waits for the socket (a stalled board)
    _broadcast_task: asyncio.Task[None] | None = None
    frames: asyncio.Queue[protocol.Message | protocol.ProtocolError | None]
    worker: asyncio.Task[None] | None = None

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch without its `aclose_old_connections()` before every message: that is a hop
        to the one shared sync thread per message, and here most messages are broadcasts (hundreds of
        machines, several times a second). This consumer never uses that thread's connection: its calls
        run on the gateway threads, which close their own (`in_db_thread`)."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    # --- connection life ---

    async def connect(self) -> None:
        asset = str(self.scope["url_route"]["kwargs"]["asset"])
        query = _query(self.scope)
        found: tuple[int, str] | int = CLOSE_REFUSED
        if query is not None:
            token, venue_id = query
            address = str((self.scope.get("client") or ("",))[0])
            found = await in_db_thread(_authenticate)(venue_id, asset, token, address)
        if isinstance(found, int):
            await self.close(code=found)
            return
        machine_id, token_hash = found
        # Hear the machine's group (its pushes, and the close of a rotated token) before the last check.
        await self.channel_layer.group_add(push.group_name(machine_id), self.channel_name)
        admitted, group_id = await in_db_thread(_admit)(machine_id, token_hash)
        if not admitted:
            await self.channel_layer.group_discard(push.group_name(machine_id), self.channel_name)
            await self.close(code=CLOSE_REFUSED)
            return
        self.machine_id = machine_id
        self.floor = local_floor()
        self.floor.connected()
        await self._follow_link(group_id)
        self.frames = asyncio.Queue(maxsize=MAX_PENDING_FRAMES)
        self.worker = asyncio.get_running_loop().create_task(self._work(self.machine_id))
        await self.accept()
        metrics.OPEN_SOCKETS.labels("machine").inc()

    async def disconnect(self, code: int) -> None:
        if self.machine_id is None:
            return
        metrics.OPEN_SOCKETS.labels("machine").dec()
        if self.worker is not None:
            # Frames not taken yet are dropped (unanswered, the board sends them again); the one being
            # taken finishes first, so `disconnected` is the machine's last word.
            while not self.frames.empty():
                self.frames.get_nowait()
            self.frames.put_nowait(None)
            await asyncio.wait([self.worker])
        await self.channel_layer.group_discard(push.group_name(self.machine_id), self.channel_name)
        await self._follow_link(None)
        if self.floor is not None:
            self.floor.disconnected()
        try:
            await in_db_thread(_disconnected)(self.machine_id)
        except Exception:  # the socket is gone either way; the link watch catches a silent machine
            log.exception("could not record machine %s as disconnected", self.machine_id)

    async def _follow_link(self, group_id: int | None) -> None:
        """Hear the broadcasts of `group_id` (None: of no group) on the process's floor, and no longer
        those of the old one."""
        if group_id == self.link_group_id or self.floor is None:
            return
        if self.link_group_id is not None:
            await self.floor.leave(self.link_group_id, self)
        if group_id is not None:
            await self.floor.join(group_id, self)
        self.link_group_id = group_id

    # --- frames from the board ---

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Parse the frame and queue it for the worker: the consumer goes back at once to its other
        messages, so a broadcast never waits behind a gateway call."""
        if self.worker is None:  # not accepted: nothing reaches here, but never act for nobody
            return
        if self.floor is not None and self.machine_id is not None:
            self.floor.heard_from(self.machine_id)  # alive, however long its frame waits for the gateway
        frame: str | bytes = text_data if text_data is not None else (bytes_data or b"")
        if len(frame) > ABUSE_BYTES:
            await self.close(code=CLOSE_TOO_BIG)
            return
        try:
            item: protocol.Message | protocol.ProtocolError = protocol.parse(frame)
        except protocol.ProtocolError as exc:
            item = exc
        try:
            self.frames.put_nowait(item)
        except asyncio.QueueFull:
            seq = getattr(item, "seq", None)
            busy = protocol.ack(seq, "rejected", "busy", "Too many messages waiting: send it again later.")
            await self.send(text_data=protocol.encode(busy))

    async def _work(self, machine_id: int) -> None:
        """Take the queued frames one after the other, in the order they came: one gateway call each."""
        while (item := await self.frames.get()) is not None:
            try:
                if isinstance(item, protocol.ProtocolError):
                    await self.send(text_data=protocol.encode(item.ack()))
                else:
                    await self._through_gateway(machine_id, item)
            except Exception:
                # Nothing was taken (the call's transaction rolled back): the board may send the seq
                # again. The socket stays open: one failed call must not drop a machine's link.
                log.exception("gateway call failed for machine %s", machine_id)
                seq = getattr(item, "seq", None)
                failed = protocol.ack(seq, "rejected", "server_error", "Not taken: send it again later.")
                with contextlib.suppress(Exception):  # the socket may be gone
                    await self.send(text_data=protocol.encode(failed))

    async def _through_gateway(self, machine_id: int, message: protocol.Message) -> None:
        """A frame through the batcher to the gateway; its reply (a welcome, an ack) sent back."""
        if isinstance(message, protocol.Heartbeat):
            # Through the batcher, not a thread call of its own: a thousand heartbeats become one UPDATE
            # per batch and never queue ahead of the frames (a queued heartbeat is how a busy gateway
            # made live machines look silent to the link watch). Heartbeats get no answer.
            await batcher().submit((machine_id, message))
            return
        if isinstance(message, protocol.Hello):
            welcome = await batcher().submit((machine_id, message))
            if LINK_GROUP_KEY in welcome:
                await self._follow_link(welcome.pop(LINK_GROUP_KEY))
            await self._answer(machine_id, welcome)
            return
        reply = await batcher().submit((machine_id, message))
        metrics.count_gateway_ack(reply)
        await self._answer(machine_id, reply)

    async def _answer(self, machine_id: int, reply: dict[str, Any]) -> None:
        """The gateway's answer, sent back. The call has committed: a socket gone meanwhile is no failure
        of it (the board sends the seq again and is answered `duplicate`)."""
        try:
            await self.send(text_data=protocol.encode(reply))
        except Exception:
            log.info("answer to machine %s not written: its socket is gone (the call was taken)", machine_id)

    # --- messages from the system (channel layer) ---

    def offer_broadcast(self, text: str) -> None:
        """A link group's broadcast (from the process's floor), already encoded once: written now, unless
        the last one still waits for this socket (then this one is dropped: the next is newer)."""
        if self.broadcast_waiting:
            return
        self.broadcast_waiting = True
        self._broadcast_task = asyncio.get_running_loop().create_task(self._write_broadcast(text))

    async def _write_broadcast(self, text: str) -> None:
        try:
            await self.send(text_data=text)
        except Exception:  # the socket is gone: its disconnect takes it off the floor
            log.debug("broadcast not written to machine %s", self.machine_id, exc_info=True)
        finally:
            self.broadcast_waiting = False

    async def machine_progressive(self, message: dict[str, Any]) -> None:
        """A broadcast sent to this connection's own channel (not how they come: see machines.floor)."""
        self.offer_broadcast(message["text"])

    async def machine_push(self, message: dict[str, Any]) -> None:
        """A service tells this machine something (lock, unlock): sent as is."""
        await self.send(text_data=protocol.encode(message["payload"]))

    async def machine_close(self, message: dict[str, Any]) -> None:
        """Its token was rotated or it was taken out of service: the socket closes now."""
        await self.close(code=int(message.get("code") or CLOSE_REFUSED))

    async def machine_relink(self, message: dict[str, Any]) -> None:
        """The machine joined or left a link group: follow the group it is in now."""
        if self.machine_id is not None:
            await self._follow_link(await in_db_thread(active_link_group)(self.machine_id))
