"""The machine WebSocket end to end: config.asgi.application, the Redis pub/sub channel layer, real commits.

A board connects with its device token (a wrong one is refused before the handshake completes), says
hello and gets its welcome, sends plays (a retry is a duplicate, a reused seq is refused), and hears what
the system tells it: the progressive broadcast the beat task sends, the unlock after the cashier pays its
hand pay, an operator's lock. A frame too large or malformed gets a rejected ack and changes nothing; a
frame far beyond any message closes the socket (1009).
"""

from __future__ import annotations

import asyncio
import json
import threading
from decimal import Decimal
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from config.asgi import application
from halls.models import Venue
from jackpots.models import Contribution, Pool
from machines import consumers, protocol, tasks
from machines.models import LinkGroup, LockReason, Machine, MachineState, Play, ProgressiveHit
from machines.services import gateway, handpay, links, registry
from tests.machines.machine_fixtures import (
    GRAND_RATE,
    MAJOR_RATE,
    an10_venue,
    board,
    cashier_user,
    link,
    live_amounts,
    machine_rows,
    pool_operator,
    register,
    row_counts,
    slot_pool,
)

__all__ = ["an10_venue", "board", "cashier_user", "link", "pool_operator", "slot_pool"]

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("isolated_layer")]

TIMEOUT = 5
D = Decimal


def url(machine: Machine, token: str, venue: int | None = None) -> str:
    tail = f"&venue={venue}" if venue is not None else ""
    return f"/ws/machines/{machine.asset_number}/?token={token}{tail}"


async def connect(machine: Machine, token: str, venue: int | None = None) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, url(machine, token, venue))
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    return communicator


async def send(communicator: WebsocketCommunicator, message: dict[str, Any] | str) -> dict[str, Any]:
    """Send a frame and return the reply to it."""
    text = message if isinstance(message, str) else json.dumps(message)
    await communicator.send_to(text_data=text)
    reply: dict[str, Any] = await communicator.receive_json_from(timeout=TIMEOUT)
    return reply


def play(seq: int, bet: str = "1.00", win: str = "0.00", game: str = "") -> dict[str, Any]:
    return {"type": "play", "seq": seq, "game_id": game or f"g-{seq}", "bet": bet, "win": win}


def reload(machine: Machine) -> Machine:
    return Machine.objects.get(pk=machine.pk)


async def test_a_wrong_or_missing_token_is_refused(layer: Any, board: tuple[Machine, str]) -> None:
    machine, token = board
    for path in (
        url(machine, "not-the-token"),
        f"/ws/machines/{machine.asset_number}/",
        f"/ws/machines/{machine.asset_number}/?token={token}&token={token}",
        f"/ws/machines/NO-SUCH-ASSET/?token={token}",
        url(machine, token, venue=machine.venue_id + 1000),  # the right token, another venue
        f"/ws/machines/{machine.asset_number}/?token={token}&venue=abc",
    ):
        communicator = WebsocketCommunicator(application, path)
        connected, code = await communicator.connect(timeout=TIMEOUT)
        assert (connected, code) == (False, consumers.CLOSE_REFUSED), path
    assert not (await database_sync_to_async(reload)(machine)).online


