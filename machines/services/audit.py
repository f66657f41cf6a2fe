"""Helpers the machine services share: time, the audit trail."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from halls.actors import Actor
from halls.services import audit
from machines.models import Machine

GATEWAY = "gateway"


def now() -> datetime:
    return timezone.now()


def record(venue_id: int, actor: Actor, action: str, obj: Any, data: dict[str, Any]) -> None:
    """One audit entry in the venue's chain (inside the caller's transaction)."""
    audit.record(venue_id=venue_id, actor=actor, action=action, obj=obj, data=data)


def describe(machine: Machine) -> dict[str, Any]:
    return {
        "machine": machine.pk,
        "asset_number": machine.asset_number,
        "state": machine.state,
        "lock_reason": machine.lock_reason,
    }
