"""The progressive broadcast: every link group's level amounts, for every linked machine, at least twice
a second (machines.tasks.broadcast_progressives sends them). It is also the machines' link heartbeat: a
machine that hears none for 5 s locks itself, so it goes out even when nothing changed."""

from __future__ import annotations

import time
from typing import Any

from jackpots.services import meters
from machines import protocol
from machines.models import LinkGroup, LinkMember


def channel_group(group_id: int) -> str:
    return f"machines.link.{group_id}"


def progressive_broadcasts() -> list[tuple[str, dict[str, Any]]]:
    """(channel-layer group, payload) for every link group with members: one query for the groups, one
    pool_meters call for all their pools."""
    groups = list(
        LinkGroup.objects.filter(
            pk__in=LinkMember.objects.filter(left_at__isnull=True).values("group_id")
        ).values_list("pk", "code", "pool_id")
    )
    if not groups:
        return []
    by_pool = meters.pool_meters({pool_id for _, _, pool_id in groups})
    at_ms = int(time.time() * 1000)
    out = []
    for group_id, code, pool_id in sorted(groups):
        meter = by_pool.get(pool_id)
        levels = [(level.name, level.amount) for level in meter.levels] if meter else []
        out.append((channel_group(group_id), protocol.progressive(code, levels, at_ms)))
    return out