async def test_hello_a_play_and_its_duplicate(
    layer: Any, board: tuple[Machine, str], slot_pool: Pool
) -> None:
    machine, token = board
    communicator = await connect(machine, token, venue=machine.venue_id)
    assert (await database_sync_to_async(reload)(machine)).online

    welcome = await send(communicator, {"type": "hello", "last_seq": 0, "software_version": "4.1.0"})
    assert welcome["type"] == "welcome"
    assert (welcome["machine"], welcome["state"], welcome["last_seq"]) == (
        machine.asset_number,
        "in_service",
        0,
    )
    assert welcome["levels"] == [
        {"level": "Grand", "amount": "1000.00"},
        {"level": "Major", "amount": "100.00"},
    ]

    first = await send(communicator, play(1, bet="2.00"))
    assert (first["type"], first["seq"], first["status"]) == ("ack", 1, "accepted")
    again = await send(communicator, play(1, bet="2.00"))  # the board's retry: a no-op
    assert (again["seq"], again["status"]) == (1, "duplicate")
    reused = await send(communicator, play(1, bet="5.00"))  # the same seq with other content
    assert (reused["seq"], reused["status"], reused["code"]) == (1, "rejected", "seq_reused")
    second = await send(communicator, play(2, bet="3.00", win="6.00"))
    assert (second["seq"], second["status"]) == (2, "accepted")

    def stored() -> tuple[list[tuple[int, Decimal]], int, dict[str, Decimal], int]:
        plays = list(Play.objects.filter(machine=machine).order_by("seq").values_list("seq", "bet"))
        return plays, Contribution.objects.count(), live_amounts(slot_pool), reload(machine).last_seq

    plays, contributions, amounts, last_seq = await database_sync_to_async(stored)()
    assert plays == [(1, D("2.00")), (2, D("3.00"))]
    assert last_seq == 2
    assert contributions == 2 * 2  # one row per level per play
    assert amounts == {
        "Grand": D("1000") + D("5.00") * GRAND_RATE,
        "Major": D("100") + D("5.00") * MAJOR_RATE,
    }

    # A heartbeat is answered by nothing; the socket goes on.
    await communicator.send_json_to({"type": "heartbeat"})
    assert await communicator.receive_nothing(timeout=0.3)
    await communicator.disconnect()
    assert not (await database_sync_to_async(reload)(machine)).online


async def test_oversized_and_malformed_frames_are_rejected_and_change_nothing(
    layer: Any, board: tuple[Machine, str], slot_pool: Pool
) -> None:
    machine, token = board
    communicator = await connect(machine, token)
    await send(communicator, {"type": "hello", "last_seq": 0, "software_version": "4.1.0"})
    oversized = json.dumps({**play(1), "padding": "x" * protocol.MAX_MESSAGE_BYTES})
    refused = {
        "not json at all": "malformed_json",
        oversized: "too_large",
        "[1, 2, 3]": "malformed_json",
        json.dumps({"type": "jackpot", "seq": 1}): "unknown_type",
        json.dumps({"type": "play", "seq": 0, "game_id": "g", "bet": "1.00", "win": "0.00"}): "bad_seq",
        json.dumps({"type": "play", "seq": 1, "game_id": "g", "bet": 1.0, "win": "0.00"}): "bad_amount",
        json.dumps({"type": "play", "seq": 1, "game_id": "g", "bet": "0.00", "win": "0.00"}): "bad_amount",
        json.dumps({"type": "play", "seq": 1, "bet": "1.00", "win": "0.00"}): "missing_field",
        json.dumps({"type": "event", "seq": 1, "kind": "explosion"}): "bad_field",
    }

    def written() -> tuple[dict[str, int], list[tuple[object, ...]]]:
        return row_counts(), machine_rows()

    before = await database_sync_to_async(written)()
    for frame, code in refused.items():
        reply = await send(communicator, frame)
        assert (reply["type"], reply["status"], reply["code"]) == ("ack", "rejected", code), frame
        assert reply["message"]
    await communicator.send_to(bytes_data=b"\xff\xfe not utf-8")
    reply = await communicator.receive_json_from(timeout=TIMEOUT)
    assert (reply["status"], reply["code"]) == ("rejected", "malformed_json")
    assert await database_sync_to_async(written)() == before

    # The seq a refused frame carried is still free: the board sends it again, properly.
    reply = await send(communicator, play(1))
    assert (reply["seq"], reply["status"]) == (1, "accepted")

    # A frame far beyond any message is abuse: the socket is closed, unanswered.
    await communicator.send_to(text_data="x" * (consumers.ABUSE_BYTES + 1))
    closed = await communicator.receive_output(timeout=TIMEOUT)
    assert closed == {"type": "websocket.close", "code": consumers.CLOSE_TOO_BIG}
    plays = await database_sync_to_async(lambda: list(Play.objects.values_list("seq", flat=True)))()
    assert plays == [1]


