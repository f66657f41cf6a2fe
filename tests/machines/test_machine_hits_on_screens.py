"""A machine's progressive hit on the hall screens: "Máquina <asset number>", level and amount.

The machine gateway awards a hit with ``winner={"source": "machine:<id>", "label": <asset>, "hand":
<game id>}``; the source holds the database id, which players never see, so the screens name the machine
by its label. Tables keep their own wording (seat, hand).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User

from halls.eventtypes import EventType
from halls.models import Room, Screen, Venue
from jackpots.models import Pool
from jackpots.services import awards, notify
from jackpots.services.readmodels import screens
from tests.jackpots.pool_fixtures import an10_venue, level_of, make_pool, pool_operator

__all__ = ["an10_venue", "pool_operator"]  # fixtures, imported for pytest

pytestmark = pytest.mark.django_db

D = Decimal


@pytest.fixture(autouse=True)
def _spanish(settings: Any) -> None:
    """Hall screens speak their venue's Spanish; the labels are read here in Spanish."""
    settings.LANGUAGE_CODE = "es"


@pytest.fixture
def machine_pool(an10_venue: Venue, pool_operator: User) -> Pool:
    return make_pool(
        an10_venue, pool_operator, code="SLOT-1", pack="", bet=None, members=("17",), source_type="machine"
    )


@pytest.fixture
def hall_screen(an10_venue: Venue) -> Screen:
    room = Room.objects.create(venue=an10_venue, name="Sala de máquinas")
    return Screen.objects.create(venue=an10_venue, room=room, name="Pantalla máquinas")


def machine_hit(pool: Pool, *, key: str = "machine:17:9") -> awards.AwardResult:
    return awards.award_level(
        level=level_of(pool),
        percent=D("100"),
        winner={"source": "machine:17", "label": "1001", "hand": "g-124"},
        idempotency_key=key,
        actor="gateway",
    )


def test_a_machine_hit_is_announced_on_the_room_stream_by_asset_number(
    machine_pool: Pool,
    hall_screen: Screen,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    published: list[Any] = []
    monkeypatch.setattr("halls.events.publish", published.append)
    with django_capture_on_commit_callbacks(execute=True):
        result = machine_hit(machine_pool)
    paid = result.lines[0].amount
    assert paid == D("5000.00")  # the whole seed: 100 % of the meter, whole cents
    on_screen = [e for e in published if e.stream == hall_screen.room.stream and e.type == EventType.POOL_HIT]
    assert len(on_screen) == 1
    hit = on_screen[0].data
    assert (hit["source"], hit["source_kind"], hit["machine"]) == ("Máquina 1001", "machine", "1001")
    assert (hit["level_name"], hit["amount"], hit["pool"]) == ("Carrusel", str(paid), machine_pool.pk)
    assert "Máquina 17" not in str(hit)


def test_the_pool_hit_event_carries_the_winner_label(machine_pool: Pool) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def listen(pool: Pool, type: str, data: dict[str, Any]) -> None:
        seen.append((type, data))

    notify.register_pool_event_listener(listen)
    try:
        machine_hit(machine_pool)
    finally:
        notify.unregister_pool_event_listener(listen)
    hits = [data for type, data in seen if type == EventType.POOL_HIT]
    assert [(h["source"], h["label"], h["hand"]) for h in hits] == [("machine:17", "1001", "g-124")]


def test_the_meter_page_names_the_last_machine_hit(machine_pool: Pool) -> None:
    machine_hit(machine_pool)
    last = screens.meter_page_snapshot(machine_pool)["last_hits"]
    assert [(h["source"], h["machine"], h["hand"]) for h in last] == [("Máquina 1001", "1001", "g-124")]


def test_table_hits_keep_their_wording() -> None:
    context = {"table_name": "Mesa 1", "source": "table:1"}
    assert screens.source_label("table:1/hand:40/seat:3", context, "") == "Mesa 1"
    assert screens.source_label("table:2/hand:40/seat:3", {}, "x") == "Mesa 2"
    assert screens.source_label("machine:17", {}, "") == "Máquina 17"  # no label: the id is all there is
    assert screens.source_kind("table:2/hand:40") == "table"
    assert screens.source_kind("machine:17") == "machine"
    assert screens.source_kind("somewhere") == ""
