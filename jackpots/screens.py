"""Pool meters on the hall screens: what a screen shows of a pool, hit announcements, the meter publisher.

Where the events go. A hall screen follows ONE stream, its room's (``room.<id>``, see halls.consumers), and
reloads its snapshot on a gap in that stream's sequence. So pool events for screens are emitted onto the
room streams of every room (with an active screen) of the pool's venue, or of every venue of the pool's
network, each numbered by halls.events in that room's sequence: the screen needs no second stream and
its recovery rule stays as it is. The engine's own ``pool.<id>`` stream is left to the engine.

- ``pool.hit``: one per paid winner, emitted in the award's own transaction by a listener registered with
  jackpots.services.notify, so it is numbered, committed and published with the award (never lost to a
  poller, never announced for a rolled-back award). It carries the pool as it is after the hit.
- ``pool.meters``: ``{"pools": [...]}``, every pool of the room that changed since the last tick, each
  whole (every level's amount; ``{"id", "active": false}`` for a pool taken out of service), published
  by `publish_meters`: ONE event per room per tick whatever the number of pools (each event is a write
  to every screen socket of the room, so one per pool multiplied the fan-out), at most 4 ticks a second,
  and a pool only when a figure a screen shows has changed.

Why a Celery beat task and not a task per contribution or a loop of our own. Contributions arrive by
thousands a second on the hot path, which must stay one INSERT; one Celery task each would cost far more
than the insert (about 550 tasks/s per worker here, DESIGN §7). A beat entry every 0.25 s costs 4 tasks a
second whatever the load, each a few index range scans (`meters.changed_pools_since`) and, only for pools
that changed, one meter read. It runs wherever the hall's worker and its single beat run: in production
the Celery worker + beat, and in the embedded hall the in-process worker and beat (halls.embedded) with no
extra process or thread to start, stop or supervise, which a dedicated loop would need in both.

How the limit and "only when changed" hold with several workers. Beat may hand two ticks to two workers,
or a busy worker may run a late tick right before the next one; the rules are therefore kept in the
database, not by the schedule: a tick publishes inside one transaction holding a row lock (a second tick
meanwhile skips), publishes only if the previous publication ended at least `MIN_INTERVAL` ago (a tick a
little early waits for it), and publishes a pool only if the fingerprint of what screens show (names and
amounts in cents) differs from the one it last published. The state lives in two kinds of rows of
jackpots.MeterPublisherState: ``meters:tick`` (the lock; the end of the last publication in ms) and
``meters:pool.<id>`` (the fingerprint last published). The poll cursor itself is per process: a
process that missed ticks scans a few more rows, and fingerprints keep it from publishing again what
was already shown.

Meters never show more than the pool holds: amounts come from `meters.pool_meters` (live meter capped at
the ceiling, whole cents rounded down), read while holding FOR KEY SHARE on the pool's level rows, so
no award, fold, correction or parameter change commits between reading a level's `version` and its
amount. Screens keep, per level, the newest reading by (version, amount) — within one version a meter
only grows — so a reading that was on its way while a newer one arrived (a snapshot racing an event, a
tick racing a hit) never takes a meter back above what an award left.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from celery import shared_task
from django.db import connection, transaction
from django.db.models import Q

from halls import events, metrics
from halls.eventtypes import EventType, PoolMeters
from halls.models import Network, Room
from jackpots import engine
from jackpots.models import Award, MeterPublisherState, Pool, PoolLevel
from jackpots.services import meters

log = logging.getLogger("hall.jackpots.screens")


# At most 4 meter events a second per pool: two publications are at least this far apart.
MIN_INTERVAL = 0.25
# A tick that comes this much too early (beat and worker jitter) waits instead of skipping its turn.
EARLY_WAIT = 0.1
# Every pool is re-read now and then: a contribution committed after a later id was polled is caught.
FULL_REFRESH_SECONDS = 10.0

TICK_ROW = "meters:tick"
POOL_ROW = "meters:pool.{}"

CATEGORY_LABELS = {
    "royal_flush": "Escalera real",
    "straight_flush": "Escalera de color",
    "four_of_a_kind": "Póker",
    "full_house": "Full",
    "flush": "Color",
    "straight": "Escalera",
    "three_of_a_kind": "Trío",
    "two_pair": "Dobles parejas",
    "pair": "Pareja",
    "high_card": "Carta alta",
    "three_sevens_same_suit": "Tres sietes del mismo palo",
    "three_sevens": "Tres sietes",
    "two_sevens_same_suit": "Dos sietes del mismo palo",
    "two_sevens": "Dos sietes",
    "first_card_seven": "Primera carta siete",
}
SOURCE_TYPES = {"table": "Mesa", "machine": "Máquina", "bingo_room": "Sala", "venue": "Sala"}
_LABEL_PART = re.compile(r"(?P<key>[a-z_]+):(?P<value>[^/]+)")


# --- which pools a screen shows, and where their events go ----------------------------------------------


# Pools an app shows in its own way rather than in the ribbon: bingo's prize programs are announced with
# the game (amount, max ball) and their awards with the Bingo, so a second meter and a second hit overlay
# would repeat them, and could disagree with the announced amount. Apps register a function that names
# those pools; halls screens then neither list them nor get their meter or hit events.
_shown_elsewhere: list[Callable[[], set[int]]] = []


def register_own_display(provider: Callable[[], set[int]]) -> None:
    if provider not in _shown_elsewhere:
        _shown_elsewhere.append(provider)


def shown_elsewhere() -> set[int]:
    return set().union(*(provider() for provider in _shown_elsewhere))


def venue_pool_ids(venue_id: int) -> list[int]:
    """Active pools of the venue and of the networks it belongs to, in id order."""
    return sorted(
        set(
            Pool.objects.filter(active=True)
            .filter(Q(venue_id=venue_id) | Q(network__venues__id=venue_id))
            .values_list("pk", flat=True)
        )
    )


def rooms_showing(pools: Iterable[Pool]) -> dict[int, list[Room]]:
    """Per pool, the rooms whose screens show it: rooms with an active screen in the pool's venue(s)."""
    hidden = shown_elsewhere()
    pools = [p for p in pools if p.pk not in hidden]
    venues_of: dict[int, set[int]] = {}
    network_ids = {p.network_id for p in pools if p.network_id is not None}
    network_venues: dict[int, set[int]] = defaultdict(set)
    if network_ids:
        for network_id, venue_id in Network.venues.through.objects.filter(
            network_id__in=network_ids
        ).values_list("network_id", "venue_id"):
            network_venues[network_id].add(venue_id)
    for pool in pools:
        if pool.venue_id is not None:
            venues_of[pool.pk] = {pool.venue_id}
        else:
            venues_of[pool.pk] = network_venues.get(pool.network_id or 0, set())
    all_venues = set().union(*venues_of.values()) if venues_of else set()
    rooms = list(Room.objects.filter(venue_id__in=all_venues, screens__active=True).distinct().order_by("pk"))
    return {
        pool_id: [r for r in rooms if r.venue_id in venue_ids] for pool_id, venue_ids in venues_of.items()
    }


