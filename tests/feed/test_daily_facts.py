"""The daily reports on the authority's feed (issue 29): each machine's meters, the cashier's totals and the
door's admission counts of each of a venue's ended days, once per day however often the beat runs; a report
that fails writes nothing and is written by the next run; none with the feed off; counts only from the door
(no document, no name)."""

# ruff: noqa: F811 - the shared fixtures are imported by name (tests/machines/machine_fixtures.py)
from __future__ import annotations

from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from halls.cashier.services import feed as cashier_feed
from halls.cashier.services import player_cards
from halls.door.services import admission
from halls.door.services import feed as door_feed
from halls.feed.kinds import FeedKind
from halls.models import AuditEntry, Venue
from halls.services import feed_days as daily
from halls.services import venueclock
from machines.models import Machine, MeterSnapshot
from machines.services import feed as machine_feed
from tests.feed.conftest import Feed
from tests.machines.machine_fixtures import an10_venue, pool_operator, register  # noqa: F401

pytestmark = pytest.mark.django_db

MADRID = ZoneInfo("Europe/Madrid")
NOW = datetime(2026, 3, 12, 10, 0, tzinfo=MADRID)  # the venue's day 2026-03-12: the 10th and 11th ended


def snapshot(
    machine: Machine, seq: int, at: datetime, coin_in: str, coin_out: str, jackpots: str, games: int
) -> None:
    MeterSnapshot.objects.create(
        machine=machine,
        seq=seq,
        coin_in=Decimal(coin_in),
        coin_out=Decimal(coin_out),
        jackpots_paid=Decimal(jackpots),
        games_played=games,
        credits=Decimal("0"),
        taken_at=at,
    )


def test_each_machines_meters_over_each_ended_day_once(
    feed: Feed, settings: Any, an10_venue: Venue, pool_operator: Any
) -> None:
    settings.HALL_FEED_DAYS_BACK = 2
    b, _ = register(an10_venue, pool_operator, machine_type="B", asset="B-01")
    c, _ = register(an10_venue, pool_operator, machine_type="C", asset="C-01")
    register(an10_venue, pool_operator, asset="C-02")  # no meters yet: not reported
    snapshot(c, 1, datetime(2026, 3, 9, 23, 0, tzinfo=MADRID), "1000.00", "900.00", "0.00", 500)
    snapshot(c, 2, datetime(2026, 3, 10, 12, 0, tzinfo=MADRID), "1100.00", "950.00", "20.00", 560)
    snapshot(c, 3, datetime(2026, 3, 11, 23, 59, tzinfo=MADRID), "1160.40", "1000.00", "20.00", 590)
    snapshot(c, 4, datetime(2026, 3, 12, 0, 1, tzinfo=MADRID), "9999.00", "9999.00", "0.00", 9999)  # today
    snapshot(b, 1, datetime(2026, 3, 11, 9, 0, tzinfo=MADRID), "50.00", "10.00", "0.00", 40)
    assert feed.run(machine_feed.report_machine_meters, NOW) == 2
    tenth, eleventh = feed.messages("machine.meters")
    assert tenth == {
        "venue": "AN-C-0101",
        "day": "2026-03-10",
        "machines": [
            {
                "machine": "C-01",
                "type": "C",
                "coin_in": "100.00",
                "coin_out": "50.00",
                "jackpots": "20.00",
                "games": 60,
            }
        ],
    }
    assert eleventh == {
        "venue": "AN-C-0101",
        "day": "2026-03-11",
        "machines": [
            # B-01's first meters: counted from zero
            {
                "machine": "B-01",
                "type": "B",
                "coin_in": "50.00",
                "coin_out": "10.00",
                "jackpots": "0.00",
                "games": 40,
            },
            {
                "machine": "C-01",
                "type": "C",
                "coin_in": "60.40",
                "coin_out": "50.00",
                "jackpots": "0.00",
                "games": 30,
            },
        ],
    }
    assert feed.run(machine_feed.report_machine_meters, NOW) == 0  # the beat again: nothing twice
    assert feed.run(machine_feed.report_machine_meters, NOW + timedelta(hours=13)) == 0  # same day still
    assert feed.run(machine_feed.report_machine_meters, NOW + timedelta(days=1)) == 1  # the 12th has ended
    assert feed.messages("machine.meters")[-1]["day"] == "2026-03-12"
    reported = AuditEntry.objects.filter(action="feed.day_reported", venue=an10_venue)
    assert sorted(e.data["day"] for e in reported) == ["2026-03-10", "2026-03-11", "2026-03-12"]


