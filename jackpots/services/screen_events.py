"""What the pool engine tells the hall screens: hit announcements, in the award's transaction, and the
meter publisher (one `pool.meters` event per room per tick, only for pools whose shown figures changed).

Pool events go onto the ROOM streams (``room.<id>``) of the rooms showing the pool, numbered in that
room's sequence: a hall screen follows one stream and reloads its snapshot on a gap in it. The engine's
own ``pool.<id>`` stream is left to the engine.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import translation

from halls import events, metrics
from halls.eventtypes import EventType, PoolMeters
from halls.models import Room
from jackpots.models import MeterPublisherState, Pool
from jackpots.services import locks
from jackpots.services.readmodels import meters
from jackpots.services.readmodels.screens import fingerprint, hit_display, read_displays, rooms_showing

log = logging.getLogger("hall.jackpots.screens")


# At most 4 meter events a second per pool: two publications are at least this far apart. One event per
# room per tick whatever the number of pools: each event is a write to every screen socket of the room.
MIN_INTERVAL = 0.25
# A tick that comes this much too early (beat and worker jitter) waits instead of skipping its turn.
EARLY_WAIT = 0.1
# Every pool is re-read now and then: a contribution committed after a later id was polled is caught.
FULL_REFRESH_SECONDS = 10.0

# The publisher's state rows (jackpots.MeterPublisherState), shared by every worker: beat may hand two
# ticks to two workers, so the limit and "only when changed" are kept in the database, not by the schedule.
TICK_ROW = "meters:tick"  # the lock; the end of the last publication in ms
POOL_ROW = "meters:pool.{}"  # the fingerprint last published for the pool


def on_pool_event(pool: Pool, type: str, data: dict[str, Any]) -> None:
    """Listener of jackpots.services.notify, inside the engine's transaction: announce hits on the screens.

    The award has locked the pool's levels FOR UPDATE and saved them; the room streams' cursors are locked
    after them, in room order, like every other emitter of the room streams (halls.locks). A failure
    here is logged and rolled back to a savepoint: a screen never stands in the way of a payout (the
    publisher shows the new meter at its next tick anyway).
    """
    if type != EventType.POOL_HIT:
        return
    try:
        with transaction.atomic():
            _announce_hit(pool, data)
    except Exception:
        log.exception("could not announce hit %s of pool %s on the screens", data.get("settlement"), pool.pk)


def _announce_hit(pool: Pool, data: dict[str, Any]) -> None:
    rooms = rooms_showing([pool]).get(pool.pk, [])
    if not rooms:
        return
    settlement_id = data.get("settlement")
    context: dict[str, Any] = {}
    if settlement_id is not None:
        found = pool.settlements.filter(pk=settlement_id).values_list("context", flat=True).first()
        context = dict(found or {})
    display = read_displays([pool.pk]).get(pool.pk)
    hits: dict[str, dict[str, Any]] = {}  # a network pool's rooms may be in venues of both languages
    for room in rooms:
        language = room.venue.language
        if language not in hits:
            with translation.override(language):
                hits[language] = hit_display(pool, data, context=context, display=display)
        events.emit(room.stream, EventType.POOL_HIT, hits[language])


@dataclass
class _PollState:
    """This process's place in the ledger tables. A process that missed ticks scans a few more rows; the
    fingerprints, shared in the database, keep it from publishing again what was already shown."""

    cursor: meters.MeterCursor | None = None
    last_full: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


_poll = _PollState()


def _pools_shown() -> set[int]:
    """Pools whose meter screens were last sent (an inactive pool's row holds 0)."""
    names = MeterPublisherState.objects.filter(name__startswith=POOL_ROW.format("")).exclude(value=0)
    return {int(name.rpartition(".")[2]) for name in names.values_list("name", flat=True)}


def _now_ms() -> int:
    return int(time.time() * 1000)


def _lock_tick() -> MeterPublisherState | None:
    """The publisher's row, locked; None when another tick holds it (that one publishes)."""
    MeterPublisherState.objects.get_or_create(name=TICK_ROW)
    return locks.lock_publisher_tick(TICK_ROW)


def publish_meters(*, full: bool = False) -> dict[int, dict[str, Any]]:
    """Publish the meters of the pools that changed since the last publication; returns what was published.

    Call it as often as you like (beat does, every 0.25 s): it publishes at most once per `MIN_INTERVAL`,
    one `pool.meters` event per room stream showing any changed pool, carrying all of that room's.
    """
    with _poll.lock:  # one tick at a time in this process (the embedded worker has one thread anyway)
        return _publish(full=full)


def _publish(*, full: bool) -> dict[int, dict[str, Any]]:
    started = time.monotonic()
    if full or started - _poll.last_full >= FULL_REFRESH_SECONDS:
        changed, cursor = meters.changed_pools_since(None)
        changed |= _pools_shown()  # a pool taken out of service is taken off the screens
        refreshed = True
    else:
        changed, cursor = meters.changed_pools_since(_poll.cursor)
        refreshed = False
    if not changed:
        _poll.cursor = cursor
        return {}

    # Too soon after the last publication: a tick a little early waits (outside any transaction, so
    # nothing is held meanwhile, SQLite's single write lock least of all); one much too early leaves it
    # to the next tick. Either way our cursor stays where it was, so nothing is lost.
    last = MeterPublisherState.objects.filter(name=TICK_ROW).values_list("value", flat=True).first() or 0
    wait = (last + MIN_INTERVAL * 1000 - _now_ms()) / 1000
    if wait > EARLY_WAIT:
        return {}
    if wait > 0:
        time.sleep(wait)

    published: dict[int, dict[str, Any]] = {}
    with transaction.atomic():
        tick = _lock_tick()
        if tick is None:
            return {}  # another tick is publishing: the next tick looks again
        if _now_ms() < tick.value + MIN_INTERVAL * 1000:
            return {}  # another tick published while we waited
        pools = {p.pk: p for p in Pool.objects.filter(pk__in=changed)}
        # The publisher's rows before the pools' levels (lock order); a display per pool found.
        rows = locks.lock_publisher_rows([POOL_ROW.format(pk) for pk in pools])
        displays = read_displays(pools.keys())
        for pool_id, display in sorted(displays.items()):
            pool = pools[pool_id]
            shown = fingerprint(display) if pool.active else 0
            row = rows.get(POOL_ROW.format(pool_id))
            if row is not None and row.value == shown:
                continue
            if row is None and not pool.active:
                continue  # never shown, nothing to take down
            published[pool_id] = display if pool.active else {"id": pool_id, "active": False}
            if row is None:
                MeterPublisherState.objects.create(name=POOL_ROW.format(pool_id), value=shown)
            else:
                row.value = shown
                row.save(update_fields=["value"])
        if published:
            rooms = rooms_showing(pools[pk] for pk in published)
            by_room: dict[int, tuple[Room, list[int]]] = {}
            for pool_id in published:
                for room in rooms.get(pool_id, []):
                    by_room.setdefault(room.pk, (room, []))[1].append(pool_id)
            for room_id in sorted(by_room):  # room order, like every emitter of the room streams
                room, pool_ids = by_room[room_id]
                batch = [published[pool_id] for pool_id in sorted(pool_ids)]
                events.emit(room.stream, EventType.POOL_METERS, PoolMeters(pools=batch))
            if tick.value:  # the meters on the screens were this old when these went out
                metrics.METER_PUBLISH_LAG.observe(max(0, _now_ms() - tick.value) / 1000)
            tick.value = _now_ms()
            tick.save(update_fields=["value"])
    _poll.cursor = cursor
    if refreshed:
        _poll.last_full = started
    if published:
        log.debug(
            "published meters of pools %s in %.1f ms", sorted(published), (time.monotonic() - started) * 1e3
        )
    return published


def reset_poll_state() -> None:
    """Forget this process's place (tests; a process that wants a full refresh at its next tick)."""
    with _poll.lock:
        _poll.cursor = None
        _poll.last_full = 0.0
