"""POST /api/rooms/{id}/checks/ (issue 26): a check's result is stated, never guessed. A form-encoded body
without `ok` is refused with 400 naming `ok` (DRF would read the missing field as an unticked checkbox and
record a failed check), as a JSON one is; a check recorded as not working needs its note, through the API as
on the console's page. A refusal records nothing: no check row, no audit entry, no event."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from halls.models import AuditEntry, Room, SessionCheck
from tests.api_support import api_client, refused


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    seen: list[Any] = []
    monkeypatch.setattr("halls.events.publish", seen.append)
    return seen


def _rows() -> tuple[int, int]:
    return SessionCheck.objects.count(), AuditEntry.objects.count()


@pytest.mark.parametrize("form", ["multipart", "urlencoded", "json"])
def test_a_check_without_ok_is_refused_naming_ok(
    room: Room, caller: User, form: str, published: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    client = api_client(caller)
    url = f"/api/rooms/{room.pk}/checks/"
    body = {"check": "blower", "note": "Revisado"}
    before = _rows()
    with django_capture_on_commit_callbacks(execute=True):
        if form == "urlencoded":
            answer = client.post(
                url, "check=blower&note=Revisado", content_type="application/x-www-form-urlencoded"
            )
        elif form == "multipart":
            answer = client.post(url, body)  # the test client's default: multipart/form-data
        else:
            answer = client.post(url, body, format="json")
    error = refused(answer, 400, "invalid", "ok")
    assert "ok" in error["fields"], error
    assert _rows() == before
    assert published == []


@pytest.mark.parametrize("value", ["false", "true"])
def test_a_form_encoded_check_stating_ok_is_recorded_as_stated(room: Room, caller: User, value: str) -> None:
    answer = api_client(caller).post(
        f"/api/rooms/{room.pk}/checks/",
        f"check=reserve&ok={value}&note=Sin+bater%C3%ADa",
        content_type="application/x-www-form-urlencoded",
    )
    assert answer.status_code == 201, answer.content
    check = SessionCheck.objects.get(pk=answer.json()["id"])
    assert (check.check_name, check.ok, check.note) == ("reserve", value == "true", "Sin batería")
    entry = AuditEntry.objects.filter(action="session.check_recorded").latest("pk")
    assert entry.data["ok"] is (value == "true")


@pytest.mark.parametrize(
    ("body", "json"),
    [
        ({"check": "reader", "ok": False}, True),
        ({"check": "reader", "ok": False, "note": ""}, True),
        ({"check": "reader", "ok": False, "note": "   "}, True),
        ("check=reader&ok=false&note=", False),
        ("check=reader&ok=false", False),
    ],
)
def test_a_failed_check_without_a_note_is_refused_naming_the_note(
    room: Room,
    caller: User,
    body: Any,
    json: bool,
    published: list[Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    client = api_client(caller)
    url = f"/api/rooms/{room.pk}/checks/"
    before = _rows()
    with django_capture_on_commit_callbacks(execute=True):
        if json:
            answer = client.post(url, body, format="json")
        else:
            answer = client.post(url, body, content_type="application/x-www-form-urlencoded")
    error = refused(answer, 400, "note_required", "note")
    assert error["details"] == {"field": "note"}, error
    assert _rows() == before
    assert published == []


def test_a_passed_check_needs_no_note(room: Room, caller: User) -> None:
    answer = api_client(caller).post(
        f"/api/rooms/{room.pk}/checks/", {"check": "reader", "ok": True}, format="json"
    )
    assert answer.status_code == 201, answer.content
    assert (answer.json()["ok"], answer.json()["note"]) == (True, "")
