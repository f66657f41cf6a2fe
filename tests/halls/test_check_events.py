"""A material check recorded before a session opens (halls.services.sessions.record_check) is told to the
room's consoles on the room's staff stream ("session.check", published on commit): a pass or a
failure with its note, who ran it and when; a refused check tells nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from halls.eventtypes import EventType
from halls.models import Room, SessionCheck, room_staff_stream
from halls.services import sessions
from tests.api_support import api_client, refused


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    seen: list[Any] = []
    monkeypatch.setattr("halls.events.publish", seen.append)
    return seen


def test_a_recorded_check_is_told_on_the_staff_stream_after_commit(
    room: Room, caller: User, published: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    client = api_client(caller)
    with django_capture_on_commit_callbacks(execute=True):
        body = {"check": "blower", "ok": False, "note": "No sopla"}
        failed = client.post(f"/api/rooms/{room.pk}/checks/", body, format="json")
        assert failed.status_code == 201, failed.content
        passed = client.post(f"/api/rooms/{room.pk}/checks/", {"check": "reader", "ok": True}, format="json")
        assert passed.status_code == 201, passed.content
    assert [(e.stream, e.type) for e in published] == [
        (room_staff_stream(room.pk), EventType.SESSION_CHECK_RECORDED),
        (room_staff_stream(room.pk), EventType.SESSION_CHECK_RECORDED),
    ]
    first, second = (e.data for e in published)
    check = SessionCheck.objects.get(pk=failed.json()["id"])
    assert first == {
        "id": check.pk,
        "room": room.pk,
        "check": "blower",
        "ok": False,
        "note": "No sopla",
        "checked_by": "caller",
        "checked_at": check.checked_at,
    }
    assert (second["check"], second["ok"], second["note"]) == ("reader", True, "")
    assert published[1].seq == published[0].seq + 1


def test_a_failed_required_check_keeps_the_opening_refused(
    room: Room, caller: User, published: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    for name in ("blower", "reserve", "reader"):
        sessions.record_check(room=room, check_name=name, ok=True, actor=caller)
    sessions.record_check(room=room, check_name="reserve", ok=False, actor=caller, note="Sin batería")
    opening = api_client(caller).post(
        f"/api/rooms/{room.pk}/sessions/", {"inspection_balls": list(range(1, 91))}, format="json"
    )
    error = refused(opening, 409, "checks_missing")
    assert error.get("details", {}).get("checks") == ["reserve"], error


def test_a_refused_check_tells_nothing(
    room: Room, caller: User, published: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        refused(
            api_client(caller).post(f"/api/rooms/{room.pk}/checks/", {"check": "lights", "ok": True}),
            400,
            "invalid",
            "check",
        )
    assert published == []