async def test_the_broadcast_task_reaches_every_linked_machine_and_only_them(
    layer: Any, board: tuple[Machine, str], an10_venue: Venue, pool_operator: User, link: LinkGroup
) -> None:
    machine, token = board

    def more_machines() -> tuple[tuple[Machine, str], tuple[Machine, str]]:
        linked = register(an10_venue, pool_operator)
        links.join_link(group=link, machine=linked[0], actor=pool_operator)
        return linked, register(an10_venue, pool_operator)

    (second, second_token), (alone, alone_token) = await database_sync_to_async(more_machines)()
    sockets = [await connect(machine, token), await connect(second, second_token)]
    bystander = await connect(alone, alone_token)

    assert await database_sync_to_async(tasks.broadcast_progressives)() == 1  # one group, one send
    for communicator in sockets:
        message = await communicator.receive_json_from(timeout=TIMEOUT)
        assert (message["type"], message["group"]) == ("progressive", "L1")
        assert message["levels"] == [
            {"level": "Grand", "amount": "1000.00"},
            {"level": "Major", "amount": "100.00"},
        ]
        assert isinstance(message["at"], int)
    assert await bystander.receive_nothing(timeout=0.3)

    # Plays move the next broadcast (it goes out also when nothing changed: it is the link's heartbeat).
    await send(sockets[0], play(1, bet="100.00"))
    await database_sync_to_async(tasks.broadcast_progressives)()
    for communicator in sockets:
        message = await communicator.receive_json_from(timeout=TIMEOUT)
        assert [lv["amount"] for lv in message["levels"]] == ["1001.00", "100.50"]

    # The bystander joins the link while connected: the join tells its connection to follow the link.
    await database_sync_to_async(links.join_link)(group=link, machine=alone, actor=pool_operator)
    await asyncio.sleep(0.3)
    await database_sync_to_async(tasks.broadcast_progressives)()
    assert (await bystander.receive_json_from(timeout=TIMEOUT))["type"] == "progressive"
    assert (await sockets[0].receive_json_from(timeout=TIMEOUT))["type"] == "progressive"
    assert (await sockets[1].receive_json_from(timeout=TIMEOUT))["type"] == "progressive"

    # It leaves the link: told again, it stops hearing the broadcasts; the others still hear them.
    await database_sync_to_async(links.leave_link)(group=link, machine=alone, actor=pool_operator)
    await asyncio.sleep(0.3)
    await database_sync_to_async(tasks.broadcast_progressives)()
    assert (await sockets[0].receive_json_from(timeout=TIMEOUT))["type"] == "progressive"
    assert await bystander.receive_nothing(timeout=0.3)
    for communicator in [*sockets, bystander]:
        await communicator.disconnect()


async def test_a_hit_locks_the_machine_and_the_cashiers_payment_unlocks_it(
    layer: Any, board: tuple[Machine, str], cashier_user: User, pool_operator: User
) -> None:
    machine, token = board
    communicator = await connect(machine, token)
    await send(communicator, play(1, bet="10.00"))
    reply = await send(communicator, {"type": "hit", "seq": 2, "level": "Major", "game_id": "g-2"})
    assert (reply["seq"], reply["status"], reply["lock"]) == (2, "accepted", LockReason.HAND_PAY)
    assert D(reply["amount"]) == D("100.05")  # the seed and 10.00 × 0.5 %, whole cents
    refused = await send(communicator, play(3))
    assert (refused["status"], refused["code"]) == ("rejected", "machine_locked")

    hit = await database_sync_to_async(ProgressiveHit.objects.get)(machine=machine)
    await database_sync_to_async(handpay.pay_hand_pay)(hit=hit, actor=cashier_user, payment_ref="V-1")
    assert await communicator.receive_json_from(timeout=TIMEOUT) == {"type": "unlock"}
    assert (await send(communicator, play(3)))["status"] == "accepted"

    # An operator's lock is pushed too.
    await database_sync_to_async(registry.set_machine_state)(
        machine=machine, state=MachineState.LOCKED, reason="door check", actor=pool_operator
    )
    assert await communicator.receive_json_from(timeout=TIMEOUT) == {"type": "lock", "reason": "operator"}
    await communicator.disconnect()


