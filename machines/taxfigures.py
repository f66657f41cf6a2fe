"""The machines' figures for the gaming-tax returns (halls.tax.hooks), per machine type: the bets (coin in)
and the prizes (coin out and hand-paid jackpots) of the period from the machines' cumulative meters, and the
machines counted in it (those registered before the period's end, for a fixed fee per machine).

A machine's period is the difference between its last meter reading taken before the period's end and its
last taken before the period's start (none: its meters started at zero when it was registered). Readings
are the boards' own (``taken_at`` is the device's clock when it gave one)."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.db.models import OuterRef, Subquery
from django.utils.translation import gettext_lazy as _

from halls.models import Venue
from halls.tax.compute import Figures
from halls.tax.hooks import Source
from machines.models import Machine, MachineType, MeterSnapshot

ZERO = Decimal("0.00")
GAME_TYPES = {"machine_b": _("Type B machines"), "machine_c": _("Type C machines")}
_CODES = {MachineType.B.value: "machine_b", MachineType.C.value: "machine_c"}


def _readings(machine_ids: list[int], before: datetime) -> dict[int, tuple[Decimal, Decimal]]:
    """Per machine: (coin in, coin out + jackpots) of its last reading taken before ``before``."""
    latest = (
        MeterSnapshot.objects.filter(machine=OuterRef("pk"), taken_at__lt=before)
        .order_by("-seq")
        .values("pk")[:1]
    )
    ids = [
        snap
        for snap in Machine.objects.filter(pk__in=machine_ids)
        .annotate(snap=Subquery(latest))
        .values_list("snap", flat=True)
        if snap is not None
    ]
    return {
        machine_id: (coin_in, coin_out + jackpots)
        for machine_id, coin_in, coin_out, jackpots in MeterSnapshot.objects.filter(pk__in=ids).values_list(
            "machine_id", "coin_in", "coin_out", "jackpots_paid"
        )
    }


def figures(venue: Venue, first: date, last: date) -> list[Figures]:
    zone = ZoneInfo(venue.time_zone)
    start = datetime.combine(first, time.min, tzinfo=zone)
    end = datetime.combine(last + timedelta(days=1), time.min, tzinfo=zone)
    machines = list(
        Machine.objects.filter(venue=venue, created_at__lt=end)
        .values_list("pk", "machine_type")
        .order_by("pk")
    )
    ids = [pk for pk, _type in machines]
    before, after = _readings(ids, start), _readings(ids, end)
    played: dict[str, Decimal] = defaultdict(lambda: ZERO)
    prizes: dict[str, Decimal] = defaultdict(lambda: ZERO)
    counted: dict[str, int] = defaultdict(int)
    for pk, machine_type in machines:
        code = _CODES[machine_type]
        counted[code] += 1
        coin_in, paid = after.get(pk, (ZERO, ZERO))
        base_in, base_paid = before.get(pk, (ZERO, ZERO))
        played[code] += coin_in - base_in
        prizes[code] += paid - base_paid
    return [
        Figures(code, played=played[code], prizes=prizes[code], machines=counted[code])
        for code in sorted(counted)
    ]


SOURCE = Source(name="machines", game_types=GAME_TYPES, figures=figures)
