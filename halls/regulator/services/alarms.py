"""The node's alarms (halls.regulator.models.Alarm): raised by the intake and the silence sweep, shown by
the portal, cleared by a person or when their cause ends. An open alarm is not raised twice for the same
cause (the same installation, kind and subject), so a sender retrying one refused message every few
seconds leaves one alarm and a refusal row per try."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from halls.regulator.models import Alarm, AlarmKind, Installation

# The detail keys that say what an alarm is about (beside its installation and kind).
_SUBJECT = ("sequence", "claimed")


def _subject(detail: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(detail.get(key) for key in _SUBJECT)


def raise_alarm(
    *, installation: Installation | None, kind: AlarmKind, detail: dict[str, Any], at: datetime | None = None
) -> Alarm:
    """The open alarm for this cause, raised now if there is none. Inside the caller's transaction."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("alarms are raised inside the transaction that finds their cause")
    open_ones = Alarm.objects.filter(installation=installation, kind=kind, cleared_at__isnull=True)
    for alarm in open_ones:
        if _subject(alarm.detail) == _subject(detail):
            return alarm
    return Alarm.objects.create(
        installation=installation, kind=kind, detail=detail, raised_at=at or timezone.now()
    )


def clear(*, installation: Installation, kind: AlarmKind, by: str, at: datetime | None = None) -> int:
    """Clear the installation's open alarms of `kind` (their cause ended); how many."""
    return Alarm.objects.filter(installation=installation, kind=kind, cleared_at__isnull=True).update(
        cleared_at=at or timezone.now(), cleared_by=by
    )
