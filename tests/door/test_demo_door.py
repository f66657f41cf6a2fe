"""The demo's door (issue 27): a door account and a small register loaded once through the file loader,
whatever the starts; the DNI the banner names is refused as prohibited, the admitted sample admitted."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from demo.door import ADMITTED_SAMPLE, LISTED, REGISTER_CODE, seed_door
from demo.hall import seed_hall
from halls.door.models import Register, RegisterVersion
from halls.models import Role, StaffRole
from tests.api_support import api_client

pytestmark = pytest.mark.django_db


def test_the_demo_seeds_a_door_and_a_register_once() -> None:
    hall = seed_hall()
    seed_door(hall)
    again = seed_hall()
    seed_door(again)
    assert "door" in again.credentials
    door = User.objects.get(username="door")
    assert list(StaffRole.objects.filter(user=door).values_list("role", flat=True)) == [Role.DOOR]
    register = Register.objects.get(code=REGISTER_CODE)
    assert RegisterVersion.objects.filter(register=register).count() == 1
    assert register.current_version is not None and register.current_version.entry_count == len(LISTED)
    assert any(LISTED[0][1] in note and "/admission/" in note for note in again.notes)

    api = api_client(door)
    url = f"/api/venues/{hall.venue.pk}/admissions/"
    person = {"kind": "DNI", "birth_date": "1980-05-17", "door": "Puerta principal"}
    listed = api.post(url, {**person, "number": LISTED[0][1]}, format="json").json()
    assert listed["decision"] == "prohibited" and listed["decided_by_register"]["code"] == REGISTER_CODE
    assert (
        api.post(url, {**person, "number": ADMITTED_SAMPLE}, format="json").json()["decision"] == "admitted"
    )
