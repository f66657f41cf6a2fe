"""What a member room's screen shows of an interconnected prize: the meter the central last sent, and the
max ball common to every hall ("Premio interconexionado")."""

from __future__ import annotations

from typing import Any

from bingo.network.models import NetworkPrize, RoomMembership
from halls import money
from halls.models import Room


def network_pool_ids() -> set[int]:
    """The prizes' pools (at the central): shown by the prize's block, never in the pools ribbon."""
    return set(NetworkPrize.objects.values_list("pool_id", flat=True))


def screen_snapshot(room: Room) -> dict[str, Any]:
    rows = RoomMembership.objects.filter(room=room, active=True, meter_amount__isnull=False).order_by("pk")
    return {
        "prizes": [
            {
                "prize": m.prize_code,
                "name": m.meter_name,
                "amount": money.text(m.meter_amount),
                "max_ball": m.meter_max_ball,
                "at": m.meter_at.isoformat() if m.meter_at else None,
            }
            for m in rows
        ]
    }
