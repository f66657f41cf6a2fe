"""The link watch: a machine silent for `silence_seconds` has lost its link. It locks itself (it hears no
progressive broadcast); the system marks it offline, records the link-lost lock, raises an alert, and
waits for its hello (gateway.hello ends the lock: the machine has resynchronised).

Set-based, whatever the number of machines (a whole floor may go silent at once when a switch fails): one
SELECT of the silent machines FOR UPDATE SKIP LOCKED, one UPDATE for those it locks and one for those
only going offline, one read of their open alerts and one bulk INSERT of the new ones, one audit entry
per venue, and after commit one loop that tells every locked machine (push.to_machines).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q

from machines import protocol
from machines.models import AlertKind, LockReason, Machine, MachineAlert, MachineState
from machines.services import push
from machines.services.audit import now as _now
from machines.services.audit import record
from machines.services.locks import skip_locked_machines

WATCH = "link-watch"


def _seconds(at: datetime, seen: datetime | None) -> int | None:
    return int((at - seen).total_seconds()) if seen is not None else None


def mark_silent_machines_offline(*, now: datetime | None = None, silence_seconds: float = 5) -> list[int]:
    """Machines not heard from for `silence_seconds`: offline; those in service also locked (link_lost),
    with an alert and one audit entry per venue. Returns the ids of the machines it changed. Machines in
    a gateway call right now are skipped (that call proves them alive). Never-seen machines are left alone."""
    at = now or _now()
    cutoff = at - timedelta(seconds=silence_seconds)
    with transaction.atomic():
        silent = list(
            skip_locked_machines(Machine.objects.filter(last_seen_at__lt=cutoff))
            .filter(Q(online=True) | Q(state=MachineState.IN_SERVICE))
            .order_by("pk")
            .values_list("pk", "venue_id", "asset_number", "state", "lock_reason", "last_seen_at")
        )
        if not silent:
            return []
        ids = [row[0] for row in silent]
        locked = [row[0] for row in silent if row[3] == MachineState.IN_SERVICE]
        # The rows are locked (PostgreSQL); the conditions again keep SQLite's unlocked read honest.
        still_silent = Machine.objects.filter(last_seen_at__lt=cutoff)
        if locked:
            still_silent.filter(pk__in=locked, state=MachineState.IN_SERVICE).update(
                online=False, state=MachineState.LOCKED, lock_reason=LockReason.LINK_LOST
            )
        still_silent.filter(pk__in=ids).exclude(pk__in=locked).update(online=False)
        alerted = set(
            MachineAlert.objects.filter(
                machine_id__in=ids, kind=AlertKind.LINK_LOST, cleared_at__isnull=True
            ).values_list("machine_id", flat=True)
        )
        MachineAlert.objects.bulk_create(
            MachineAlert(
                machine_id=pk,
                kind=AlertKind.LINK_LOST,
                message=f"No message from machine {asset} for {_seconds(at, seen)} s: link lost.",
                raised_at=at,
            )
            for pk, _, asset, _, _, seen in silent
            if pk not in alerted
        )
        by_venue: dict[int, list[dict[str, Any]]] = {}
        for pk, venue_id, asset, state, lock_reason, seen in silent:
            locks = state == MachineState.IN_SERVICE
            by_venue.setdefault(venue_id, []).append(
                {
                    "machine": pk,
                    "asset_number": asset,
                    "state": MachineState.LOCKED if locks else state,
                    "lock_reason": LockReason.LINK_LOST if locks else lock_reason,
                    "last_seen_at": seen,
                }
            )
        for venue_id, machines in by_venue.items():
            record(venue_id, WATCH, "machines.link_lost", venue_id, {"machines": machines, "at": at})
        push.to_machines(locked, protocol.lock(LockReason.LINK_LOST.value))
    return ids
