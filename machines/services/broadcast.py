"""The progressive broadcast: every link group's level amounts, for every linked machine, at least twice
a second (machines.broadcaster sends them from a loop of its own). It is also the machines' link
heartbeat: a machine that hears none for 5 s locks itself, so it goes out even when nothing changed."""

from __future__ import annotations

import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from jackpots.services.readmodels import meters
from jackpots.widearea import core as widearea_core
from jackpots.widearea.models import WideAreaMirror
from jackpots.widearea.services import venue as widearea
from machines import protocol
from machines.models import LinkGroup, LinkMember


def channel_group(group_id: int) -> str:
    return f"machines.link.{group_id}"


@dataclass(frozen=True)
class LinkLevels:
    """A link group with members and its pool's levels (name, amount), as the machines hear them."""

    group_id: int
    code: str
    levels: list[tuple[str, Decimal]]
    # wide-area levels withdrawn (the central silent past the pool's window): named so the machines show
    # them unavailable; they are left out of `levels`
    unavailable: tuple[str, ...] = ()


def payload(item: LinkLevels, at_ms: int) -> dict[str, Any]:
    """The broadcast of one group: the protocol's progressive message, and the withdrawn wide-area levels
    (``"unavailable": [names]``) when there are any."""
    message = protocol.progressive(item.code, item.levels, at_ms)
    if item.unavailable:
        message["unavailable"] = list(item.unavailable)
    return message


def _wide_area(
    mirror: WideAreaMirror, levels: list[tuple[str, Decimal]], now: float
) -> tuple[list[tuple[str, Decimal]], tuple[str, ...]] | None:
    """A mirror pool's levels as its machines hear them: the wide-area ones at the central's amounts while
    offered; withdrawn, left out and named unavailable, or None (lock: no broadcast, the machines lock)."""
    from datetime import UTC, datetime

    state = widearea.offered(mirror, datetime.fromtimestamp(now, UTC))
    if state == widearea_core.Availability.LOCKED:
        return None
    wide = set(mirror.wide_levels)
    if state == widearea_core.Availability.UNAVAILABLE:
        return [lv for lv in levels if lv[0] not in wide], tuple(name for name, _ in levels if name in wide)
    central = widearea.central_levels(mirror)
    return [(name, central.get(name, amount) if name in wide else amount) for name, amount in levels], ()


def link_levels() -> list[LinkLevels]:
    """Every link group with members and its levels, in group id order: one query for the groups, one for
    all their pools' live levels (meters.live_levels), one for their wide-area mirrors."""
    groups = list(
        LinkGroup.objects.filter(
            pk__in=LinkMember.objects.filter(left_at__isnull=True).values("group_id")
        ).values_list("pk", "code", "pool_id")
    )
    if not groups:
        return []
    by_pool = meters.live_levels({pool_id for _, _, pool_id in groups})
    mirrors = {
        m.pool_id: m
        for m in WideAreaMirror.objects.filter(pool_id__in=by_pool, left_at__isnull=True).only(
            "pool_id", "wide_levels", "levels", "heard_at", "offline_after_seconds", "offline_action"
        )
    }
    now = time.time()
    out = []
    for group_id, code, pool_id in sorted(groups):
        levels = list(by_pool.get(pool_id, ()))
        unavailable: tuple[str, ...] = ()
        if pool_id in mirrors:
            shown = _wide_area(mirrors[pool_id], levels, now)
            if shown is None:
                continue  # locked by the pool's link-failure setting: silence locks the machines
            levels, unavailable = shown
        out.append(LinkLevels(group_id, code, levels, unavailable))
    return out


def progressive_broadcasts() -> list[tuple[str, dict[str, Any]]]:
    """(channel-layer group, payload) for every link group with members, stamped now."""
    at_ms = int(time.time() * 1000)
    return [(channel_group(item.group_id), payload(item, at_ms)) for item in link_levels()]
