"""The sockets' batched token checks (issue 30, a reconnect storm): the connects of a moment read in one
query as plain values (bingo.electronic.consumers._read_terminals, halls.consumers._screens_for), and the
addresses' failure throttles in one cache read (halls.throttling.over_many)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bingo.electronic import consumers
from bingo.electronic.models import terminal_stream
from halls import consumers as screen_consumers
from halls import throttling
from halls.models import Screen, StreamCursor, room_stream
from tests.bingo.electronic.support import make_speciality, make_terminal

pytestmark = pytest.mark.django_db


def failures(address: str) -> int:
    throttle = throttling.AddressThrottle("device_failures")
    return len(throttle.cache.get(throttle.get_cache_key(address, None), []))


def test_a_batch_of_terminal_connects_is_one_query_each_answered_in_order(venue: Any, operator: Any) -> None:
    speciality, other = make_speciality(venue, operator), make_speciality(venue, operator)
    (first, token), (second, second_token) = (
        make_terminal(speciality, operator),
        make_terminal(other, operator),
    )
    StreamCursor.objects.create(stream=terminal_stream(first.pk), seq=7)  # its own stream moved
    retired, retired_token = make_terminal(speciality, operator)
    retired.device.active = False
    retired.device.save(update_fields=["active"])
    items = [
        ((first.device_id, token), "10.0.0.1"),
        ((second.device_id, "wrong"), "10.0.0.2"),
        ((first.device_id + 10_000, token), "10.0.0.3"),  # no such device
        ((retired.device_id, retired_token), "10.0.0.4"),
        ((second.device_id, second_token), "10.0.0.5"),
        ((second.device_id, ""), "10.0.0.6"),  # unusable
    ]
    with CaptureQueriesContext(connection) as read:
        found = consumers._read_terminals(items)
    assert len(read.captured_queries) == 1
    assert found[0] == consumers.Found(
        (room_stream(speciality.room_id), terminal_stream(first.pk)), speciality.pk, 7
    )
    assert found[1] is found[2] is found[3] is None
    assert found[4] == consumers.Found((room_stream(other.room_id), terminal_stream(second.pk)), other.pk, 0)
    assert found[5] is None
    # Each refusal counted against its address, the admitted ones not.
    assert [failures(f"10.0.0.{n}") for n in range(1, 7)] == [0, 1, 1, 1, 0, 1]


def test_an_address_over_its_failures_is_refused_without_reading_its_device(
    venue: Any, operator: Any
) -> None:
    speciality = make_speciality(venue, operator)
    terminal, token = make_terminal(speciality, operator)
    for _ in range(30):  # HALL_THROTTLE_RATES["device_failures"]: 30/min
        throttling.count_failure("10.0.0.9", "device_failures")
    found = consumers._read_terminals(
        [((terminal.device_id, token), "10.0.0.9"), ((terminal.device_id, token), "")]
    )
    assert found[0] is None
    assert found[1] is not None and found[1].speciality_id == speciality.pk


def test_the_throttles_of_many_addresses_in_one_read_agree_with_each_ones() -> None:
    for n, count in enumerate([0, 1, 29, 30, 31]):
        for _ in range(count):
            throttling.count_failure(f"10.1.0.{n}", "device_failures")
    addresses = [f"10.1.0.{n}" for n in range(5)]
    each = {address: throttling.AddressThrottle("device_failures").over(address) for address in addresses}
    assert throttling.over_many("device_failures", [*addresses, addresses[0]]) == each
    assert each == {
        "10.1.0.0": False,
        "10.1.0.1": False,
        "10.1.0.2": False,
        "10.1.0.3": True,
        "10.1.0.4": True,
    }
    assert throttling.over_many("device_failures", []) == {}


def test_a_batch_of_screen_connects_is_one_query(venue: Any, room: Any) -> None:
    shown = Screen.objects.create(venue=venue, room=room, name="Pantalla 1")
    off = Screen.objects.create(venue=venue, room=room, name="Pantalla 2", active=False)
    with CaptureQueriesContext(connection) as read:
        found = screen_consumers._screens_for([shown.token, off.token, "no-such-token", shown.token])
    assert len(read.captured_queries) == 1
    expected = screen_consumers.Found(shown.pk, room_stream(room.pk), room.pk, "Pantalla 1")
    assert found == [expected, None, None, expected]
