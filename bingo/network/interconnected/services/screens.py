"""What a member room's screen shows of its network prizes: the meter the central last sent, labelled by the
prize's kind: an interconnected prize ("Premio interconexionado", IB-01) with the max ball common to every
hall, or, in an electronic room, automatic bingo's Gran Línea / Gran Bingo (AB-05, AB-08) with the max ball
of the speciality's own Gran prize if its table sets one. In the snapshot (a screen that reconnects shows
them at once), and on the room's stream as `network.prize_meter`."""

from __future__ import annotations

from typing import Any

from bingo.network.interconnected.models import NetworkPrize, PrizeKind, RoomMembership, SpecialityMembership
from bingo.network.interconnected.services.gran import meter_view
from halls import money
from halls.models import Room


def network_pool_ids() -> set[int]:
    """The prizes' pools (at the central): shown by the prize's block, never in the pools ribbon."""
    return set(NetworkPrize.objects.values_list("pool_id", flat=True))


def screen_snapshot(room: Room) -> dict[str, Any]:
    rows = RoomMembership.objects.filter(room=room, active=True, meter_amount__isnull=False).order_by("pk")
    prizes: list[dict[str, Any]] = [
        {
            "prize": m.prize_code,
            "kind": PrizeKind.INTERCONNECTED.value,
            "name": m.meter_name,
            "amount": money.text(m.meter_amount),
            "max_ball": m.meter_max_ball,
            "at": m.meter_at.isoformat() if m.meter_at else None,
        }
        for m in rows
    ]
    gran = SpecialityMembership.objects.filter(speciality__room=room, active=True)
    for membership in gran.select_related("speciality").order_by("pk"):
        shown = meter_view(membership)
        if shown is not None:
            prizes.append({**shown, "amount": money.text(shown["amount"]), "at": shown["at"].isoformat()})
    return {"prizes": prizes}
