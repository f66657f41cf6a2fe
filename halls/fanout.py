"""Fan-out of the event streams to the screen sockets of one process: one `StreamHub` per process (per
event loop) follows each stream once and writes each event, encoded once, to every local socket of it.
Delivery stays at most once (DESIGN §4): a screen reloads its snapshot on a gap; nothing is retried here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import weakref
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction

from halls import events, layer_groups, snapshot_cache
from halls.events import CHANNEL_MESSAGE_TYPE, group_name
from halls.models import Screen, StreamCursor

log = logging.getLogger("hall.screens")

HEAD_TYPE = "stream.head"
# A screen that is no longer what it was when it connected (deactivated, deleted, moved): like a refusal.
CLOSE_GONE = 4404
# A socket whose writes wait (a server with write back-pressure) keeps at most this many frames; past
# that it is closed, and the screen reconnects and reloads its snapshot.
MAX_BACKLOG = 64
# Every hub hears this group: "re-check these screens now" (a screen changed in the database).
CONTROL_GROUP = "screens.control"
RECHECK_TYPE = "screens.recheck"
# The sweep lets the loop run (an event's fan-out, a purchase's answer) after this many sockets' heads or
# streams' renewals: a terminal has a stream of its own, so a process with 1,000 terminals sweeps 1,000
# streams and writes 2,000 heads.
SWEEP_SLICE = 100
# The heads of a sweep go out over this share of its period (`StreamHub._send_heads`).
SWEEP_SPREAD = 0.5
# A web process going away (`drain_process`): its sockets hear this frame, then close 1012 ("service
# restart"); the pages reconnect at a random moment within "within" seconds, to a sibling process.
RESTART_TYPE = "stream.restart"
CLOSE_RESTART = 1012
# Refused before any work: too many sockets waiting to be admitted, or the process draining. The socket is
# accepted and closed at once with this code and a reason "retry-after=S" (a close before the accept is an
# HTTP 403 the browser cannot tell from any other failure: it would back off as from a dead server): the
# page comes back at a random moment within S seconds, without doubling its back-off (halls/stream.js).
CLOSE_TRY_LATER = 1013
RETRY_AFTER = "retry-after="


def sweep_seconds() -> float:
    return float(getattr(settings, "HALL_SCREEN_SWEEP_SECONDS", 10.0))


def admit_cache_seconds() -> float:
    return float(getattr(settings, "HALL_SOCKET_ADMIT_CACHE_SECONDS", 60.0))


def admit_concurrency() -> int:
    return int(getattr(settings, "HALL_SOCKET_ADMIT_CONCURRENCY", 200))


def admit_queue() -> int:
    return int(getattr(settings, "HALL_SOCKET_ADMIT_QUEUE", 4000))


def retry_seconds() -> float:
    return float(getattr(settings, "HALL_SOCKET_RETRY_SECONDS", 2.0))


def try_later_reason(seconds: float) -> str:
    """The close reason of a 1013: when to come back (the page picks a random moment within it)."""
    return f"{RETRY_AFTER}{seconds:g}"


class Refusable(Protocol):
    async def accept(self, subprotocol: str | None = None) -> None: ...

    async def close(self, code: int | None = None, reason: str | None = None) -> None: ...


async def try_later(socket: Refusable, hub: StreamHub) -> None:
    """Refuse a connect `admit` turned away: accepted and closed at once, 1013 with "retry-after=S" (a close
    before the accept would be an HTTP 403, which a browser cannot tell from a dead server)."""
    await socket.accept()
    await socket.close(code=CLOSE_TRY_LATER, reason=try_later_reason(hub.try_later_seconds()))


def drain_spread_seconds() -> float:
    return float(getattr(settings, "HALL_SOCKET_DRAIN_SPREAD_SECONDS", 3.0))


def renew_seconds() -> float:
    """How often the sweep renews the hub's group memberships: well within the layers' group expiry (a day,
    channels-redis' and the in-memory layer's default). Not at every sweep: a process with 1,000 terminals
    follows 1,000 groups, and renewing them all every 10 s held the loop (and the sockets' answers) for a
    third of a second each time (issue 13, the sales bench's spike at every sweep)."""
    return float(getattr(settings, "HALL_HUB_RENEW_SECONDS", 3600.0))


class ScreenSocket(Protocol):
    token: str
    stream: str
    live: bool
    # A socket may name its `kind`: "screen" (a hall screen, re-checked against its Screen row; the default
    # for a socket without one) or a kind registered with `register_kind` (a player terminal).

    def deliver(self, frame: dict[str, Any]) -> None: ...

    async def close(self, code: int | None = None, reason: str | None = None) -> None: ...


# How the sweep re-checks the sockets of a kind other than "screen": their tokens -> the streams each token
# may still follow (a token missing: its sockets are closed). Registered by the app that owns the kind.
KindCheck = Callable[[set[str]], dict[str, set[str]]]
_kind_checks: dict[str, KindCheck] = {}


def register_kind(kind: str, check: KindCheck) -> None:
    """Sockets of `kind` join the hub like screens; the sweep re-checks them with `check` (in a database
    thread), and sends them their streams' heads."""
    _kind_checks[kind] = check


def kind_of(socket: ScreenSocket) -> str:
    return str(getattr(socket, "kind", "screen"))


def read_following(
    sockets: list[ScreenSocket], streams: set[str]
) -> tuple[dict[tuple[str, str], set[str]], dict[str, int]]:
    """The streams each socket's (kind, token) may follow now, and the streams' current seqs."""
    tokens: dict[str, set[str]] = {}
    for socket in sockets:
        tokens.setdefault(kind_of(socket), set()).add(socket.token)
    following: dict[tuple[str, str], set[str]] = {}
    heads: dict[str, int] = {}
    screens, heads = read_screens(tokens.pop("screen", set()), streams)
    following.update({("screen", token): {stream} for token, stream in screens.items()})
    for kind, kind_tokens in tokens.items():
        check = _kind_checks.get(kind)
        allowed = check(kind_tokens) if check is not None else {}
        following.update({(kind, token): set(allowed.get(token, ())) for token in kind_tokens})
    return following, heads


def read_screens(tokens: set[str], streams: set[str]) -> tuple[dict[str, str], dict[str, int]]:
    """The stream each still-active screen follows now (by token), and the streams' current seqs."""
    following = {
        screen.token: screen.room.stream
        for screen in Screen.objects.filter(token__in=tokens, active=True).select_related("room")
    }
    heads = dict(StreamCursor.objects.filter(stream__in=streams).values_list("stream", "seq"))
    return following, heads


@dataclass(eq=False)
class Watch:
    """A socket being admitted (`StreamHub.watch`): `heard` once a re-check named its token."""

    token: str
    heard: bool = False


class StreamHub:
    """The process's one channel on the layer, the streams it follows, and their local sockets.

    A channel and group membership per socket made the layer deliver, decode and dispatch every event once
    per screen through Channels' sync-thread hop: 300-440 µs of CPU per delivery, and a process fell over at
    a few thousand deliveries a second (DESIGN §7). The hub joins a stream's group once, with its first
    local screen of that stream (and leaves it with the last).
    """

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.channel: str | None = None
        self.members: dict[str, set[ScreenSocket]] = {}
        self.watches: set[Watch] = set()  # sockets being admitted: the re-checks that name them
        self.subscribed: set[str] = set()
        self.pending: set[str] = set()  # streams whose subscription a `_reconcile` is to settle
        self.listening = False  # on the control group, its receive loop and sweep running
        self.lock = asyncio.Lock()  # one subscription change at a time (joins and leaves interleave)
        self.tasks: list[asyncio.Task[None]] = []
        self.events = 0  # events received from the layer
        self.deliveries = 0  # frames written to sockets (events and heads)
        self.rechecks: set[asyncio.Task[None]] = set()
        self.renewed_at = time.monotonic()  # the memberships are fresh when made (joins add them)
        self.heads: dict[str, int] = {}  # stream -> the highest seq relayed here (`_heard`)
        # What a connect found a token may follow ((kind, token) -> (when, value)): kept only while the hub
        # listens to the re-checks, forgotten on a re-check of the token (issue 30: a reconnect storm of
        # 2,000 screens read the database 4,000 times). `admit_reads`: the connects' database reads.
        self.admitted: dict[tuple[str, str], tuple[float, Any]] = {}
        self.admit_reads = 0
        self.admitting = 0  # sockets being admitted now (`admit`)
        self.queued: deque[asyncio.Future[None]] = deque()  # connects waiting for one of those places
        self.waited = 0  # connects that waited for a place
        self.turned_away = 0  # connects refused by `admit`
        self.draining = False
        self.drain_spread = 0.0  # the seconds the drain's sockets were told to come back within

    # --- admission: the gate and the process's cache of what tokens follow ---

    async def admit(self) -> bool:
        """One more socket being admitted (end it with `admitted_one`): at once while fewer than
        `admit_concurrency()` are, otherwise in turn, once one of them is done (a reconnect storm is admitted
        at the pace the process serves, with no refusal for the page to back off from). False, without any
        work done, when `admit_queue()` connects wait already or the process is draining: the client is told
        to come back later (`try_later`)."""
        if self.draining:
            self.turned_away += 1
            return False
        if self.admitting < admit_concurrency() and not self.queued:
            self.admitting += 1
            return True
        if len(self.queued) >= admit_queue() or admit_concurrency() < 1:
            self.turned_away += 1
            return False
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.queued.append(turn)
        self.waited += 1
        try:
            await turn  # `admitted_one` hands its place over (`admitting` unchanged)
        except BaseException:
            if turn.done() and not turn.cancelled():
                self.admitted_one()  # handed a place just as it went away: pass it on
            else:
                with contextlib.suppress(ValueError):
                    self.queued.remove(turn)
            raise
        if self.draining:
            self.admitted_one()
            self.turned_away += 1
            return False
        return True

    def admitted_one(self) -> None:
        """A socket admitted (or refused after its read): its place goes to the next connect waiting."""
        while self.queued:
            turn = self.queued.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self.admitting -= 1

    def try_later_seconds(self) -> float:
        """The close reason's seconds for a connect refused by `admit`: the drain's spread while draining
        (the siblings take the sockets meanwhile), otherwise `retry_seconds()`."""
        return self.drain_spread if self.draining else retry_seconds()

    def recall(self, kind: str, token: str) -> Any:
        """What a connect of `token` found (`remember`), unless too old; None: read the database."""
        entry = self.admitted.get((kind, token))
        if entry is None:
            return None
        if time.monotonic() - entry[0] > admit_cache_seconds():
            del self.admitted[(kind, token)]
            return None
        return entry[1]

    def remember(self, kind: str, token: str, value: Any, watch: Watch) -> None:
        """Keep what the database said of `token`, read under `watch`: unless a re-check of it was heard
        since the watch began (the read may predate the change), or the hub stopped listening."""
        if self.channel is not None and watch in self.watches and not watch.heard:
            self.admitted[(kind, token)] = (time.monotonic(), value)

    def forget(self, tokens: set[str]) -> None:
        if not self.admitted:
            return
        for kind in ("screen", *_kind_checks):
            for token in tokens:
                self.admitted.pop((kind, token), None)

    def _prune(self) -> None:
        oldest = time.monotonic() - admit_cache_seconds()
        for key in [key for key, (at, _value) in self.admitted.items() if at < oldest]:
            del self.admitted[key]

    async def drain(self, spread: float) -> int:
        """The process is going away: refuse new sockets, tell each open one to come back within `spread`
        seconds (a random moment each, so a sibling process is not hit by all at once) and close it
        (1012). Returns how many were closed."""
        self.draining, self.drain_spread = True, spread
        text = json.dumps({"type": RESTART_TYPE, "within": spread}, separators=(",", ":"))
        frame = {"type": "websocket.send", "text": text}
        closing: dict[int, ScreenSocket] = {}
        for members in self.members.values():
            for socket in members:
                owner = getattr(socket, "consumer", socket)  # a terminal follows two streams
                closing.setdefault(id(owner), socket)
        for n, socket in enumerate(closing.values(), start=1):
            if socket.live:
                socket.deliver(frame)
            socket.live = False
            with contextlib.suppress(Exception):  # already going away
                await socket.close(code=CLOSE_RESTART)
            if n % SWEEP_SLICE == 0:
                await asyncio.sleep(0)
        return len(closing)

    # --- membership ---

    async def join(self, socket: ScreenSocket) -> None:
        """Follow the socket's stream; once this returns, every event of the stream reaches the hub."""
        await self.join_all([socket])

    async def join_all(self, sockets: list[ScreenSocket]) -> None:
        """Follow every socket's stream at once (a terminal's two): one subscription change for all; once
        this returns, every event of each stream reaches the hub. A stream already followed costs nothing
        (no lock, no layer call): a storm of screens of one room waits for nobody's subscription."""
        for socket in sockets:
            self.members.setdefault(socket.stream, set()).add(socket)
        streams = {socket.stream for socket in sockets}
        if self.listening and streams <= self.subscribed:
            return
        try:
            await self._reconcile(streams)
            if not (self.listening and streams <= self.subscribed):
                raise RuntimeError("the channel layer did not take the subscription")
        except BaseException:
            await self.leave_all(sockets)
            raise

    async def leave(self, socket: ScreenSocket) -> None:
        await self.leave_all([socket])

    async def leave_all(self, sockets: list[ScreenSocket]) -> None:
        left = set()
        for socket in sockets:
            members = self.members.get(socket.stream)
            if members is None or socket not in members:
                continue
            members.discard(socket)
            if not members:
                del self.members[socket.stream]
                left.add(socket.stream)  # its last local socket: unsubscribe
        if left or not self._needed():
            await self._reconcile(left)

    async def watch(self, token: str) -> Watch:
        """Hear the re-checks naming `token` from now on, while a socket of it is admitted (its one
        database read, then its joins): a re-check sent once a change commits after that read (a token
        rotated) marks the watch, which the socket looks at before it accepts. End it with `unwatch`."""
        watch = Watch(token)
        self.watches.add(watch)
        if self.listening:
            return watch  # on the control group already: nothing to wait for
        try:
            await self._reconcile(set())  # listening on the control group before the caller reads
            if not self.listening:
                raise RuntimeError("the channel layer did not take the subscription")
        except BaseException:
            await self.unwatch(watch)
            raise
        return watch

    async def unwatch(self, watch: Watch) -> None:
        if watch in self.watches:
            self.watches.discard(watch)
            if not self._needed():
                await self._reconcile(set())

    def _needed(self) -> bool:
        return bool(self.members or self.watches)

    async def _reconcile(self, streams: set[str]) -> None:
        """Make the layer's subscriptions match the local sockets (whatever joined or left meanwhile).

        One change at a time (the lock); the streams of every caller waiting meanwhile are taken together
        (`pending`) and subscribed concurrently: 1,000 terminals connecting at once (each has a stream of
        its own) made 1,000 Redis round trips one after the other, and every socket's connect waited behind
        them (issue 30). A stream whose subscription failed stays unsubscribed: its caller sees it."""
        self.pending |= streams
        async with self.lock:
            needed = self._needed()
            if needed and not self.listening:
                if self.channel is None:
                    self.channel = await self.layer.new_channel()
                await self.layer.group_add(CONTROL_GROUP, self.channel)
                loop = asyncio.get_running_loop()
                self.tasks = [
                    loop.create_task(self._receive(self.channel)),
                    loop.create_task(self._sweep_forever()),
                ]
                self.listening = True
            todo, self.pending = sorted(self.pending), set()
            if self.channel is not None:
                adds = [s for s in todo if s in self.members and s not in self.subscribed]
                drops = [s for s in todo if s not in self.members and s in self.subscribed]
                self.subscribed.difference_update(drops)
                channel = self.channel
                # The adds in one SUBSCRIBE (halls.layer_groups: one each took 5.7 s for 1,000 terminals).
                added = await layer_groups.group_add_many(self.layer, [group_name(s) for s in adds], channel)
                await asyncio.gather(
                    *(self.layer.group_discard(group_name(s), channel) for s in drops),
                    return_exceptions=True,
                )
                snapshots = snapshot_cache.cache()
                for stream in drops:
                    snapshots.bump(stream)  # not heard from now on: its snapshots not trusted by connects
                for stream, outcome in zip(adds, added, strict=True):
                    if isinstance(outcome, BaseException):
                        log.warning("screen hub: could not follow %s: %r", stream, outcome)
                    else:
                        self.subscribed.add(stream)
                        snapshots.bump(stream)  # heard from now on: a snapshot built before missed events
            if not self._needed() and self.channel is not None:
                # No socket left: stop listening, so nothing outlives the sockets (or a test's loop).
                tasks, self.tasks, self.channel = self.tasks, [], None
                self.listening = False
                for stream in self.subscribed:
                    snapshot_cache.cache().bump(stream)  # nor these streams' events
                self.subscribed.clear()
                self.admitted.clear()  # re-checks are not heard from now on
                for task in tasks:
                    task.cancel()
                if tasks:
                    await asyncio.wait(tasks)

    # --- delivery ---

    async def _receive(self, channel: str) -> None:
        while True:
            try:
                message = await self.layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except Exception:  # the layer lost its connection: it reconnects; events meanwhile are lost
                log.exception("screen hub: receiving from the channel layer failed")
                self.admitted.clear()  # and re-checks: what was kept may be out of date
                snapshot_cache.cache().bump_all()  # and events: the snapshots too
                await asyncio.sleep(1)
                continue
            if message.get("type") == RECHECK_TYPE:
                tokens = set(message.get("tokens") or ())
                self.forget(tokens)
                for watch in self.watches:
                    watch.heard = watch.heard or watch.token in tokens
                mine = [s for members in self.members.values() for s in members if s.token in tokens]
                if mine:  # a database read: not on this receive loop (events keep flowing meanwhile)
                    task = asyncio.get_running_loop().create_task(self._recheck(mine))
                    self.rechecks.add(task)
                    task.add_done_callback(self.rechecks.discard)
                continue
            if message.get("type") == CHANNEL_MESSAGE_TYPE:
                self.events += 1
                text = message["text"]
                # A publisher of the previous release (a rolling restart) does not name the stream.
                stream = message.get("stream") or json.loads(text)["stream"]
                self._heard(stream, text)
                self.fan_out(stream, {"type": "websocket.send", "text": text})

    def _heard(self, stream: str, text: str) -> None:
        """Keep the stream's highest seq this hub relayed: a screen's ack at or below it acknowledges what was
        sent (halls.ack_batcher); above it, the stream's cursor decides. The text begins
        ``{"stream":"…","seq":N,`` (halls.events.Event.encode): no second JSON parse per event."""
        at = text.find('"seq":', 0, 120)
        if at < 0:
            return
        end = text.find(",", at)
        try:
            seq = int(text[at + 6 : end])
        except ValueError:
            return
        if seq > self.heads.get(stream, 0):
            self.heads[stream] = seq

    def fan_out(self, stream: str, frame: dict[str, Any]) -> None:
        """Write one frame (the same ASGI message, the same text) to every local socket of the stream. No
        task, queue or sync thread per delivery: a write to uvicorn's socket does not wait (`Sender` below
        for a server whose send waits)."""
        sockets = self.members.get(stream)
        if not sockets:
            return
        for socket in tuple(sockets):  # a write may close a socket, which leaves the set
            socket.deliver(frame)
        self.deliveries += len(sockets)

    # --- the sweep: re-checks, heads, renewed memberships ---

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(sweep_seconds())
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("screen hub: sweep failed")

    async def sweep(self) -> None:
        """Every `sweep_seconds()`, in one database read for all the sockets: close the screens deactivated,
        deleted or moved since they connected (4404: they reconnect and are refused or follow their new
        room); send each socket its stream's head (no "seq": not an event), so a screen that lost the
        *last* event reloads its snapshot without every screen refetching on a timer (the heads also tell
        it the socket is alive); renew the group memberships when `renew_seconds()` have passed since the
        last renewal (the layers forget a member after a day)."""
        self._prune()
        sockets = [socket for members in self.members.values() for socket in members if socket.live]
        if not sockets:
            return
        streams = {socket.stream for socket in sockets}
        following, heads = await database_sync_to_async(read_following)(sockets, streams)
        for stream, seq in heads.items():  # the cursors read: what the streams reached (acks' ceilings)
            if seq > self.heads.get(stream, 0):
                self.heads[stream] = seq
        await self._close_gone(sockets, following)
        await self._send_heads(streams, heads)
        if time.monotonic() - self.renewed_at < renew_seconds():
            return
        async with self.lock:
            self.renewed_at = time.monotonic()
            if self.channel is not None:
                await self.layer.group_add(CONTROL_GROUP, self.channel)
                for n, stream in enumerate(sorted(self.subscribed), start=1):
                    await self.layer.group_add(group_name(stream), self.channel)
                    if n % SWEEP_SLICE == 0:
                        await asyncio.sleep(0)  # a renewal that does not wait would not let events by

    async def _send_heads(self, streams: set[str], heads: dict[str, int]) -> None:
        """Each socket its stream's head, `SWEEP_SLICE` sockets at a time, the slices spread over
        `SWEEP_SPREAD` of the sweep's period: a process with 1,000 terminals writes 2,000 heads a sweep
        (each terminal's own stream and its speciality's), ~60 ms of the loop sent at once, which every
        purchase answered meanwhile waited for (the sales bench's p99 in the second of the sweep: 390 ms,
        the other seconds ~160). A head read at the sweep's start and sent later is older, never newer,
        than the events the socket has had: at worst it makes no reload that a fresher one would have."""
        every = sweep_seconds()
        frames = {
            stream: {
                "type": "websocket.send",
                "text": json.dumps(
                    {"type": HEAD_TYPE, "stream": stream, "head": heads.get(stream, 0), "every": every},
                    separators=(",", ":"),
                ),
            }
            for stream in streams
        }
        writes = [
            (socket, frames[stream]) for stream in streams for socket in tuple(self.members.get(stream, ()))
        ]
        slices = max(1, -(-len(writes) // SWEEP_SLICE))
        pause = every * SWEEP_SPREAD / slices
        for start in range(0, len(writes), SWEEP_SLICE):
            for socket, frame in writes[start : start + SWEEP_SLICE]:
                if socket.live:  # not one that closed since the sweep began
                    socket.deliver(frame)
            self.deliveries += min(SWEEP_SLICE, len(writes) - start)
            await asyncio.sleep(pause if start + SWEEP_SLICE < len(writes) else 0)

    async def _recheck(self, sockets: list[ScreenSocket]) -> None:
        try:
            following, _ = await database_sync_to_async(read_following)(sockets, set())
            await self._close_gone(sockets, following)
        except Exception:  # the sweep checks them again
            log.exception("screen hub: re-check failed")

    async def _close_gone(
        self, sockets: list[ScreenSocket], following: dict[tuple[str, str], set[str]]
    ) -> None:
        """Close each socket whose screen (or terminal) no longer follows the socket's stream (4404); what
        its connect found is forgotten, so its reconnect reads the database."""
        for socket in sockets:
            if socket.stream not in following.get((kind_of(socket), socket.token), ()):
                self.admitted.pop((kind_of(socket), socket.token), None)
                socket.live = False
                with contextlib.suppress(Exception):  # already going away
                    await socket.close(code=CLOSE_GONE)


def recheck_on_commit(tokens: list[str], using: str | None = None) -> None:
    """Once the current transaction commits, every hub re-checks the sockets of these tokens (and marks
    the watches of sockets being admitted with them): a device's token rotated, a device retired."""
    transaction.on_commit(lambda: _send_recheck(tokens), using=using)


def _send_recheck(tokens: list[str]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        events.send_to_group(layer, CONTROL_GROUP, {"type": RECHECK_TYPE, "tokens": tokens})
    except Exception:  # the hubs' sweep closes them within sweep_seconds()
        log.exception("could not ask the screen hubs to re-check %d screens", len(tokens))


def screen_changed(sender: Any, instance: Screen, **kwargs: Any) -> None:
    """A `Screen` saved or deleted (the operator's admin): once that commits, every hub hears a
    ``screens.recheck`` on `CONTROL_GROUP` and re-checks it, so a deactivated, deleted or moved screen's
    open socket closes at once, before the sweep (a post_save / post_delete receiver, in halls.apps)."""
    if kwargs.get("raw") or kwargs.get("created"):
        return  # a fixture load, or a new screen: nothing is open on it yet
    recheck_on_commit([instance.token], using=kwargs.get("using"))


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, StreamHub] = weakref.WeakKeyDictionary()


def hub() -> StreamHub:
    """The running loop's hub (a server process runs one loop; tests run one per test)."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        found = _hubs[loop] = StreamHub(get_channel_layer())
    return found


async def drain_process(spread: float | None = None) -> int:
    """A web process stopping gracefully (config.web_worker): its screens and terminals are told to
    reconnect within `spread` seconds (`drain_spread_seconds()` by default) and closed; new ones are
    refused meanwhile. Returns how many sockets were closed."""
    found = _hubs.get(asyncio.get_running_loop())
    if found is None:
        return 0
    return await found.drain(drain_spread_seconds() if spread is None else spread)


# --- writing to a socket without waiting ---------------------------------------------------------------


async def _resume(coro: Coroutine[Any, Any, Any], waiting: Any) -> None:
    """Run to its end a coroutine that was stepped by hand and is waiting on `waiting`."""
    try:
        while True:
            if isinstance(waiting, asyncio.Future):
                waiting._asyncio_future_blocking = False  # what a Task does with what it awaits
                await asyncio.wait([waiting])  # the coroutine reads the result (or error) itself
            else:  # a bare yield (sleep(0))
                await asyncio.sleep(0)
            try:
                waiting = coro.send(None)
            except StopIteration:
                return
    finally:
        coro.close()  # a no-op once it has finished; cancelled, it is not left half run


class Sender:
    """Writes frames to one ASGI socket in order, never making the caller wait.

    A send is stepped by hand: when the server writes to its transport at once (uvicorn does), the
    send completes within the call, without a task. If a send has to wait (a server with write
    back-pressure), a task finishes it and the next frames queue behind it (at most `MAX_BACKLOG`),
    so a slow socket never holds up the others.
    """

    def __init__(self, send: Any, on_overflow: Any) -> None:
        self.send = send
        self.on_overflow = on_overflow
        self.backlog: deque[dict[str, Any]] | None = None  # not None while a send waits
        self.task: asyncio.Task[None] | None = None

    def write(self, frame: dict[str, Any]) -> bool:
        """False when the socket is gone (the server refused the frame)."""
        if self.backlog is not None:
            if len(self.backlog) >= MAX_BACKLOG:
                self.on_overflow()
                return False
            self.backlog.append(frame)
            return True
        coro = self.send(frame)
        try:
            waiting = coro.send(None)
        except StopIteration:
            return True
        except Exception:  # a closed socket: its disconnect removes it from the hub
            coro.close()
            return False
        self.backlog = deque()
        self.task = asyncio.get_running_loop().create_task(self._finish(coro, waiting))
        return True

    async def _finish(self, coro: Coroutine[Any, Any, Any], waiting: Any) -> None:
        try:
            await _resume(coro, waiting)
            while self.backlog:
                await self.send(self.backlog.popleft())
        except Exception:
            log.debug("screen socket: a write failed; the socket is going away", exc_info=True)
        finally:
            self.backlog = None
            self.task = None