async def test_a_failed_gateway_call_is_refused_and_the_socket_stays(
    layer: Any, board: tuple[Machine, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    machine, token = board
    communicator = await connect(machine, token)
    real = gateway.receive

    def broken(**kwargs: Any) -> list[dict[str, Any]]:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(gateway, "receive", broken)
    reply = await send(communicator, play(1))
    assert (reply["seq"], reply["status"], reply["code"]) == (1, "rejected", "server_error")
    monkeypatch.setattr(gateway, "receive", real)
    reply = await send(communicator, play(1))  # the board sends it again
    assert (reply["seq"], reply["status"]) == (1, "accepted")
    await communicator.disconnect()


async def test_an_answer_lost_with_its_socket_is_no_failed_call(
    layer: Any, board: tuple[Machine, str], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    machine, token = board
    communicator = await connect(machine, token)
    real_send = consumers.MachineConsumer.send
    lost: list[str] = []

    async def gone_for_acks(self: Any, text_data: str | None = None, **kwargs: Any) -> None:
        if text_data is not None and json.loads(text_data).get("type") == "ack":
            lost.append(text_data)
            raise ConnectionResetError("the board went away while its answer was written")
        await real_send(self, text_data=text_data, **kwargs)

    monkeypatch.setattr(consumers.MachineConsumer, "send", gone_for_acks)
    await communicator.send_to(text_data=json.dumps(play(1)))
    for _ in range(100):  # the call commits, then its answer is lost
        if lost:
            break
        await asyncio.sleep(0.05)
    assert lost and json.loads(lost[0])["status"] == "accepted"
    assert await communicator.receive_nothing(timeout=0.3)  # no "server_error" for a call that was taken
    assert "gateway call failed" not in caplog.text
    monkeypatch.setattr(consumers.MachineConsumer, "send", real_send)
    reply = await send(communicator, play(1))  # the board sends it again: taken once
    assert (reply["seq"], reply["status"]) == (1, "duplicate")
    assert await database_sync_to_async(Play.objects.filter(machine=machine).count)() == 1
    await communicator.disconnect()


async def test_broadcasts_do_not_wait_behind_a_slow_gateway_call_and_a_flood_is_refused_busy(
    layer: Any, board: tuple[Machine, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    machine, token = board
    communicator = await connect(machine, token)
    real = gateway.receive
    release = threading.Event()

    def slow(**kwargs: Any) -> list[dict[str, Any]]:
        release.wait(TIMEOUT)
        return real(**kwargs)

    monkeypatch.setattr(gateway, "receive", slow)
    await communicator.send_json_to(play(1))  # taken now, held in the database thread
    await asyncio.sleep(0.2)
    for seq in range(2, 2 + consumers.MAX_PENDING_FRAMES):  # queued behind it
        await communicator.send_json_to(play(seq))
    busy = await send(communicator, play(99))
    assert (busy["seq"], busy["status"], busy["code"]) == (99, "rejected", "busy")

    # The link's broadcast still reaches the machine while its play is being taken.
    await database_sync_to_async(tasks.broadcast_progressives)()
    assert (await communicator.receive_json_from(timeout=TIMEOUT))["type"] == "progressive"

    release.set()
    acks = [
        await communicator.receive_json_from(timeout=TIMEOUT) for _ in range(consumers.MAX_PENDING_FRAMES + 1)
    ]
    assert [(a["seq"], a["status"]) for a in acks] == [
        (seq, "accepted") for seq in range(1, 2 + consumers.MAX_PENDING_FRAMES)
    ]  # in the order they were sent
    await communicator.disconnect()
