"""Silence on the node: an installation not heard from (a message, a heartbeat) past its window raises a
"silent" alarm; the intake clears it when the installation is heard again (halls.regulator.services.intake).
Beat runs `sweep` every HALL_REGULATOR_SWEEP_SECONDS on the node (halls.regulator.tasks)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from halls.regulator.models import Alarm, AlarmKind, Installation
from halls.regulator.services import alarms
from halls.regulator.services.intake import silence_window


def sweep(*, now: datetime | None = None) -> int:
    """Raise a silent alarm for every installation silent past its window that has none open; how many
    were raised now. An installation never heard from is silent from its registration."""
    now = now or timezone.now()
    raised = 0
    already = set(
        Alarm.objects.filter(kind=AlarmKind.SILENT, cleared_at__isnull=True).values_list(
            "installation_id", flat=True
        )
    )
    for installation in Installation.objects.exclude(pk__in=[pk for pk in already if pk is not None]):
        heard = installation.last_message_at or installation.registered_at
        window = silence_window(installation)
        if now - heard <= timedelta(seconds=window):
            continue
        with transaction.atomic():
            locked = Installation.objects.select_for_update().get(pk=installation.pk)
            heard = locked.last_message_at or locked.registered_at
            if now - heard <= timedelta(seconds=window):
                continue  # heard while this sweep ran
            alarms.raise_alarm(
                installation=locked,
                kind=AlarmKind.SILENT,
                detail={
                    "sequence": None,
                    "last_heard": heard.isoformat(),
                    "window_seconds": window,
                    "accepted": locked.accepted_sequence,
                },
                at=now,
            )
        raised += 1
    return raised
