"""What a hall screen shows of a pool: its meters (never a secret figure), its hits, and which rooms'
screens show which pools. Read-only; the events that carry these are sent by services.screen_events."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from halls import money
from halls.models import Network, Room
from jackpots.models import Award, Pool
from jackpots.services import locks
from jackpots.services.readmodels import meters
from jackpots.sources import PoolSource, SourceError

# Hand categories and winners' sources as players read them, in the screen's language (gettext_lazy).
CATEGORY_LABELS = {
    "royal_flush": _("Royal flush"),
    "straight_flush": _("Straight flush"),
    "four_of_a_kind": _("Four of a kind"),
    "full_house": _("Full house"),
    "flush": _("Flush"),
    "straight": _("Straight"),
    "three_of_a_kind": _("Three of a kind"),
    "two_pair": _("Two pair"),
    "pair": _("Pair"),
    "high_card": _("High card"),
    "three_sevens_same_suit": _("Three sevens of the same suit"),
    "three_sevens": _("Three sevens"),
    "two_sevens_same_suit": _("Two sevens of the same suit"),
    "two_sevens": _("Two sevens"),
    "first_card_seven": _("First card a seven"),
}
SOURCE_TYPES = {"table": _("Table"), "machine": _("Machine"), "bingo_room": _("Room"), "venue": _("Hall")}


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
    rooms = list(
        Room.objects.filter(venue_id__in=all_venues, screens__active=True)
        .select_related("venue")
        .distinct()
        .order_by("pk")
    )
    return {
        pool_id: [r for r in rooms if r.venue_id in venue_ids] for pool_id, venue_ids in venues_of.items()
    }


# --- what a screen shows of a pool ----------------------------------------------------------------------


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
    """Consistent displays of the pools (see `locks.level_versions`), inactive pools included.

    Amounts come from `meters.pool_meters` (capped at the ceiling, whole cents down), so a screen never
    shows more than the pool holds. Screens keep, per level, the newest reading by (version, amount), so
    a reading overtaken on its way (a snapshot racing an event, a tick racing a hit) never takes a meter
    back above what an award left."""
    ids = sorted(set(pool_ids))
    if not ids:
        return {}
    with transaction.atomic():
        versions = locks.level_versions(ids)
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
                "new_amount": money.cents_down(award.settlement.meter_after),
                "at": award.created_at,
            }
            last_hits.append(hit_display(pool, data, context=award.settlement.context, display=None))
    return {"pool": display, "last_hits": last_hits}


def _member(source: str) -> PoolSource | None:
    """The member an award's stored source names ("table:12/hand:40/seat:3" -> table 12); None for a label
    that names none ("overflow", a bare name)."""
    try:
        return PoolSource.parse(source)
    except SourceError:
        return None


def _detail(parts: Iterable[str], key: str) -> str:
    """The value of a ``key:value`` detail part ("3" for "seat" in ("hand:40", "seat:3"))."""
    return next((value for k, sep, value in (p.partition(":") for p in parts) if sep and k == key), "")


def source_label(source: str, context: dict[str, Any], label: str = "") -> str:
    """Who won, for players: the table's name when the table app gave it, else a readable label.

    A machine's source holds its database id ("machine:17"); players know it by its asset number, which
    the machine gateway gives as the winner's ``label``: "Máquina 1001", never "Máquina 17".
    """
    for key in ("table_name", "source_name", "machine_name", "room_name"):
        if context.get(key):
            return str(context[key])
    member = _member(source)
    if member is None or member.kind not in SOURCE_TYPES:
        return source
    if member.kind == "machine" and label:
        return f"{SOURCE_TYPES['machine']} {label}"  # "Máquina 1001" / "Machine 1001"
    return f"{SOURCE_TYPES[member.kind]} {member.id}"


def source_kind(source: str) -> str:
    """The kind of winner ("table", "machine", ...), for screens that word a hit by it."""
    member = _member(source)
    return member.kind if member is not None and member.kind in SOURCE_TYPES else ""


def hit_display(
    pool: Pool, data: dict[str, Any], *, context: dict[str, Any], display: dict[str, Any] | None
) -> dict[str, Any]:
    """A `pool.hit` as screens show it: pool, level, where (table / source, seat, hand), paid, new amount.

    A machine's hit says which machine (its asset number in ``machine``); its ``hand`` is the game id.
    """
    source = str(data.get("source") or context.get("source") or "")
    member = _member(source)
    label = str(data.get("label") or context.get("label") or "")
    kind = source_kind(source)
    seat = str(data.get("seat") or "")
    if ":" in seat:  # a mystery hit carries the contribution's detail ("hand:40/seat:3")
        seat = _detail(seat.split("/"), "seat")
    seat = seat or (member.part("seat") or "" if member else "")
    hand = str(data.get("hand") or context.get("hand") or (member.part("hand") or "" if member else ""))
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
        "category_label": str(CATEGORY_LABELS.get(category, category.replace("_", " "))),
        "amount": str(data.get("amount")),
        "new_amount": None if new_amount is None else str(new_amount),
        "at": at.isoformat() if isinstance(at, datetime) else at,
        "meter": display,
    }