# --- what a screen shows of a pool ----------------------------------------------------------------------


def _level_versions(pool_ids: list[int]) -> dict[int, int]:
    """The levels' versions, holding FOR KEY SHARE on them until the caller's transaction ends.

    Contributors hold the same lock, so they go on; every writer of a level's folded state (fold, award,
    correction, parameter change) takes FOR UPDATE and waits, so what is read next matches these versions.
    """
    if not pool_ids:
        return {}
    if connection.vendor == "postgresql":
        with connection.cursor() as db:
            db.execute(
                f"SELECT id, version FROM {PoolLevel._meta.db_table} "  # noqa: S608 (a model's table name)
                "WHERE pool_id = ANY(%s) ORDER BY id FOR KEY SHARE",
                [pool_ids],
            )
            return {int(pk): int(version) for pk, version in db.fetchall()}
    # SQLite (the embedded hall): one writer at a time, the transaction is the lock.
    return dict(PoolLevel.objects.filter(pool_id__in=pool_ids).values_list("pk", "version"))


def pool_display(meter: meters.PoolMeter, versions: dict[int, int]) -> dict[str, Any]:
    """A pool as screens show it. Never the reserve, the must-hit-by value or anything else secret."""
    return {
        "id": meter.pool_id,
        "name": meter.name,
        "code": meter.code,
        "currency": meter.currency,
        "levels": [
            {
                "id": level.level_id,
                "name": level.name,
                "position": level.position,
                "kind": level.kind,
                "amount": str(level.amount),
                "hits": level.hits,
                "version": versions.get(level.level_id, 0),
            }
            for level in meter.levels
        ],
    }


