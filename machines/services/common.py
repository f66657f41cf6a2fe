"""Helpers the machine services share: time, the audit trail, the machine row lock."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _

from halls.actors import Actor
from halls.errors import NotFound
from halls.services import audit
from machines.models import Machine

GATEWAY = "gateway"


def now() -> datetime:
    return timezone.now()


def record(venue_id: int, actor: Actor, action: str, obj: Any, data: dict[str, Any]) -> None:
    """One audit entry in the venue's chain (inside the caller's transaction)."""
    audit.record(venue_id=venue_id, actor=actor, action=action, obj=obj, data=data)


def lock_machine(machine_id: int) -> Machine:
    """The machine row FOR UPDATE: every write about one machine serializes on it (gateway calls, state
    changes, hand pays, links). Taken before any pool lock."""
    machine = (
        Machine.objects.select_for_update(of=("self",)).select_related("venue").filter(pk=machine_id).first()
    )
    if machine is None:
        raise NotFound(_("No machine %(machine_id)s.") % {"machine_id": machine_id}, code="unknown_machine")
    return machine


def describe(machine: Machine) -> dict[str, Any]:
    return {
        "machine": machine.pk,
        "asset_number": machine.asset_number,
        "state": machine.state,
        "lock_reason": machine.lock_reason,
    }
