"""The online register query (issue 27): the door asks the authority's service (a fake authority, a real
process) and its answer decides; while the service is down, slow or answering garbage the last loaded file
decides, within the second, and the visit records how the registers were consulted. The document goes to
the authority only: never to the log nor the audit."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from halls.door import online
from halls.door.documents import Document, Kind
from halls.door.models import Consultation, Decision, Register, Visit
from halls.door.services import admission, presence, registers
from halls.models import AuditEntry, Venue
from tests.api_support import api_client
from tests.door.authority_support import FakeAuthority
from tests.door.register_support import dni, people, register_file, stream

pytestmark = pytest.mark.django_db

ON_FILE = people(21_000_000, 3)  # listed in the loaded file
ONLINE_ONLY = ("DNI", dni(21_500_000), "ES")  # listed by the authority since the file was issued
NOBODY = ("DNI", dni(21_600_000), "ES")
ADULT = date(1980, 5, 17)


def _rgiaj_online(authority: FakeAuthority, *, timeout: float, budget: float) -> Iterator[FakeAuthority]:
    registers.load_register_file(stream=stream(register_file(ON_FILE)), actor="test", create_name="RGIAJ")
    authority.list_people([ON_FILE[0], ONLINE_ONLY])
    configured = {"RGIAJ": {"url": f"{authority.url}/query", "timeout": timeout}}
    with override_settings(HALL_DOOR_ONLINE_REGISTERS=configured, HALL_DOOR_ONLINE_BUDGET_SECONDS=budget):
        yield authority


@pytest.fixture
def online_rgiaj(authority: FakeAuthority) -> Iterator[FakeAuthority]:
    """The authority answering: whatever the machine's load, its answer must arrive (a loaded test machine
    once took 303 ms for the first query, past a 0.3 s timeout, and the file decided)."""
    yield from _rgiaj_online(authority, timeout=5.0, budget=6.0)


@pytest.fixture
def impatient_rgiaj(authority: FakeAuthority) -> Iterator[FakeAuthority]:
    """The door's timings of a hall (0.3 s a register, 0.8 s in all): for a service that fails."""
    yield from _rgiaj_online(authority, timeout=0.3, budget=0.8)


def admit(venue: Venue, person: tuple[str, str, str]) -> Visit:
    return admission.admit(
        venue=venue,
        door="Puerta 1",
        document=admission.document_from(*person),
        birth_date=ADULT,
        actor="test",
    )


def timed_admit(venue: Venue, person: tuple[str, str, str]) -> tuple[Visit, float]:
    started = time.monotonic()
    visit = admit(venue, person)
    return visit, time.monotonic() - started


def test_listed_online_is_refused_and_the_visit_says_online(
    venue: Venue, online_rgiaj: FakeAuthority
) -> None:
    visit = admit(venue, ONLINE_ONLY)  # not in the file: only the authority knows
    assert (visit.decision, visit.consultation, visit.registers_readable) == (
        Decision.PROHIBITED,
        Consultation.ONLINE,
        True,
    )
    assert visit.register is not None and visit.register.code == "RGIAJ"
    assert online_rgiaj.queries() == 1
    # The door's list of its last decisions names the register that refused, online as by file.
    assert presence.recent_visits(venue)[0].register == "RGIAJ"


def test_not_listed_online_is_admitted_even_if_an_older_file_listed_them(
    venue: Venue, online_rgiaj: FakeAuthority
) -> None:
    assert admit(venue, NOBODY).decision == Decision.ADMITTED
    # ON_FILE[1] was in the file but the authority no longer lists them: its answer is the newer.
    lifted = admit(venue, ON_FILE[1])
    assert (lifted.decision, lifted.consultation) == (Decision.ADMITTED, Consultation.ONLINE)


@pytest.mark.parametrize("mode", ["slow", "trickle", "down", "broken"])
def test_a_failing_service_leaves_the_decision_to_the_last_loaded_file(
    venue: Venue, impatient_rgiaj: FakeAuthority, mode: str
) -> None:
    impatient_rgiaj.control(mode=mode, delay=3)
    on_file, seconds = timed_admit(venue, ON_FILE[1])
    assert (on_file.decision, on_file.consultation) == (Decision.PROHIBITED, Consultation.FILE_FALLBACK)
    assert on_file.register_version is not None and on_file.register_version.number == 1
    assert seconds < 1.0
    unknown_to_the_file, seconds = timed_admit(venue, ONLINE_ONLY)
    assert (unknown_to_the_file.decision, unknown_to_the_file.consultation) == (
        Decision.ADMITTED,
        Consultation.FILE_FALLBACK,
    )
    assert unknown_to_the_file.registers_readable and seconds < 1.0


def test_a_stopped_service_leaves_the_decision_to_the_file(
    venue: Venue, impatient_rgiaj: FakeAuthority
) -> None:
    impatient_rgiaj.stop()
    visit, seconds = timed_admit(venue, ON_FILE[2])
    assert (visit.decision, visit.consultation) == (Decision.PROHIBITED, Consultation.FILE_FALLBACK)
    assert seconds < 1.0


