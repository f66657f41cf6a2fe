"""The link watch: a machine silent for `silence_seconds` has lost its link. It locks itself (it hears no
progressive broadcast); the system marks it offline, records the link-lost lock, raises an alert, and
waits for its hello (gateway.hello ends the lock: the machine has resynchronised)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q

from machines import protocol
from machines.models import AlertKind, LockReason, Machine, MachineAlert, MachineState
from machines.services import push
from machines.services.common import now as _now
from machines.services.common import record

WATCH = "link-watch"


def mark_silent_machines_offline(*, now: datetime | None = None, silence_seconds: float = 5) -> list[int]:
    """Machines not heard from for `silence_seconds`: offline; those in service also locked (link_lost),
    with an alert and one audit entry per venue. Returns the ids of the machines it changed. Machines in
    a gateway call right now are skipped (that call proves them alive). Never-seen machines are left alone."""
    at = now or _now()
    cutoff = at - timedelta(seconds=silence_seconds)
    changed: list[int] = []
    by_venue: dict[int, list[dict[str, Any]]] = {}
    with transaction.atomic():
        silent = (
            Machine.objects.select_for_update(of=("self",), skip_locked=True)
            .filter(last_seen_at__lt=cutoff)
            .filter(Q(online=True) | Q(state=MachineState.IN_SERVICE))
            .order_by("pk")
        )
        for machine in silent:
            locks = machine.state == MachineState.IN_SERVICE
            machine.online = False
            fields = ["online"]
            if locks:
                machine.state, machine.lock_reason = MachineState.LOCKED, LockReason.LINK_LOST
                fields += ["state", "lock_reason"]
                push.to_machine(machine.pk, protocol.lock(LockReason.LINK_LOST.value))
            machine.save(update_fields=fields)
            silent_for = int((at - machine.last_seen_at).total_seconds()) if machine.last_seen_at else None
            if not MachineAlert.objects.filter(
                machine=machine, kind=AlertKind.LINK_LOST, cleared_at__isnull=True
            ).exists():
                MachineAlert.objects.create(
                    machine=machine,
                    kind=AlertKind.LINK_LOST,
                    message=f"No message from machine {machine.asset_number} for {silent_for} s: link lost.",
                    raised_at=at,
                )
            changed.append(machine.pk)
            by_venue.setdefault(machine.venue_id, []).append(
                {
                    "machine": machine.pk,
                    "asset_number": machine.asset_number,
                    "state": machine.state,
                    "lock_reason": machine.lock_reason,
                    "last_seen_at": machine.last_seen_at,
                }
            )
        for venue_id, machines in by_venue.items():
            record(venue_id, WATCH, "machines.link_lost", venue_id, {"machines": machines, "at": at})
    return changed
