"""The progressive broadcast: every link group's level amounts, for every linked machine, at least twice
a second (machines.broadcaster sends them from a loop of its own). It is also the machines' link
heartbeat: a machine that hears none for 5 s locks itself, so it goes out even when nothing changed."""

from __future__ import annotations

import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from jackpots.services.readmodels import meters
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


def link_levels() -> list[LinkLevels]:
    """Every link group with members and its levels, in group id order: one query for the groups, one
    pool_meters call for all their pools."""
    groups = list(
        LinkGroup.objects.filter(
            pk__in=LinkMember.objects.filter(left_at__isnull=True).values("group_id")
        ).values_list("pk", "code", "pool_id")
    )
    if not groups:
        return []
    by_pool = meters.pool_meters({pool_id for _, _, pool_id in groups})
    out = []
    for group_id, code, pool_id in sorted(groups):
        meter = by_pool.get(pool_id)
        levels = [(level.name, level.amount) for level in meter.levels] if meter else []
        out.append(LinkLevels(group_id, code, levels))
    return out


def progressive_broadcasts() -> list[tuple[str, dict[str, Any]]]:
    """(channel-layer group, payload) for every link group with members, stamped now."""
    at_ms = int(time.time() * 1000)
    return [
        (channel_group(item.group_id), protocol.progressive(item.code, item.levels, at_ms))
        for item in link_levels()
    ]