def test_without_a_file_and_without_the_service_the_register_is_unreadable(
    venue: Venue, authority: FakeAuthority
) -> None:
    registers.create_register(code="RGIAJ", name="RGIAJ", jurisdiction="NATIONAL", actor="test")
    authority.control(mode="down")
    configured = {"RGIAJ": {"url": f"{authority.url}/query"}}
    with override_settings(HALL_DOOR_ONLINE_REGISTERS=configured):
        visit = admit(venue, NOBODY)
    assert (visit.decision, visit.consultation, visit.registers_readable) == (
        Decision.ADMITTED,
        Consultation.FILE_FALLBACK,
        False,
    )


def test_two_slow_registers_share_the_budget(venue: Venue, authority: FakeAuthority) -> None:
    registers.create_register(code="RGIAJ", name="RGIAJ", jurisdiction="NATIONAL", actor="test")
    registers.create_register(code="RJA", name="Regional", jurisdiction=venue.jurisdiction, actor="test")
    authority.control(mode="slow", delay=3)
    url = f"{authority.url}/query"
    configured = {"RGIAJ": {"url": url, "timeout": 0.6}, "RJA": {"url": url, "timeout": 0.6}}
    with override_settings(HALL_DOOR_ONLINE_REGISTERS=configured, HALL_DOOR_ONLINE_BUDGET_SECONDS=0.8):
        visit, seconds = timed_admit(venue, NOBODY)
    assert visit.consultation == Consultation.FILE_FALLBACK and seconds < 1.0


def test_registers_without_an_online_service_are_read_from_their_file(venue: Venue) -> None:
    registers.load_register_file(stream=stream(register_file(ON_FILE)), actor="test", create_name="RGIAJ")
    visit = admit(venue, ON_FILE[0])
    assert (visit.decision, visit.consultation) == (Decision.PROHIBITED, Consultation.FILE)
    assert Register.objects.get(code="RGIAJ") == visit.register


def test_the_api_names_the_consultation(venue: Venue, operator: User, online_rgiaj: FakeAuthority) -> None:
    kind, number, country = ONLINE_ONLY
    body = (
        api_client(operator)
        .post(
            f"/api/venues/{venue.pk}/admissions/",
            {"kind": kind, "number": number, "country": country, "birth_date": "1980-05-17", "door": "P"},
            format="json",
        )
        .json()
    )
    assert body["decision"] == "prohibited" and body["consultation"] == "online"
    assert body["decided_by_register"] == {"code": "RGIAJ", "name": "RGIAJ", "version": None}


def test_the_number_goes_to_the_authority_only(
    venue: Venue, online_rgiaj: FakeAuthority, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    before = AuditEntry.objects.count()
    admit(venue, ONLINE_ONLY)
    online_rgiaj.control(mode="broken")
    admit(venue, ON_FILE[0])
    entries = list(AuditEntry.objects.order_by("pk")[before:])
    assert [e.data["consultation"] for e in entries] == ["online", "file_fallback"]
    text = json.dumps([[e.data, e.object_id, e.actor_label] for e in entries], default=str) + caplog.text
    assert "RGIAJ answered online" in caplog.text and "garbage" in caplog.text
    for _kind, number, _country in (ONLINE_ONLY, ON_FILE[0]):
        assert number not in text and number[:-1] not in text


# --- the pure reading of an answer ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "content", "outcome"),
    [
        (200, b'{"listed": true}', online.Outcome.LISTED),
        (200, b'{"listed": false}', online.Outcome.NOT_LISTED),
        (200, b'{"listed": "yes"}', online.Outcome.GARBAGE),
        (200, b"[true]", online.Outcome.GARBAGE),
        (200, b"\xff\xfe", online.Outcome.GARBAGE),
        (200, b"", online.Outcome.GARBAGE),
        (500, b'{"listed": false}', online.Outcome.HTTP_ERROR),
        (404, b"", online.Outcome.HTTP_ERROR),
    ],
)
def test_reading_an_answer(status: int, content: bytes, outcome: online.Outcome) -> None:
    assert online.read_answer(status, content) is outcome


def test_an_unreachable_url_is_down_not_an_error(db: Any) -> None:
    from tests.door.authority_support import free_port_in_range

    register = online.OnlineRegister(url=f"http://127.0.0.1:{free_port_in_range()}/query", timeout=0.3)
    answer = online.query(register, Document(Kind.DNI, dni(1), "ES"))
    assert answer.outcome is online.Outcome.DOWN and answer.seconds < 0.5
    assert (
        online.query(
            online.OnlineRegister(url="not a url", timeout=0.3), Document(Kind.DNI, dni(1), "ES")
        ).outcome
        is online.Outcome.DOWN
    )
