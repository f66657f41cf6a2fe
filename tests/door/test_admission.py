"""The door's decision and its visit log (issue 27): prohibited, self-excluded, minor or admitted, in that
order; a refusal of what the person shows writes nothing; the retention purge keeps the counts; a
self-exclusion is never shortened; the API answers in Spanish; no document number in audit, events or logs."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from halls.door.documents import Document
from halls.door.models import Decision, SelfExclusion, Visit
from halls.door.services import admission, registers
from halls.door.tasks import purge_visits
from halls.errors import Conflict, InvalidInput
from halls.models import AuditEntry, Role, Venue
from halls.services import venueclock
from tests.api_support import api_client, refused
from tests.conftest import make_user
from tests.door.register_support import dni, people, register_file, stream

pytestmark = pytest.mark.django_db

LISTED = people(20_000_000, 3)  # a DNI, a French passport, a German identity card
ADULT = date(1980, 5, 17)


def load_register() -> None:
    registers.load_register_file(stream=stream(register_file(LISTED)), actor="test", create_name="RGIAJ")


def doc(kind: str, number: str, country: str = "") -> Document:
    return admission.document_from(kind, number, country)


def today(venue: Venue) -> date:
    return venueclock.today(venue)


def years_ago(venue: Venue, years: int, days: int = 0) -> date:
    day = today(venue)
    return day.replace(year=day.year - years) - timedelta(days=days)


def admit(venue: Venue, document: Document, birth: date = ADULT, **kwargs: Any) -> Visit:
    return admission.admit(
        venue=venue, door="Puerta 1", document=document, birth_date=birth, actor="test", **kwargs
    )


def state() -> tuple[int, int, int]:
    return Visit.objects.count(), SelfExclusion.objects.count(), AuditEntry.objects.count()


@contextmanager
def nothing_written() -> Iterator[None]:
    before = state()
    yield
    assert state() == before


def test_each_decision(venue: Venue) -> None:
    load_register()
    adult = admit(venue, doc("DNI", dni(30_000_001)))
    assert (adult.decision, adult.register_version_id, adult.registers_readable) == (
        Decision.ADMITTED,
        None,
        True,
    )
    assert adult.digest is not None and adult.keep_until == adult.at + timedelta(days=30)

    minor = admit(venue, doc("DNI", dni(30_000_002)), years_ago(venue, 18, days=-1))  # 18 tomorrow
    assert minor.decision == Decision.MINOR
    just_adult = admit(venue, doc("DNI", dni(30_000_003)), years_ago(venue, 18))  # 18 today
    assert just_adult.decision == Decision.ADMITTED

    for kind, number, country in LISTED:
        prohibited = admit(venue, doc(kind, number, country))
        assert prohibited.decision == Decision.PROHIBITED
        assert prohibited.register_version is not None
        assert (prohibited.register_version.register.code, prohibited.register_version.number) == ("RGIAJ", 1)

    excluded = doc("NIE", "X1234567L")
    admission.self_exclude(
        venue=venue, document=excluded, until=today(venue) + timedelta(days=180), actor="test"
    )
    assert admit(venue, excluded).decision == Decision.SELF_EXCLUDED


def test_order_of_precedence(venue: Venue) -> None:
    load_register()
    kind, number, country = LISTED[0]
    listed = doc(kind, number, country)
    until = today(venue) + timedelta(days=30)
    admission.self_exclude(venue=venue, document=listed, until=until, actor="test")
    # On the register, self-excluded and a minor: the register decides.
    assert admit(venue, listed, years_ago(venue, 10)).decision == Decision.PROHIBITED
    # Self-excluded and a minor: the self-exclusion decides.
    other = doc("DNI", dni(30_000_010))
    admission.self_exclude(venue=venue, document=other, until=until, actor="test")
    assert admit(venue, other, years_ago(venue, 10)).decision == Decision.SELF_EXCLUDED


def test_unreadable_registers_are_recorded(venue: Venue) -> None:
    registers.create_register(
        code="RGIAJ", name="RGIAJ", jurisdiction="NATIONAL", actor="test"
    )  # none loaded
    visit = admit(venue, doc("DNI", dni(30_000_020)))
    assert (visit.decision, visit.registers_readable) == (Decision.ADMITTED, False)


def test_the_adult_age_and_retention_are_per_jurisdiction(venue: Venue) -> None:
    birth = years_ago(venue, 19)
    with override_settings(HALL_DOOR_BY_JURISDICTION={venue.jurisdiction: {"adult_age": 21}}):
        assert admission.adult_age(venue) == 21
        assert admit(venue, doc("DNI", dni(30_000_030)), birth).decision == Decision.MINOR
    with override_settings(HALL_DOOR_BY_JURISDICTION={"CT": {"adult_age": 21, "visit_retention_days": 7}}):
        assert admission.adult_age(venue) == 18 and admission.retention(venue) == timedelta(days=30)
        assert admit(venue, doc("DNI", dni(30_000_030)), birth).decision == Decision.ADMITTED
    with override_settings(HALL_DOOR_VISIT_RETENTION_DAYS=7):
        visit = admit(venue, doc("DNI", dni(30_000_031)))
        assert visit.keep_until == visit.at + timedelta(days=7)


def test_a_refusal_writes_nothing(venue: Venue) -> None:
    load_register()
    tomorrow = today(venue) + timedelta(days=1)
    with nothing_written(), pytest.raises(InvalidInput) as birth:
        admit(venue, doc("DNI", dni(30_000_040)), tomorrow)
    assert birth.value.code == "birth_in_future"
    for kind, number, code in [
        ("DNI", "12345678A", "bad_check_letter"),
        ("DNI", "1234", "bad_format"),
        ("CARNET", "12345678Z", "unknown_kind"),
    ]:
        with nothing_written(), pytest.raises(InvalidInput) as refusal:
            doc(kind, number)
        assert refusal.value.code == code and number not in refusal.value.message
    with nothing_written(), pytest.raises(InvalidInput):
        admission.admit(
            venue=venue, door=" ", document=doc("DNI", dni(30_000_040)), birth_date=ADULT, actor="test"
        )


def test_a_self_exclusion_is_never_shortened(venue: Venue) -> None:
    person = doc("DNI", dni(30_000_050))
    day = today(venue)
    with nothing_written(), pytest.raises(InvalidInput) as past:
        admission.self_exclude(venue=venue, document=person, until=day - timedelta(days=1), actor="test")
    assert past.value.code == "self_exclusion_in_past"

    first = admission.self_exclude(venue=venue, document=person, until=day + timedelta(days=90), actor="test")
    assert (first.since, first.until) == (day, day + timedelta(days=90))
    with nothing_written(), pytest.raises(Conflict) as shorter:
        admission.self_exclude(venue=venue, document=person, until=day + timedelta(days=89), actor="test")
    assert shorter.value.code == "self_exclusion_shortened"
    longer = admission.self_exclude(
        venue=venue, document=person, until=day + timedelta(days=365), actor="test"
    )
    assert (longer.pk, longer.since, longer.until) == (first.pk, day, day + timedelta(days=365))
    assert SelfExclusion.objects.count() == 1


def test_a_self_exclusion_ends_at_its_term(venue: Venue) -> None:
    person = doc("DNI", dni(30_000_060))
    day = today(venue)
    admission.self_exclude(venue=venue, document=person, until=day, actor="test")
    zone = ZoneInfo(venue.time_zone)
    noon = datetime.combine(day, datetime.min.time(), tzinfo=zone) + timedelta(hours=12)
    assert admit(venue, person, at=noon).decision == Decision.SELF_EXCLUDED
    assert admit(venue, person, at=noon + timedelta(days=1)).decision == Decision.ADMITTED


def test_the_purge_clears_digests_and_keeps_counts(venue: Venue) -> None:
    load_register()
    zone = ZoneInfo(venue.time_zone)
    old_day = date(2026, 10, 1)
    old = datetime.combine(old_day, datetime.min.time(), tzinfo=zone) + timedelta(hours=20)
    admit(venue, doc("DNI", dni(30_000_070)), at=old)
    admit(venue, doc("DNI", dni(30_000_071)), years_ago(venue, 12), at=old)
    admit(venue, doc(*LISTED[0]), at=old)
    recent = admit(venue, doc("DNI", dni(30_000_072)))
    before = admission.visits_per_day(venue, old_day, old_day)
    assert [(c.admitted, c.minor, c.prohibited, c.self_excluded, c.total) for c in before] == [
        (1, 1, 1, 0, 3)
    ]

    assert purge_visits() == 3
    assert Visit.objects.filter(digest__isnull=True).count() == 3
    recent.refresh_from_db()
    assert recent.digest is not None
    assert admission.visits_per_day(venue, old_day, old_day) == before
    purged = AuditEntry.objects.get(action="door.visits_purged")
    assert purged.data["visits"] == 3
    assert purge_visits() == 0


def test_visits_per_day_lists_every_day(venue: Venue) -> None:
    zone = ZoneInfo(venue.time_zone)
    day = date(2026, 11, 2)
    late = datetime.combine(day, datetime.min.time(), tzinfo=zone) + timedelta(hours=23, minutes=30)
    admit(venue, doc("DNI", dni(30_000_080)), at=late)  # 22:30 UTC, but the venue's 2 November
    rows = admission.visits_per_day(venue, day - timedelta(days=1), day + timedelta(days=1))
    assert [(c.day, c.total) for c in rows] == [
        (day - timedelta(days=1), 0),
        (day, 1),
        (day + timedelta(days=1), 0),
    ]


# --- the API --------------------------------------------------------------------------------------------


def url(venue: Venue, tail: str = "") -> str:
    return f"/api/venues/{venue.pk}/admissions/{tail}"


def test_the_api_admits_and_refuses(venue: Venue, operator: User) -> None:
    load_register()
    api = api_client(operator)
    kind, number, country = LISTED[1]
    answer = api.post(
        url(venue),
        {"kind": kind, "number": number, "country": country, "birth_date": "1980-05-17", "door": "Puerta 1"},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["decision"] == "prohibited" and body["decided_by_register"] == {
        "code": "RGIAJ",
        "name": "RGIAJ",
        "version": 1,
    }
    assert Visit.objects.get(pk=body["visit"]).decision == Decision.PROHIBITED

    adult = {"kind": "DNI", "number": dni(30_000_090), "birth_date": "1980-05-17", "door": "Puerta 1"}
    body = api.post(url(venue), adult, format="json").json()
    assert (body["decision"], body["decided_by_register"]) == ("admitted", None)

    daily = api.get(url(venue, "daily/"), {"from": today(venue).isoformat()})
    assert daily.status_code == 200, daily.content
    assert daily.json()[0]["admitted"] == 1 and daily.json()[0]["prohibited"] == 1


def test_the_api_refuses_in_spanish_and_writes_nothing(venue: Venue, operator: User) -> None:
    api = api_client(operator)
    future = (today(venue) + timedelta(days=3)).isoformat()
    cases = [
        ({"kind": "DNI", "number": "12345678A"}, "bad_check_letter", "letra de control"),
        ({"kind": "DNI", "number": "12-34"}, "bad_format", "mal formado"),
        (
            {"kind": "DNI", "number": dni(30_000_100), "birth_date": future},
            "birth_in_future",
            "posterior a hoy",
        ),
    ]
    for document, code, words in cases:
        data = {"birth_date": "1980-05-17", "door": "Puerta 1", **document}
        with nothing_written():
            error = refused(
                api.post(url(venue), data, format="json", HTTP_ACCEPT_LANGUAGE="es"), 400, code, words
            )
        assert document["number"] not in error["message"]


def test_the_api_records_a_self_exclusion(venue: Venue, operator: User) -> None:
    api = api_client(operator)
    until = (today(venue) + timedelta(days=180)).isoformat()
    person = {"kind": "DNI", "number": dni(30_000_110)}
    answer = api.post(f"/api/venues/{venue.pk}/self-exclusions/", {**person, "until": until}, format="json")
    assert answer.status_code == 201, answer.content
    shorter = (today(venue) + timedelta(days=10)).isoformat()
    refused(
        api.post(
            f"/api/venues/{venue.pk}/self-exclusions/",
            {**person, "until": shorter},
            format="json",
            HTTP_ACCEPT_LANGUAGE="es",
        ),
        409,
        "self_exclusion_shortened",
        "nunca se levanta",
    )
    body = api.post(
        url(venue), {**person, "birth_date": "1980-05-17", "door": "Puerta 1"}, format="json"
    ).json()
    assert body["decision"] == "self_excluded"


def test_who_may(venue: Venue) -> None:
    door = make_user("door-staff", venue, Role.DOOR)
    cashier = make_user("door-cashier", venue, Role.CASHIER)
    caller = make_user("door-caller", venue, Role.CALLER)
    inspector = make_user("door-inspector", venue, Role.INSPECTOR)
    data = {"kind": "DNI", "number": dni(30_000_120), "birth_date": "1980-05-17", "door": "Puerta 1"}
    assert api_client(door).post(url(venue), data, format="json").status_code == 201
    refused(api_client(cashier).post(url(venue), data, format="json"), 403, "role_required")
    refused(api_client(caller).post(url(venue), data, format="json"), 403, "role_required")
    assert api_client(inspector).post(url(venue), data, format="json").status_code == 403
    daily = api_client(inspector).get(url(venue, "daily/"), {"from": today(venue).isoformat()})
    assert daily.status_code == 200 and daily.json()[0]["admitted"] == 1
    stranger = make_user(
        "door-stranger", Venue.objects.create(name="Otro", licence_number="ML-X"), Role.OPERATOR
    )
    assert api_client(stranger).post(url(venue), data, format="json").status_code == 404


def test_no_document_number_in_audit_events_or_logs(
    venue: Venue, operator: User, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_register()
    published: list[Any] = []
    from halls import events

    for name in ("emit", "emit_many", "publish", "publish_many"):
        if hasattr(events, name):
            original = getattr(events, name)

            def spy(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                published.append((args, kwargs))
                return _original(*args, **kwargs)

            monkeypatch.setattr(events, name, spy)
    caplog.set_level(logging.DEBUG)
    api = api_client(operator)
    numbers = [dni(30_000_130), LISTED[0][1], "X1234567L"]
    before = AuditEntry.objects.count()
    for number in numbers:
        kind = "NIE" if number.startswith("X") else "DNI"
        api.post(
            url(venue),
            {"kind": kind, "number": number, "birth_date": "1980-05-17", "door": "P"},
            format="json",
        )
    api.post(
        f"/api/venues/{venue.pk}/self-exclusions/",
        {"kind": "NIE", "number": "X1234567L", "until": (today(venue) + timedelta(days=5)).isoformat()},
        format="json",
    )
    purge_visits()
    entries = list(AuditEntry.objects.order_by("pk")[before:])
    assert {e.action for e in entries} >= {"door.visit", "door.self_excluded"}
    text = json.dumps([[e.data, e.object_id, e.actor_label] for e in entries], default=str)
    text += repr(published) + caplog.text
    for number in numbers:
        assert number not in text and number[:-1] not in text
    assert "1980-05-17" not in text


def test_the_purge_runs_on_the_beat() -> None:
    from django.conf import settings

    assert settings.CELERY_BEAT_SCHEDULE["purge-door-visits"]["task"] == purge_visits.name
