"""The lab clock's door and command (issue 26, halls.services.venueclock): outside production an operator
sets a venue's clock forward, recorded and audited, never backward; production has no such door (not
routed), its command refuses, and the venue's time there is the real time whatever a row says."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from io import StringIO
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.utils import timezone

from halls.errors import NotFound
from halls.models import AuditEntry, Role, Venue, VenueClock
from halls.services import venueclock
from tests.api_support import api_client, refused
from tests.config.test_production_settings import PRODUCTION, manage
from tests.conftest import make_user


def url(venue: Venue) -> str:
    return f"/api/venues/{venue.pk}/lab-clock/"


def rows(venue: Venue) -> tuple[list[tuple[timedelta, datetime]], int]:
    clocks = list(VenueClock.objects.filter(venue=venue).values_list("offset", "moved_at"))
    return clocks, AuditEntry.objects.filter(venue=venue).count()


def test_an_operator_sets_the_venue_clock_forward_and_it_is_audited(venue: Venue, operator: User) -> None:
    client = api_client(operator)
    read = client.get(url(venue))
    assert read.status_code == 200, read.content
    assert read.json()["offset_seconds"] == 0
    target = timezone.now() + timedelta(days=2, hours=3)
    moved = client.post(url(venue), {"to": target.isoformat()}, format="json")
    assert moved.status_code == 200, moved.content
    body = moved.json()
    assert abs(body["offset_seconds"] - timedelta(days=2, hours=3).total_seconds()) < 30
    shown = datetime.fromisoformat(body["now"])
    assert (
        shown.utcoffset() == target.astimezone(ZoneInfo(venue.time_zone)).utcoffset()
    )  # in the venue's zone
    assert timedelta(0) <= shown - target < timedelta(seconds=30)
    assert timedelta(0) <= venueclock.now(venue.pk) - target < timedelta(seconds=30)
    entry = AuditEntry.objects.filter(venue=venue, action="venue.lab_clock_moved").get()
    assert entry.actor == operator
    assert datetime.fromisoformat(entry.data["to"]) == target
    # Forward by seconds from where it is now.
    again = client.post(url(venue), {"forward_seconds": 3600}, format="json")
    assert again.status_code == 200, again.content
    assert abs(again.json()["offset_seconds"] - body["offset_seconds"] - 3600) < 30
    assert AuditEntry.objects.filter(venue=venue, action="venue.lab_clock_moved").count() == 2


@pytest.mark.parametrize(
    ("body", "status", "code", "word"),
    [
        ({}, 400, "invalid", "either"),
        ({"forward_seconds": 0}, 400, "invalid", "forward_seconds"),
        ({"forward_seconds": 60, "to": "2030-01-01T20:00:00+01:00"}, 400, "invalid", "either"),
        ({"to": "2001-01-01T20:00:00+01:00"}, 409, "clock_backward", "forward"),
        ({"to": "2999-01-01T20:00:00+01:00"}, 400, "clock_too_far", "days"),
        ({"to": "not a time"}, 400, "invalid", "to"),
    ],
)
def test_a_move_back_or_unclear_is_refused_and_changes_nothing(
    venue: Venue, operator: User, body: dict[str, object], status: int, code: str, word: str
) -> None:
    client = api_client(operator)
    assert client.post(url(venue), {"forward_seconds": 600}, format="json").status_code == 200
    before = rows(venue)
    refused(client.post(url(venue), body, format="json"), status, code, word)
    assert rows(venue) == before


def test_the_clock_never_goes_back_past_where_it_is(venue: Venue, operator: User) -> None:
    client = api_client(operator)
    ahead = timezone.now() + timedelta(days=1)
    assert client.post(url(venue), {"to": ahead.isoformat()}, format="json").status_code == 200
    before = rows(venue)
    halfway = timezone.now() + timedelta(hours=12)  # forward of the real time, behind the venue's
    refused(client.post(url(venue), {"to": halfway.isoformat()}, format="json"), 409, "clock_backward")
    assert rows(venue) == before


def test_only_the_venue_operator_moves_it(venue: Venue, caller: User) -> None:
    inspector = make_user("inspector", venue, Role.INSPECTOR)
    other = Venue.objects.create(name="Otra", licence_number="ML-B-0999", time_zone="Africa/Ceuta")
    stranger = make_user("stranger", other, Role.OPERATOR)
    before = rows(venue)
    for user in (caller, inspector, stranger):
        answer = api_client(user).post(url(venue), {"forward_seconds": 600}, format="json")
        assert answer.status_code in (403, 404), (user.username, answer.content)
    assert api_client(None).post(url(venue), {"forward_seconds": 600}, format="json").status_code == 401
    assert rows(venue) == before


def test_the_command_reads_and_moves_the_clock(venue: Venue, operator: User) -> None:
    out = StringIO()
    call_command("lab_clock", str(venue.pk), "--forward", "1d2h", "--by", "operator", stdout=out)
    shown = json.loads(out.getvalue().strip().splitlines()[-1])
    assert abs(shown["offset_seconds"] - timedelta(days=1, hours=2).total_seconds()) < 30
    entry = AuditEntry.objects.filter(venue=venue, action="venue.lab_clock_moved").get()
    assert entry.actor == operator
    with pytest.raises(CommandError, match="clock_backward"):
        call_command("lab_clock", str(venue.pk), "--to", timezone.now().isoformat(), stdout=StringIO())
    with pytest.raises(CommandError, match="--forward"):
        call_command("lab_clock", str(venue.pk), "--forward", "-3h", stdout=StringIO())
    assert AuditEntry.objects.filter(venue=venue, action="venue.lab_clock_moved").count() == 1


def test_in_production_the_venue_time_is_the_real_time_and_nothing_moves_it(
    venue: Venue, operator: User, settings: Any
) -> None:
    venueclock.move(venue=venue, actor=operator, forward=timedelta(days=3))
    assert venueclock.offset(venue.pk) > timedelta(days=2)
    settings.HALL_PRODUCTION = True
    assert venueclock.offset(venue.pk) == timedelta(0)
    before = rows(venue)
    with pytest.raises(NotFound):
        venueclock.move(venue=venue, actor=operator, forward=timedelta(days=1))
    with pytest.raises(CommandError, match="production"):
        call_command("lab_clock", str(venue.pk), "--forward", "1h", stdout=StringIO())
    assert rows(venue) == before


PRODUCTION_PROBE = """
from django.urls import Resolver404, resolve
try:
    resolve("/api/venues/1/lab-clock/")
    print("routed")
except Resolver404:
    print("not routed")
"""


def test_production_routes_no_lab_clock_and_its_command_refuses() -> None:
    done = manage("shell", "-c", PRODUCTION_PROBE, **PRODUCTION)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "not routed"
    done = manage("lab_clock", "1", "--forward", "1h", **PRODUCTION)
    assert done.returncode != 0
    assert "En producción no hay reloj de laboratorio" in done.stderr  # the hall speaks Spanish