def test_a_report_that_fails_writes_nothing_and_the_next_run_writes_it(
    feed: Feed, settings: Any, an10_venue: Venue
) -> None:
    settings.HALL_FEED_DAYS_BACK = 1
    day = date(2026, 3, 11)

    def broken(venue: Venue, day: date) -> dict[str, Any]:
        raise RuntimeError("the report's query failed")

    with pytest.raises(RuntimeError):
        feed.run(daily.report_day, venue=an10_venue, kind=FeedKind.MACHINE_METERS, day=day, payload_of=broken)
    assert feed.messages() == []
    assert not AuditEntry.objects.filter(action="feed.day_reported").exists()
    assert feed.run(machine_feed.report_machine_meters, NOW) == 1
    assert feed.messages("machine.meters") == [{"venue": "AN-C-0101", "day": "2026-03-11", "machines": []}]


def test_with_the_feed_off_no_day_is_reported(feed_off: Feed, an10_venue: Venue) -> None:
    assert feed_off.run(machine_feed.report_machine_meters, NOW) == 0
    assert feed_off.run(cashier_feed.report_cashier_days, NOW) == 0
    assert feed_off.run(door_feed.report_admissions, NOW) == 0
    assert feed_off.messages() == []
    assert not AuditEntry.objects.filter(action="feed.day_reported").exists()


def test_the_cashiers_totals_of_the_day(
    feed: Feed, settings: Any, venue: Venue, cashier: Any, drawing_game: Any
) -> None:
    settings.HALL_FEED_DAYS_BACK = 1
    card = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    player_cards.cash_in(card=card, amount=Decimal("20.00"), means="cash", key="load-1", actor=cashier)
    tomorrow = timezone.now() + timedelta(days=1)
    assert feed.run(cashier_feed.report_cashier_days, tomorrow) == 1
    (day,) = feed.messages("cashier.day")
    assert day == {
        "venue": "ML-B-0001",
        "day": venueclock.today(venue).isoformat(),
        "sales": "24.00",  # the drawing game's twelve cards of 2.00
        "payouts": "0.00",
        "cash_in": "20.00",
        "cash_out": "0.00",
    }
    assert card.number not in feed.text()


def test_the_doors_counts_of_the_day_and_never_who(feed: Feed, settings: Any, venue: Venue) -> None:
    settings.HALL_FEED_DAYS_BACK = 1
    today = venueclock.today(venue)
    at = datetime.combine(today, time(12), tzinfo=ZoneInfo(venue.time_zone))
    adult = date(1980, 5, 17)
    minor = today.replace(year=today.year - 15)
    shown = [("12345678Z", adult), ("87654321X", adult), ("11223344B", minor)]
    for number, born in shown:
        document = admission.document_from("DNI", number)
        admission.admit(venue=venue, door="Puerta 1", document=document, birth_date=born, actor="door", at=at)
    assert feed.run(door_feed.report_admissions, at + timedelta(days=1)) == 1
    (counts,) = feed.messages("admissions")
    assert counts == {
        "venue": "ML-B-0001",
        "day": today.isoformat(),
        "admitted": 2,
        "refused": 1,
        "refused_by_reason": {"minor": 1, "prohibited": 0, "self_excluded": 0},
    }
    text = feed.text()
    for number, _born in shown:
        assert number not in text
    assert "1980" not in text