def read_displays(pool_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Consistent displays of the pools (see `_level_versions`), inactive pools included."""
    ids = sorted(set(pool_ids))
    if not ids:
        return {}
    with transaction.atomic():
        versions = _level_versions(ids)
        found = meters.pool_meters(ids)
    return {pool_id: pool_display(meter, versions) for pool_id, meter in found.items()}


def fingerprint(display: dict[str, Any]) -> int:
    """63 bits of what a screen shows of a pool (names and amounts), to publish only what changed."""
    shown = [
        display["name"],
        display["currency"],
        [(lv["id"], lv["name"], lv["amount"]) for lv in display["levels"]],
    ]
    digest = hashlib.sha256(json.dumps(shown, separators=(",", ":")).encode()).hexdigest()
    return int(digest[:15], 16)


def screen_snapshot(room: Room) -> dict[str, Any]:
    """The pools section of a hall screen's snapshot: the venue's pools with their meters."""
    hidden = shown_elsewhere()
    displays = read_displays(pk for pk in venue_pool_ids(room.venue_id) if pk not in hidden)
    return {"pools": [displays[pk] for pk in sorted(displays)]}


def visible_pool(venue_id: int, pool_id: int) -> Pool | None:
    """The pool if a screen of the venue may show it (the venue's, or its network's), else None."""
    if pool_id not in venue_pool_ids(venue_id):
        return None
    return Pool.objects.get(pk=pool_id)


def meter_page_snapshot(pool: Pool) -> dict[str, Any]:
    """The table-side meter page: one pool, and the paid winners of its last hit (a hand may pay several)."""
    display = read_displays([pool.pk]).get(pool.pk)
    last = (
        Award.objects.filter(pool=pool, amount__gt=0).order_by("-id").values_list("settlement_id", flat=True)
    )
    settlement_id = last.first()
    last_hits = []
    if settlement_id is not None:
        awards = (
            Award.objects.filter(settlement_id=settlement_id, amount__gt=0)
            .select_related("settlement", "level")
            .order_by("order")
        )
        for award in awards:
            data = {
                "settlement": award.settlement_id,
                "order": award.order,
                "level": award.level_id,
                "level_name": award.level.name,
                "kind": award.settlement.kind,
                "source": award.source,
                "seat": award.seat,
                "hand": award.hand,
                "category": award.category,
                "amount": award.amount,
                "new_amount": engine.cents_down(award.settlement.meter_after),
                "at": award.created_at,
            }
            last_hits.append(hit_display(pool, data, context=award.settlement.context, display=None))
    return {"pool": display, "last_hits": last_hits}


# --- hit announcements --------------------------------------------------------------------------------


def _label_parts(label: str) -> dict[str, str]:
    """``"table:12/hand:40/seat:3"`` -> {"table": "12", "hand": "40", "seat": "3"}."""
    return {m["key"]: m["value"] for m in _LABEL_PART.finditer(label or "")}


def source_label(source: str, context: dict[str, Any], label: str = "") -> str:
    """Who won, for players: the table's name when the table app gave it, else a readable label.

    A machine's source holds its database id ("machine:17"); players know it by its asset number, which
    the machine gateway gives as the winner's ``label``: "Máquina 1001", never "Máquina 17".
    """
    for key in ("table_name", "source_name", "machine_name", "room_name"):
        if context.get(key):
            return str(context[key])
    parts = _label_parts(source)
    if "machine" in parts and label:
        return f"{SOURCE_TYPES['machine']} {label}"
    for key, word in SOURCE_TYPES.items():
        if key in parts:
            return f"{word} {parts[key]}"
    return source


def source_kind(source: str) -> str:
    """The kind of winner ("table", "machine", ...), for screens that word a hit by it."""
    parts = _label_parts(source)
    return next((key for key in SOURCE_TYPES if key in parts), "")


def hit_display(
    pool: Pool, data: dict[str, Any], *, context: dict[str, Any], display: dict[str, Any] | None
) -> dict[str, Any]:
    """A `pool.hit` as screens show it: pool, level, where (table / source, seat, hand), paid, new amount.

    A machine's hit says which machine (its asset number in ``machine``); its ``hand`` is the game id.
    """
    source = str(data.get("source") or context.get("source") or "")
    parts = _label_parts(source)
    label = str(data.get("label") or context.get("label") or "")
    kind = source_kind(source)
    seat = str(data.get("seat") or "")
    if ":" in seat:  # a mystery hit carries the contribution's detail ("hand:40/seat:3")
        seat = _label_parts(seat).get("seat", "")
    seat = seat or parts.get("seat", "")
    hand = str(data.get("hand") or context.get("hand") or parts.get("hand", ""))
    category = str(data.get("category") or "")
    new_amount = data.get("new_amount")
    at = data.get("at")
    return {
        "pool": pool.pk,
        "name": pool.name,
        "currency": pool.currency,
        "settlement": data.get("settlement"),
        "order": data.get("order"),
        "level": data.get("level"),
        "level_name": data.get("level_name") or "",
        "kind": data.get("kind") or "",
        "source": source_label(source, context, label),
        "source_kind": kind,
        "machine": label if kind == "machine" else "",
        "seat": seat,
        "hand": hand,
        "category": category,
        "category_label": CATEGORY_LABELS.get(category, category.replace("_", " ")),
        "amount": str(data.get("amount")),
        "new_amount": None if new_amount is None else str(new_amount),
        "at": at.isoformat() if isinstance(at, datetime) else at,
        "meter": display,
    }


def on_pool_event(pool: Pool, type: str, data: dict[str, Any]) -> None:
    """Listener of jackpots.services.notify, inside the engine's transaction: announce hits on the screens.

    The award has locked the pool's levels FOR UPDATE and saved them; the room streams' cursors are locked
    after them, in room order, like every other emitter of the room streams (locks.py's order). A failure
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
    hit = hit_display(pool, data, context=context, display=display)
    for room in rooms:
        events.emit(room.stream, EventType.POOL_HIT, hit)


# --- the meter publisher --------------------------------------------------------------------------------


@dataclass
class _PollState:
    """This process's place in the ledger tables (see the module docstring: fingerprints are shared)."""

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
    return MeterPublisherState.objects.select_for_update(skip_locked=True).filter(name=TICK_ROW).first()


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
        displays = read_displays(pools.keys())
        rows = {
            row.name: row
            for row in MeterPublisherState.objects.select_for_update().filter(
                name__in=[POOL_ROW.format(pk) for pk in displays]
            )
        }
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


@shared_task(ignore_result=True)
def publish_pool_meters() -> int:
    """Celery door: beat runs it every 0.25 s (CELERY_BEAT_SCHEDULE "publish-pool-meters")."""
    return len(publish_meters())
