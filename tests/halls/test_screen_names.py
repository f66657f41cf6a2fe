"""A screen's name is unique among its room's screens, whatever its case (halls.services.setup): a new screen
or a rename that repeats another's is refused 409 screen_exists naming it, nothing written; the setup page
says so in Spanish. Other rooms may use the name."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from halls.errors import Conflict
from halls.models import AuditEntry, Room, Screen
from halls.services import setup
from tests.api_support import api_client, refused

pytestmark = pytest.mark.django_db


def _written() -> tuple[int, int]:
    return Screen.objects.count(), AuditEntry.objects.filter(action__startswith="screen.").count()


def test_a_new_screen_with_a_name_the_room_has_is_refused_naming_it(room: Room, operator: User) -> None:
    setup.create_screen(room=room, name="Pantalla Barra", actor=operator)
    before = _written()
    with pytest.raises(Conflict) as refused_:
        setup.create_screen(room=room, name="  pantalla   barra ", actor=operator)
    assert refused_.value.code == "screen_exists"
    assert refused_.value.details == {"screen": "Pantalla Barra"}
    assert "Pantalla Barra" in refused_.value.message
    assert _written() == before
    # Another room of the venue may have a screen of that name.
    other = setup.create_room(venue=room.venue, name="Sala 2", actor=operator)
    assert setup.create_screen(room=other, name="Pantalla barra", actor=operator).name == "Pantalla barra"


def test_the_api_refuses_a_repeated_name_on_create_and_on_rename(room: Room, operator: User) -> None:
    api = api_client(operator)
    first = api.post("/api/screens/", {"room": room.pk, "name": "Pantalla 1"}, format="json")
    assert first.status_code == 201, first.content
    second = api.post("/api/screens/", {"room": room.pk, "name": "Pantalla 2"}, format="json")
    assert second.status_code == 201, second.content
    before = _written()
    error = refused(
        api.post("/api/screens/", {"room": room.pk, "name": "PANTALLA 1"}, format="json"),
        409,
        "screen_exists",
        "Pantalla 1",
    )
    assert error["details"] == {"screen": "Pantalla 1"}
    error = refused(
        api.patch(f"/api/screens/{second.json()['id']}/", {"name": "pantalla 1"}, format="json"),
        409,
        "screen_exists",
        "Pantalla 1",
    )
    assert error["details"] == {"screen": "Pantalla 1"}
    assert _written() == before
    assert Screen.objects.get(pk=second.json()["id"]).name == "Pantalla 2"
    # Its own name in another case is a rename, not a clash.
    renamed = api.patch(f"/api/screens/{second.json()['id']}/", {"name": "PANTALLA 2"}, format="json")
    assert renamed.status_code == 200, renamed.content


def test_the_setup_page_says_the_refusal_in_spanish(room: Room, operator: User, settings: Any) -> None:
    setup.create_screen(room=room, name="Pantalla principal", actor=operator)
    client = Client()
    client.force_login(operator)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    before = _written()
    page = client.post(
        "/setup/",
        {"action": "screen_create", "section": "rooms", "room": room.pk, "name": "pantalla principal"},
    )
    assert page.status_code in (200, 409), page.status_code
    text = page.content.decode()
    assert 'data-code="screen_exists"' in text
    assert (
        f"La sala {room.name} ya tiene una pantalla llamada «Pantalla principal»: elija otro nombre." in text
    )
    assert _written() == before
