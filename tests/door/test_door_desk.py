"""The door's desk (issue 27): the door role's rights, the idempotent admission, the override with a second
person, exits and the live count of who is inside, and the K/L/M DNIs."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from halls.door.documents import Document, Kind, Problem, Refusal, keyed_digest, read_document
from halls.door.models import Decision, Visit
from halls.door.services import admission, doorday, presence, registers
from halls.models import AuditEntry, Proposal, Role, Venue
from halls.services import venueclock
from tests.api_support import api_client, refused
from tests.conftest import make_user
from tests.door.register_support import dni, people, register_file, stream

pytestmark = pytest.mark.django_db

LISTED = people(40_000_000, 3)
ADULT = "1980-05-17"


def url(venue: Venue, rest: str = "") -> str:
    return f"/api/venues/{venue.pk}/admissions/{rest}"


def person(number: str, kind: str = "DNI", **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "number": number, "birth_date": ADULT, "door": "Puerta 1", **extra}


@pytest.fixture
def door(venue: Venue) -> User:
    return make_user("portero", venue, Role.DOOR)


def counts() -> tuple[int, int]:
    return Visit.objects.count(), AuditEntry.objects.count()


# --- the role's rights ----------------------------------------------------------------------------------


def test_the_door_admits_and_nothing_else(venue: Venue, door: User) -> None:
    api = api_client(door)
    assert api.post(url(venue), person(dni(50_000_001)), format="json").status_code == 201
    assert api.get(url(venue, "live/")).status_code == 200
    until = (venueclock.today(venue) + timedelta(days=400)).isoformat()
    selfex = {"kind": "DNI", "number": dni(50_000_002), "until": until}
    assert api.post(f"/api/venues/{venue.pk}/self-exclusions/", selfex, format="json").status_code == 201
    # No till, no games, no machines, no daily report.
    refused(
        api.get(f"/api/venues/{venue.pk}/admissions/daily/", {"from": "2026-12-01"}), 403, "role_required"
    )
    assert api.get(f"/api/cashier/venues/{venue.pk}/tills/").status_code in (403, 404)
    rooms = api.get("/api/rooms/")
    assert rooms.status_code == 200 and rooms.json() == []
    assert api.get("/api/machines/", {"venue": venue.pk}).status_code in (403, 404)
    venues = api.get("/api/venues/").json()
    assert [(v["id"], v["roles"]) for v in venues] == [(venue.pk, ["door"])]
    web = Client()
    web.force_login(door)
    assert web.get("/cashier/").status_code in (200, 403)  # the page's frame only: see the menu below
    home = web.get("/").content.decode()
    assert "/admission/" in home and "/machines/floor/" not in home and 'href="/cashier/"' not in home
    assert web.get("/admission/").status_code == 200


def test_who_else_may(venue: Venue, operator: User) -> None:
    cashier = make_user("cajera", venue, Role.CASHIER)
    inspector = make_user("inspectora", venue, Role.INSPECTOR)
    data = person(dni(50_000_010))
    refused(api_client(cashier).post(url(venue), data, format="json"), 403, "role_required")
    assert api_client(operator).post(url(venue), data, format="json").status_code == 201
    assert api_client(inspector).post(url(venue), person(dni(50_000_011)), format="json").status_code == 403
    live = api_client(inspector).get(url(venue, "live/"))
    assert live.status_code == 200 and live.json()["inside"] == 1
    assert api_client(cashier).get(url(venue, "live/")).status_code == 403
    web = Client()
    web.force_login(cashier)
    assert web.get("/admission/").status_code == 403
    # The inspector reads the page: the count and the last decisions, no control.
    web.force_login(inspector)
    page = web.get("/admission/").content.decode()
    assert 'id="inside"' in page and 'id="recent"' in page and 'id="admit-form"' not in page
    web.force_login(operator)
    assert 'id="admit-form"' in web.get("/admission/").content.decode()


def test_the_inspector_reads_the_visits_and_refusals_of_each_day_in_spanish(venue: Venue, door: User) -> None:
    client = api_client(door)
    assert client.post(url(venue), person(dni(50_000_020)), format="json").status_code == 201
    minor = person(dni(50_000_021), birth_date=venueclock.today(venue).replace(year=2015).isoformat())
    assert client.post(url(venue), minor, format="json").json()["decision"] == "minor"
    inspector = make_user("inspectora", venue, Role.INSPECTOR)
    web = Client(headers={"accept-language": "es"})
    web.force_login(inspector)
    page = web.get("/admission/").content.decode()
    assert "Visitas por día" in page and "Autoexcluidos" in page
    today = venueclock.today(venue).isoformat()
    row = page.split(f'data-day="{today}"', 1)[1].split("</tr>", 1)[0]
    # Admitted 1, minors 1, on a register 0, self-excluded 0, refused 1, total 2: counts only, no document.
    assert [c.split("<", 1)[0] for c in row.split("<td>")[2:]] == ["1", "1", "0", "0", "1", "2"]
    assert "50000020" not in page and "50000021" not in page


# --- idempotency ----------------------------------------------------------------------------------------


def test_a_retry_answers_the_first_visit(venue: Venue, door: User) -> None:
    api = api_client(door)
    data = person(dni(50_000_020), idempotency_key="page-1")
    first = api.post(url(venue), data, format="json")
    assert first.status_code == 201 and first.json()["replayed"] is False
    before = counts()
    again = api.post(url(venue), data, format="json")
    assert again.status_code == 200 and again.json()["visit"] == first.json()["visit"]
    assert again.json()["replayed"] is True and counts() == before
    # The header works as the field does.
    by_header = api.post(url(venue), person(dni(50_000_021)), format="json", HTTP_IDEMPOTENCY_KEY="dev-9")
    assert by_header.status_code == 201
    assert (
        api.post(url(venue), person(dni(50_000_021)), format="json", HTTP_IDEMPOTENCY_KEY="dev-9").json()[
            "visit"
        ]
        == by_header.json()["visit"]
    )
    # The same key for another person: refused, nothing written.
    before = counts()
    refused(
        api.post(url(venue), person(dni(50_000_022), idempotency_key="page-1"), format="json"),
        409,
        "idempotency_key_reused",
    )
    assert counts() == before


# --- the override ---------------------------------------------------------------------------------------

DAMAGED = "5000003O"  # a DNI whose check letter cannot be read right (the door cannot validate it)


def test_the_override_needs_a_second_person(venue: Venue, door: User) -> None:
    boss = make_user("encargada", venue, Role.OPERATOR)
    cashier = make_user("cajero", venue, Role.CASHIER)
    api = api_client(door)
    damaged = person(DAMAGED, override=True)
    assert isinstance(read_document("DNI", DAMAGED), Refusal)
    before = counts()
    refused(
        api.post(url(venue), damaged, format="json", HTTP_ACCEPT_LANGUAGE="es"),
        400,
        "second_person_required",
        "segunda persona",
    )
    refused(
        api.post(
            url(venue),
            {**damaged, "second_username": "portero", "second_password": "pw-portero"},
            format="json",
            HTTP_ACCEPT_LANGUAGE="es",
        ),
        400,
        "second_person_same",
    )
    refused(
        api.post(
            url(venue),
            {**damaged, "second_username": "encargada", "second_password": "wrong"},
            format="json",
            HTTP_ACCEPT_LANGUAGE="es",
        ),
        400,
        "second_person_not_authenticated",
        "contraseña",
    )
    refused(
        api.post(
            url(venue),
            {**damaged, "second_username": "cajero", "second_password": "pw-cajero"},
            format="json",
        ),
        403,
        "second_person_not_allowed",
    )
    # A document that reads well is not overridden.
    refused(
        api.post(
            url(venue),
            {
                **person(dni(50_000_030), override=True),
                "second_username": "encargada",
                "second_password": "pw-encargada",
            },
            format="json",
        ),
        409,
        "override_not_needed",
    )
    assert counts() == before
    assert cashier.pk != boss.pk

    answer = api.post(
        url(venue),
        {**damaged, "second_username": "encargada", "second_password": "pw-encargada"},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    assert answer.json()["decision"] == "admitted" and answer.json()["override"] is True
    visit = Visit.objects.get(pk=answer.json()["visit"])
    assert (visit.override, visit.confirmed_by, visit.decided_by) == (True, boss, door)
    entry = AuditEntry.objects.filter(action="door.visit").order_by("-pk").first()
    assert entry is not None and entry.data["override"] is True and entry.data["confirmed_by"] == boss.pk
    assert DAMAGED not in str(entry.data)
    # Four eyes: the override is recorded as an approved proposal, both names in the audit alike.
    decided = Proposal.objects.get(kind="door.override")
    assert (decided.target, decided.status) == (f"visit:{visit.pk}", "applied")
    assert (decided.proposed_by, decided.decided_by) == (door, boss)
    names = AuditEntry.objects.filter(object_type="halls.proposal", object_id=str(decided.pk)).order_by("pk")
    assert [(e.action, e.actor_label) for e in names] == [
        ("foureyes.proposed", door.username),
        ("foureyes.approved", "encargada"),
    ]
    assert DAMAGED not in str([e.data for e in names])


def test_the_override_still_refuses_minors_and_the_listed(venue: Venue, door: User) -> None:
    make_user("encargada", venue, Role.OPERATOR)
    second = {"override": True, "second_username": "encargada", "second_password": "pw-encargada"}
    api = api_client(door)
    minor = api.post(
        url(venue),
        {
            **person(DAMAGED),
            **second,
            "birth_date": (venueclock.today(venue) - timedelta(days=3650)).isoformat(),
        },
        format="json",
    )
    assert minor.json()["decision"] == "minor"
    # A listed passport that reads well is decided the ordinary way, never by override.
    registers.load_register_file(
        stream=stream(register_file([("PASSPORT", "ZZ123456", "FRA"), *LISTED])),
        actor="t",
        create_name="RGIAJ",
    )
    listed = api.post(url(venue), {**person("ZZ123456", "PASSPORT", country="FRA"), **second}, format="json")
    refused(listed, 409, "override_not_needed")  # it reads well: the ordinary way
    ordinary = api.post(url(venue), person("ZZ123456", "PASSPORT", country="FRA"), format="json")
    assert ordinary.json()["decision"] == "prohibited"
    assert ordinary.json()["decided_by_register"]["code"] == "RGIAJ"


# --- exits and the live count ---------------------------------------------------------------------------


def test_exits_move_the_live_count(venue: Venue, door: User) -> None:
    api = api_client(door)
    for n in range(3):
        api.post(url(venue), person(dni(50_000_040 + n)), format="json")
    api.post(url(venue), person(dni(50_000_050), birth_date="2015-01-01"), format="json")  # not inside
    assert api.get(url(venue, "live/")).json()["inside"] == 3
    exit_data = {"kind": "DNI", "number": dni(50_000_041), "door": "Salida"}
    first = api.post(url(venue, "exits/"), exit_data, format="json")
    assert first.status_code == 201 and first.json()["inside"] == 2
    before = counts()
    again = api.post(url(venue, "exits/"), exit_data, format="json")
    assert again.status_code == 200 and again.json()["replayed"] is True and counts() == before
    refused(
        api.post(url(venue, "exits/"), {**exit_data, "number": dni(50_000_050)}, format="json"),
        409,
        "not_admitted_today",
    )
    live = api.get(url(venue, "live/"), {"door": "Puerta 1"}).json()
    assert (live["admitted"], live["left"], live["inside"]) == (3, 1, 2)
    assert [r["decision"] for r in live["recent"]] == ["minor", "admitted", "admitted", "admitted"]
    assert all("number" not in r and "digest" not in r for r in live["recent"])
    assert sum(1 for r in live["recent"] if r["left_at"]) == 1
    # Re-admitted, the person is inside again; the exit closes the new visit.
    api.post(url(venue), person(dni(50_000_041)), format="json")
    assert api.get(url(venue, "live/")).json()["inside"] == 3
    assert AuditEntry.objects.filter(action="door.left").count() == 1
    # What the cards and terminals ask: admitted today (and inside), by the document's digest.
    digest = keyed_digest(registers.register_key(), admission.document_from("DNI", dni(50_000_041)))
    visit = presence.admitted_visit(venue, digest, inside=True)
    assert visit is not None and visit.left_at is None
    minor = keyed_digest(registers.register_key(), admission.document_from("DNI", dni(50_000_050)))
    assert presence.admitted_visit(venue, minor) is None


def test_the_door_day_starts_at_the_setting_hour(venue: Venue) -> None:
    zone = ZoneInfo(venue.time_zone)
    late = datetime(2026, 12, 5, 2, 30, tzinfo=zone)
    day, start, end = doorday.door_day(venue, late)
    assert day == date(2026, 12, 4) and start == datetime(2026, 12, 4, 6, tzinfo=zone)
    assert end == datetime(2026, 12, 5, 6, tzinfo=zone)
    with override_settings(HALL_DOOR_BY_JURISDICTION={venue.jurisdiction: {"day_start_hour": 0}}):
        assert doorday.door_day(venue, late)[0] == date(2026, 12, 5)


def test_a_visit_at_the_door_counts_until_the_day_ends(venue: Venue, door: User) -> None:
    api = api_client(door)
    api.post(url(venue), person(dni(50_000_060)), format="json")
    Visit.objects.update(at=Visit.objects.get().at - timedelta(days=1, hours=1))
    assert api.get(url(venue, "live/")).json()["inside"] == 0
    assert Visit.objects.get().decision == Decision.ADMITTED


# --- K, L and M DNIs ------------------------------------------------------------------------------------


def test_k_l_m_dnis_are_read_with_their_check_letter() -> None:
    # K1234567 is checked like 01234567: its letter is L.
    assert read_document("DNI", "K1234567L") == Document(Kind.DNI, "K1234567L", "ES")
    assert read_document("DNI", "l-1234567-l") == Document(Kind.DNI, "L1234567L", "ES")
    assert read_document("DNI", "M1234567L") == Document(Kind.DNI, "M1234567L", "ES")
    assert read_document("DNI", "K1234567A") == Refusal(Problem.BAD_CHECK_LETTER)
    assert read_document("DNI", "K123456L") == Refusal(Problem.BAD_FORMAT)
    assert read_document("DNI", "J1234567L") == Refusal(Problem.BAD_FORMAT)


def test_a_retry_racing_the_first_answers_it(
    venue: Venue, door: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two requests with one key at once: the second's look-up missed the first's visit, its insert meets
    the unique key, and it answers the first visit (nothing written twice)."""
    document = admission.document_from("DNI", dni(50_000_070))
    kwargs: dict[str, Any] = {
        "venue": venue,
        "door": "Puerta 1",
        "document": document,
        "birth_date": date(1980, 5, 17),
        "actor": door,
        "idempotency_key": "race-1",
    }
    first = admission.admit_once(**kwargs)
    real = admission._replay
    calls: list[str] = []

    def missed_once(*args: Any) -> Any:
        calls.append("look-up")
        return None if len(calls) == 1 else real(*args)

    monkeypatch.setattr(admission, "_replay", missed_once)
    before = counts()
    second = admission.admit_once(**kwargs)
    assert (second.visit.pk, second.replayed, len(calls)) == (first.visit.pk, True, 2)
    assert counts() == before
