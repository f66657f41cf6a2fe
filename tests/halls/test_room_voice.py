"""The caller's voice of a room (halls.services.voice): one audio screen per room (the operator's choice),
mute and volume (the caller's), each change audited and told to the room's screens as "room.voice"; the
screen's snapshot says whether it is the audio screen."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.test import Client

from halls.errors import InvalidInput
from halls.models import AuditEntry, Room, Screen
from halls.services import voice
from tests.api_support import api_client, refused


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    seen: list[Any] = []
    monkeypatch.setattr("halls.events.publish", seen.append)
    return seen


@pytest.fixture
def second_screen(room: Room) -> Screen:
    return Screen.objects.create(venue=room.venue, room=room, name="Pantalla barra")


def test_one_audio_screen_per_room_chosen_audited_and_told(
    room: Room,
    screen: Screen,
    second_screen: Screen,
    operator: User,
    published: list[Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        voice.choose_audio_screen(room=room, screen=screen, actor=operator)
        state = voice.choose_audio_screen(room=room, screen=second_screen, actor=operator)
    assert state == {"room": room.pk, "audio_screen": second_screen.pk, "muted": False, "volume": 80}
    assert list(Screen.objects.filter(plays_audio=True)) == [second_screen]
    assert [(e.stream, e.type, e.data["audio_screen"]) for e in published] == [
        (room.stream, "room.voice", screen.pk),
        (room.stream, "room.voice", second_screen.pk),
    ]
    entries = AuditEntry.objects.filter(action="room.audio_screen_chosen").order_by("pk")
    assert [e.data for e in entries] == [
        {"old": None, "new": screen.pk},
        {"old": screen.pk, "new": second_screen.pk},
    ]
    # The same choice again changes nothing and records nothing.
    voice.choose_audio_screen(room=room, screen=second_screen, actor=operator)
    assert entries.count() == 2


def test_the_database_refuses_two_audio_screens_in_a_room(screen: Screen, second_screen: Screen) -> None:
    Screen.objects.filter(pk=screen.pk).update(plays_audio=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        Screen.objects.filter(pk=second_screen.pk).update(plays_audio=True)


def test_another_rooms_screen_is_refused(room: Room, operator: User) -> None:
    other = Room.objects.create(venue=room.venue, name="Sala 2")
    foreign = Screen.objects.create(venue=room.venue, room=other, name="Otra")
    with pytest.raises(InvalidInput) as refusal:
        voice.choose_audio_screen(room=room, screen=foreign, actor=operator)
    assert refusal.value.code == "bad_screen"
    assert not Screen.objects.filter(plays_audio=True).exists()


def test_mute_and_volume_are_audited_and_told(
    room: Room, caller: User, published: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        voice.set_voice(room=room, actor=caller, muted=True)
        voice.set_voice(room=room, actor=caller, volume=35)
        voice.set_voice(room=room, actor=caller, volume=35)  # no change: nothing told
    assert [(e.data["muted"], e.data["volume"]) for e in published] == [(True, 80), (True, 35)]
    room.refresh_from_db()
    assert (room.voice_muted, room.voice_volume) == (True, 35)
    entries = AuditEntry.objects.filter(action="room.voice_changed").order_by("pk")
    assert [e.data for e in entries] == [
        {"old": {"voice_muted": False}, "new": {"voice_muted": True}},
        {"old": {"voice_volume": 80}, "new": {"voice_volume": 35}},
    ]
    for bad in (-1, 101):
        with pytest.raises(InvalidInput):
            voice.set_voice(room=room, actor=caller, volume=bad)


def test_the_api_caller_sets_the_voice_operator_chooses_the_screen(
    room: Room, screen: Screen, caller: User, operator: User
) -> None:
    as_caller = api_client(caller)
    url = f"/api/rooms/{room.pk}/voice/"
    assert as_caller.get(url).json()["audio_screen_name"] is None
    answer = as_caller.post(url, {"muted": True, "volume": 60}, format="json")
    assert answer.status_code == 200, answer.content
    assert (answer.json()["muted"], answer.json()["volume"]) == (True, 60)
    assert as_caller.post(url, {"volume": 140}, format="json").status_code == 400

    choose = f"/api/rooms/{room.pk}/audio-screen/"
    refused(as_caller.post(choose, {"screen": screen.pk}, format="json"), 403, "role_required")
    answer = api_client(operator).post(choose, {"screen": screen.pk}, format="json")
    assert answer.status_code == 200, answer.content
    assert (answer.json()["audio_screen"], answer.json()["audio_screen_name"]) == (
        screen.pk,
        "Pantalla principal",
    )
    assert api_client(operator).post(choose, {"screen": 999999}, format="json").status_code == 400


def test_the_snapshot_tells_a_screen_whether_it_plays_the_voice(
    room: Room, screen: Screen, second_screen: Screen, operator: User
) -> None:
    voice.choose_audio_screen(room=room, screen=screen, actor=operator)
    client = Client()
    mine = client.get(f"/screens/{screen.token}/snapshot/").json()["voice"]
    other = client.get(f"/screens/{second_screen.token}/snapshot/").json()["voice"]
    assert mine == {
        "screen": screen.pk,
        "room": room.pk,
        "audio_screen": screen.pk,
        "muted": False,
        "volume": 80,
    }
    assert other["screen"] == second_screen.pk and other["audio_screen"] == screen.pk


def test_the_admin_chooses_the_audio_screen_through_the_service(
    room: Room, screen: Screen, second_screen: Screen, operator: User
) -> None:
    operator.is_staff = operator.is_superuser = True
    operator.save()
    client = Client()
    client.force_login(operator)
    answer = client.post(
        "/admin/halls/screen/",
        {"action": "make_audio_screen", "_selected_action": [second_screen.pk]},
        follow=True,
    )
    assert answer.status_code == 200
    assert list(Screen.objects.filter(plays_audio=True)) == [second_screen]
    entry = AuditEntry.objects.get(action="room.audio_screen_chosen")
    assert entry.actor == operator
    assert entry.data == {"old": None, "new": second_screen.pk}


def test_the_setup_page_chooses_and_clears_the_audio_screen(
    room: Room, screen: Screen, second_screen: Screen, operator: User, caller: User
) -> None:
    client = Client()
    client.force_login(operator)
    form = {"action": "screen_audio", "section": "rooms", "screen": second_screen.pk}
    assert client.post("/setup/", form).status_code == 302
    assert list(Screen.objects.filter(plays_audio=True)) == [second_screen]
    page = client.get("/setup/").content.decode()
    assert f'data-audio-screen="{second_screen.name}" data-plays-audio="true"' in page
    assert f'data-audio-screen="{screen.name}" data-plays-audio="false"' in page
    assert client.post("/setup/", form).status_code == 302  # the audio screen again: none plays
    assert not Screen.objects.filter(plays_audio=True).exists()
    assert [e.data for e in AuditEntry.objects.filter(action="room.audio_screen_chosen").order_by("pk")] == [
        {"old": None, "new": second_screen.pk},
        {"old": second_screen.pk, "new": None},
    ]
    # A caller does not choose it.
    as_caller = Client()
    as_caller.force_login(caller)
    assert as_caller.post("/setup/", form).status_code == 403
    assert not Screen.objects.filter(plays_audio=True).exists()


def test_the_demo_seeds_the_first_screen_of_each_room_as_its_audio_screen(db: None) -> None:
    from demo.seed import seed_demo

    seed_demo()
    seed_demo()  # idempotent: a second run chooses nothing again
    audio = Screen.objects.filter(plays_audio=True).order_by("room_id")
    # The electronic rooms too (seeded after the traditional ones): their balls are said as well.
    assert [s.name for s in audio] == [
        "Pantalla 1 · Sala Principal",
        "Pantalla · Sala 2",
        "Pantalla · Sala Electrónica",
        "Pantalla · Sala Electrónica 75",
    ]
    assert AuditEntry.objects.filter(action="room.audio_screen_chosen").count() == 4
