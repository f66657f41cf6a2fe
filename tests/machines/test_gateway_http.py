"""The gateway's HTTP batch endpoint, for interface boards that cannot hold a WebSocket: replies in order
(a malformed message refused alone), retries of a whole batch are duplicates and the pool stays exact,
oversized bodies and batches are refused with 413 and nothing written, and only the machine's own device
token opens it."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from prometheus_client import REGISTRY
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from halls.models import Venue
from jackpots.models import Contribution, Pool
from machines import api, protocol
from machines.models import Machine, MachineState, MeterSnapshot, Play
from machines.services import registry
from tests.machines.machine_fixtures import (
    SEEDS,
    an10_venue,
    board,
    expected,
    link,
    live_amounts,
    nothing_written,
    pool_operator,
    register,
    slot_pool,
)

__all__ = ["an10_venue", "board", "link", "pool_operator", "slot_pool"]

pytestmark = pytest.mark.django_db

URL = "/api/gateway/messages/"
D = Decimal


def device(machine: Machine, token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Device {machine.asset_number}:{token}")
    return client


def post(client: APIClient, messages: Any, path: str = URL) -> Any:
    return client.post(path, {"messages": messages}, format="json")


def play(seq: int, bet: str = "1.00", win: str = "0.00") -> dict[str, Any]:
    return {"type": "play", "seq": seq, "game_id": f"g-{seq}", "bet": bet, "win": win}


def test_replies_come_in_order_with_the_levels(board: tuple[Machine, str], slot_pool: Pool) -> None:
    machine, token = board
    meters = {
        "type": "meters",
        "seq": 4,
        "coin_in": "5.00",
        "coin_out": "0.00",
        "jackpots_paid": "0.00",
        "credits": "0.00",
        "games_played": 2,
    }
    answer = post(
        device(machine, token),
        [
            {"type": "hello", "last_seq": 0, "software_version": "4.1.0"},
            play(1, bet="2.00"),
            {"type": "play", "seq": 2, "game_id": "g-2", "bet": 2.5, "win": "0.00"},  # a float: refused
            play(3, bet="3.00"),
            "not an object",
            meters,
            {"type": "heartbeat"},
        ],
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    replies = body["replies"]
    assert [r["type"] for r in replies] == ["welcome", "ack", "ack", "ack", "ack", "ack", "ack"]
    assert [(r["seq"], r["status"], r["code"]) for r in replies[1:]] == [
        (1, "accepted", ""),
        (2, "rejected", "bad_amount"),
        (3, "accepted", ""),
        (None, "rejected", "malformed_json"),
        (4, "accepted", ""),
        (None, "accepted", ""),
    ]
    assert replies[0]["machine"] == machine.asset_number
    # The levels as the board shows them (whole cents, rounded down) after this batch.
    assert body["levels"] == [{"level": "Grand", "amount": "1000.05"}, {"level": "Major", "amount": "100.02"}]
    assert list(Play.objects.filter(machine=machine).values_list("seq", flat=True).order_by("seq")) == [1, 3]
    assert MeterSnapshot.objects.filter(machine=machine, seq=4).exists()
    assert live_amounts(slot_pool) == expected(SEEDS, D("5.00"))
    machine.refresh_from_db()
    assert (machine.online, machine.last_seq) == (True, 4)


def test_a_bet_above_the_limit_is_refused_alone(board: tuple[Machine, str], slot_pool: Pool) -> None:
    """The protocol and the contribution share one limit (halls.money.MAX_BET): the largest bet is taken
    with its batch, a larger one is refused by itself (bad_amount) and the rest of the batch is taken."""
    machine, token = board
    batch = [play(1, bet="999999999999.99"), play(2, bet="1.00"), play(3, bet="1000000000000.00")]
    replies = post(device(machine, token), batch).json()["replies"]
    assert [(r["seq"], r["status"], r["code"]) for r in replies] == [
        (1, "accepted", ""),
        (2, "accepted", ""),
        (3, "rejected", "bad_amount"),
    ]
    assert list(Play.objects.filter(machine=machine).values_list("seq", flat=True).order_by("seq")) == [1, 2]
    assert (
        Contribution.objects.filter(source=machine.source).values("idempotency_key").distinct().count() == 2
    )


def test_a_batch_sent_three_times_is_taken_once(board: tuple[Machine, str], slot_pool: Pool) -> None:
    machine, token = board
    client = device(machine, token)
    batch = [play(1, bet="1.00"), play(2, bet="2.00"), play(3, bet="4.00")]
    first = post(client, batch).json()["replies"]
    assert [r["status"] for r in first] == ["accepted"] * 3
    for _ in range(2):
        with nothing_written():
            again = post(client, batch).json()["replies"]
        assert [(r["seq"], r["status"]) for r in again] == [
            (1, "duplicate"),
            (2, "duplicate"),
            (3, "duplicate"),
        ]
    # The same seq with other content is refused, and changes nothing either.
    with nothing_written():
        reused = post(client, [play(2, bet="9.00")]).json()["replies"]
    assert (reused[0]["status"], reused[0]["code"]) == ("rejected", "seq_reused")
    assert Contribution.objects.filter(source=f"machine:{machine.pk}").count() == 3 * 2  # two levels
    assert live_amounts(slot_pool) == expected(SEEDS, D("7.00"))


def test_out_of_order_seqs_are_taken_late(board: tuple[Machine, str], slot_pool: Pool) -> None:
    machine, token = board
    client = device(machine, token)
    replies = post(client, [play(1), play(4), play(3), play(2), play(2)]).json()["replies"]
    assert [(r["seq"], r["status"]) for r in replies] == [
        (1, "accepted"),
        (4, "accepted"),
        (3, "accepted"),  # late, inside the gap 4 opened
        (2, "accepted"),
        (2, "duplicate"),
    ]
    assert live_amounts(slot_pool) == expected(SEEDS, D("4.00"))


def test_too_large_or_malformed_bodies_are_refused_and_write_nothing(board: tuple[Machine, str]) -> None:
    machine, token = board
    client = device(machine, token)
    with nothing_written():
        too_many = post(client, [play(n) for n in range(1, protocol.MAX_BATCH + 2)])
        assert too_many.status_code == 413
        assert too_many.json()["error"]["code"] == "batch_too_large"

        padding = "x" * (api.MAX_BATCH_BYTES + 1)
        too_big = client.post(
            URL, json.dumps({"messages": [play(1)], "padding": padding}), content_type="application/json"
        )
        assert too_big.status_code == 413
        assert too_big.json()["error"]["code"] == "too_large"

        for body, code in [
            ("not json", "malformed_json"),
            ("[1, 2]", "malformed_json"),
            ("{}", "missing_field"),
            ('{"messages": "play"}', "bad_field"),
        ]:
            answer = client.post(URL, body, content_type="application/json")
            assert answer.status_code == 400, body
            assert answer.json()["error"]["code"] == code, body
    # 200 messages is the limit, not over it.
    full = post(client, [play(n) for n in range(1, protocol.MAX_BATCH + 1)])
    assert full.status_code == 200
    assert len(full.json()["replies"]) == protocol.MAX_BATCH


def test_only_the_machines_own_token_opens_the_endpoint(
    board: tuple[Machine, str], an10_venue: Venue, pool_operator: User, other_venue: Venue
) -> None:
    machine, token = board
    _, other_token = register(an10_venue, pool_operator)
    with nothing_written():
        for header in [
            f"Device {machine.asset_number}:wrong-token",
            f"Device {machine.asset_number}:{other_token}",  # another machine's token
            f"Device NO-SUCH:{token}",
            f"Device {machine.asset_number}",
            "Device",
        ]:
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=header)
            answer = post(client, [play(1)])
            assert answer.status_code == 401, header
            assert answer.json()["error"]["code"] == "bad_device_token", header
            assert answer["WWW-Authenticate"] == 'Device realm="machines"'

        anonymous = post(APIClient(), [play(1)])
        assert anonymous.status_code == 401
        assert anonymous.json()["error"]["code"] == "not_authenticated"

        # Staff credentials are not a device's.
        staff = APIClient()
        staff.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=pool_operator).key}")
        assert post(staff, [play(1)]).status_code == 401

        # The right token in the wrong venue.
        assert post(device(machine, token), [play(1)], f"{URL}?venue={other_venue.pk}").status_code == 401
    assert post(device(machine, token), [play(1)], f"{URL}?venue={machine.venue_id}").status_code == 200

    # A rotated token stops working at once.
    fresh = registry.rotate_token(machine=machine, actor=pool_operator)
    assert post(device(machine, token), [play(2)]).status_code == 401
    assert post(device(machine, fresh), [play(2)]).status_code == 200


def acks_counted(status: str, code: str) -> float:
    return REGISTRY.get_sample_value("hall_gateway_acks_total", {"status": status, "code": code}) or 0.0


def test_the_game_a_lock_found_in_progress_is_taken_and_every_answer_counted(
    board: tuple[Machine, str], pool_operator: User, slot_pool: Pool
) -> None:
    """A bridge posts its journal in batches: the play of the game in flight at the operator's lock is taken
    (``after_lock``) and the next refused, and each answer is counted on /metrics by its status and code,
    as the socket's are (a resend counted as a duplicate, never as a second play)."""
    machine, token = board
    client = device(machine, token)
    assert post(client, [play(1)]).status_code == 200
    registry.set_machine_state(machine=machine, state=MachineState.LOCKED, reason="test", actor=pool_operator)
    counted = {key: acks_counted(*key) for key in LABELS}
    replies = post(client, [play(2), play(3)]).json()["replies"]
    again = post(client, [play(2)]).json()["replies"]
    assert [(r["status"], r["code"]) for r in replies + again] == list(LABELS)
    assert {key: acks_counted(*key) - counted[key] for key in LABELS} == dict.fromkeys(LABELS, 1.0)
    assert Play.objects.filter(machine=machine).count() == 2


LABELS = (("accepted", "after_lock"), ("rejected", "machine_locked"), ("duplicate", ""))


def test_plays_of_a_locked_or_out_of_service_machine_are_refused(
    board: tuple[Machine, str], pool_operator: User, slot_pool: Pool, settings: Any
) -> None:
    settings.MACHINE_LOCK_GRACE_SECONDS = 0  # no game in flight taken (test_gateway.py shows the one that is)
    machine, token = board
    client = device(machine, token)
    for state, code in [
        (MachineState.LOCKED, "machine_locked"),
        (MachineState.OUT_OF_SERVICE, "machine_out_of_service"),
    ]:
        registry.set_machine_state(machine=machine, state=state, reason="test", actor=pool_operator)
        with nothing_written():
            replies = post(client, [play(1)]).json()["replies"]
        assert (replies[0]["status"], replies[0]["code"]) == ("rejected", code)
    assert live_amounts(slot_pool) == SEEDS
