"""What the tax tests share: a month of play at the conftest's Melilla venue (a traditional session played to
its Bingo, a type B and a type C machine with meter readings before, inside and after the month), the
month's label, a rate table, the venue's clock moved past the month."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib.auth.models import User
from django.utils import timezone

from halls.models import Venue
from halls.services import venueclock
from halls.tax.compute import Period, period_of
from halls.tax.models import RateTable
from halls.tax.services import rates
from machines import protocol
from machines.models import Machine
from machines.services import gateway, registry
from tests.bingo.traditional.inspector_support import PlayedSession, play_session

D = Decimal

# The rates of the tests: data as an operator enters them (never in the code).
LINES: list[dict[str, Any]] = [
    {"game_type": "traditional", "basis": "sales", "rate_percent": "20", "fee_per_machine": None},
    {"game_type": "machine_b", "basis": "machines", "rate_percent": None, "fee_per_machine": "45.00"},
    {"game_type": "machine_c", "basis": "net", "rate_percent": "12.5", "fee_per_machine": None},
]


def superuser() -> User:
    found = User.objects.filter(username="hacienda").first()
    return found or User.objects.create_superuser("hacienda", password="pw-hacienda")


def rate_table(
    jurisdiction: str = "ML", lines: list[dict[str, Any]] | None = None, valid_from: str = "2020-01-01"
) -> RateTable:
    return rates.record_rate_table(
        jurisdiction=jurisdiction,
        reference="Orden HAC/123/2026, tarifa del juego (BOME 12/2026)",
        valid_from=datetime.fromisoformat(valid_from).date(),
        valid_until=None,
        rounding="half_up",
        lines=LINES if lines is None else lines,
        actor=superuser(),
    )


def machine(venue: Venue, machine_type: str, asset: str) -> Machine:
    made, _token = registry.register_machine(
        venue=venue,
        asset_number=asset,
        machine_type=machine_type,
        modality="individual",
        manufacturer="Novomatic",
        model="Gaminator",
        serial=f"SN-{asset}",
        denomination=D("0.20"),
        paytable_id="PT-92",
        software_version="4.1.0",
        location="Sala A",
        actor=superuser(),
    )
    return made


def reading(m: Machine, seq: int, at: datetime, coin_in: str, coin_out: str, jackpots: str) -> None:
    gateway.receive(
        machine_id=m.pk,
        messages=[
            protocol.Meters(
                seq=seq,
                coin_in=D(coin_in),
                coin_out=D(coin_out),
                jackpots_paid=D(jackpots),
                credits=D("0"),
                games_played=seq * 100,
                at=at,
            )
        ],
    )


@dataclass
class Month:
    period: Period
    played: PlayedSession
    type_b: Machine
    type_c: Machine


def the_month(venue: Venue) -> Period:
    """The venue's month now (the play of these tests happens now)."""
    return period_of("month", timezone.localtime(timezone.now(), ZoneInfo(venue.time_zone)).date())


def play_a_month(*, venue: Venue, session: Any, room: Any, series: Any, caller: Any, cashier: Any) -> Month:
    """The traditional session (one game played: 30 cards of 2.00 sold, 60.00; Line 6.00 and Bingo 30.00
    paid, 36.00; one game void), a type B machine and a type C machine whose meters read, before the month:
    1,000.00 in, 800.00 out, 50.00 of jackpots; on the month's first day 1,100.00 / 880.00 / 50.00; at its
    end 1,333.33 / 1,100.00 / 60.00; after it 2,000.00 / 1,500.00 / 60.00."""
    period = the_month(venue)
    played = play_session(session=session, room=room, series=series, caller=caller, cashier=cashier)
    zone = ZoneInfo(venue.time_zone)
    start = datetime.combine(period.first, time.min, tzinfo=zone)
    end = datetime.combine(period.after, time.min, tzinfo=zone)
    type_b = machine(venue, "B", "B-001")
    type_c = machine(venue, "C", "C-001")
    reading(type_c, 1, start - timedelta(days=3), "1000.00", "800.00", "50.00")
    reading(type_c, 2, start + timedelta(hours=10), "1100.00", "880.00", "50.00")
    reading(type_c, 3, end - timedelta(minutes=1), "1333.33", "1100.00", "60.00")
    reading(type_c, 4, end + timedelta(hours=1), "2000.00", "1500.00", "60.00")
    reading(type_b, 1, start + timedelta(hours=12), "80.00", "70.00", "0.00")
    return Month(period=period, played=played, type_b=type_b, type_c=type_c)


def past(venue: Venue, period: Period) -> None:
    """The venue's clock moved to the day after the period (the lab clock: never in production)."""
    zone = ZoneInfo(venue.time_zone)
    to = datetime.combine(period.after, time(hour=9), tzinfo=zone)
    if venueclock.now(venue.pk) < to:
        venueclock.move(venue=venue, actor=superuser(), to=to)
