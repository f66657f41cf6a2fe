"""Group commit: `gateway.receive_many` takes the frames of many machines in one transaction with the
same per-machine rules as `receive`, a constant number of statements, and falls back to one frame at a
time when the batch fails; the WebSocket door batches the frames of its connections."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from decimal import Decimal
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from config.asgi import application
from halls.models import Venue
from jackpots.models import Contribution, Pool
from jackpots.services import contributions
from machines import consumers, protocol
from machines.models import LinkGroup, Machine, MachineEvent, Play, ProgressiveHit, SequenceGap
from machines.services import gateway, links, registry
from machines.services.gateway_batch import Batch
from tests.machines.machine_fixtures import (
    GRAND_RATE,
    MAJOR_RATE,
    SEEDS,
    an10_venue,
    hit,
    link,
    live_amounts,
    meters_msg,
    play,
    pool_operator,
    register,
    slot_pool,
    statuses,
)

__all__ = ["an10_venue", "link", "pool_operator", "slot_pool"]

D = Decimal


def linked(venue: Venue, actor: User, group: LinkGroup, count: int) -> list[Machine]:
    machines = []
    for _ in range(count):
        m, _token = register(venue, actor)
        links.join_link(group=group, machine=m, actor=actor)
        machines.append(m)
    return machines


def bets_of(
    batch: Sequence[tuple[int, Sequence[protocol.Message]]], replies: list[list[dict[str, Any]]]
) -> Decimal:
    """The bets of the plays the batch accepted."""
    return sum(
        (
            message.bet
            for (_, messages), answers in zip(batch, replies, strict=True)
            for message, reply in zip(messages, answers, strict=True)
            if isinstance(message, protocol.Play) and reply["status"] == "accepted"
        ),
        D(0),
    )


@pytest.mark.django_db
def test_one_batch_applies_each_machines_rules(
    an10_venue: Venue, pool_operator: User, link: LinkGroup, slot_pool: Pool, settings: Any
) -> None:
    settings.MACHINE_LOCK_GRACE_SECONDS = 0  # no game in flight at the lock (tests/machines/test_gateway.py)
    fresh, retrying, locked, gapped = linked(an10_venue, pool_operator, link, 4)
    gateway.receive(machine_id=retrying.pk, messages=[play(1, "2.00")])
    gateway.receive(machine_id=locked.pk, messages=[play(1, "1.00")])
    registry.set_machine_state(machine=locked, state="locked", reason="door check", actor=pool_operator)
    batch: list[tuple[int, Sequence[protocol.Message]]] = [
        (fresh.pk, [play(1, "1.00"), play(2, "0.40")]),
        (retrying.pk, [play(1, "2.00"), play(1, "9.00"), play(2, "3.00")]),  # a retry, a reused seq, a play
        (locked.pk, [play(2, "5.00"), protocol.Event(seq=2, kind="door_open")]),
        (gapped.pk, [play(1, "0.20"), play(4, "0.60")]),
        (999_999, [play(1)]),
    ]
    replies = gateway.receive_many(batch)
    assert [statuses(r) for r in replies] == [
        [(1, "accepted", ""), (2, "accepted", "")],
        [(1, "duplicate", ""), (1, "rejected", "seq_reused"), (2, "accepted", "")],
        [(2, "rejected", "machine_locked"), (2, "accepted", "")],
        [(1, "accepted", ""), (4, "accepted", "")],
        [(1, "rejected", "unknown_machine")],
    ]
    # The pool grew by exactly Σ bet × rate of every play accepted (3.00 before the batch).
    total = D("3.00") + bets_of(batch, replies)
    assert total == D("8.20")
    assert live_amounts(slot_pool) == {
        "Grand": SEEDS["Grand"] + total * GRAND_RATE,
        "Major": SEEDS["Major"] + total * MAJOR_RATE,
    }
    assert sorted(
        Contribution.objects.filter(pool=slot_pool).values_list("idempotency_key", flat=True)
    ) == sorted(
        2
        * [
            f"machine:{m.pk}:{seq}"
            for m, seq in [
                (fresh, 1),
                (fresh, 2),
                (retrying, 1),
                (retrying, 2),
                (locked, 1),
                (gapped, 1),
                (gapped, 4),
            ]
        ]
    )
    assert sum(Play.objects.values_list("bet", flat=True)) == total
    assert MachineEvent.objects.filter(machine=locked, seq=2, kind="door_open").exists()
    (gap,) = SequenceGap.objects.filter(machine=gapped)
    assert (gap.first_missing, gap.last_missing) == (2, 3)
    last = dict(
        Machine.objects.filter(pk__in=[fresh.pk, retrying.pk, locked.pk, gapped.pk]).values_list(
            "pk", "last_seq"
        )
    )
    assert last == {fresh.pk: 2, retrying.pk: 2, locked.pk: 2, gapped.pk: 4}
    fresh.refresh_from_db()
    assert (fresh.plays_today, fresh.online) == (2, True)
    # A late seq inside the open gap is accepted in a later batch, a retry of the batch changes nothing.
    again = gateway.receive_many(
        [(gapped.pk, [play(2, "0.20")]), (fresh.pk, [play(1, "1.00"), play(2, "0.40")])]
    )
    assert [statuses(r) for r in again] == [
        [(2, "accepted", "")],
        [(1, "duplicate", ""), (2, "duplicate", "")],
    ]


@pytest.mark.django_db
def test_hits_in_a_batch_are_awarded_in_arrival_order_after_the_batchs_plays(
    an10_venue: Venue, pool_operator: User, link: LinkGroup, slot_pool: Pool
) -> None:
    first, player, second = linked(an10_venue, pool_operator, link, 3)
    batch: list[tuple[int, Sequence[protocol.Message]]] = [
        (second.pk, [play(1, "10.00")]),  # the lowest id arrives first: arrival order is the batch's
        (first.pk, [play(1, "20.00"), hit(2, "Grand", "g-1"), play(3, "1.00")]),
        (player.pk, [play(1, "30.00")]),
        (second.pk, [hit(2, "Grand", "g-2")]),  # a second frame of the same machine in the batch
    ]
    replies = gateway.receive_many(batch)
    assert [statuses(r) for r in replies] == [
        [(1, "accepted", "")],
        [(1, "accepted", ""), (2, "accepted", ""), (3, "rejected", "machine_locked")],
        [(1, "accepted", "")],
        [(2, "accepted", "")],
    ]
    # The first hit's meter holds every play of the batch (60.00); the second is paid from the reset.
    assert D(replies[1][1]["amount"]) == SEEDS["Grand"] + D("60.00") * GRAND_RATE
    assert D(replies[3][0]["amount"]) == SEEDS["Grand"]
    hits = list(ProgressiveHit.objects.order_by("id").values_list("machine_id", "amount"))
    assert hits == [(first.pk, D("1000.60")), (second.pk, D("1000.00"))]
    assert live_amounts(slot_pool)["Major"] == SEEDS["Major"] + D("60.00") * MAJOR_RATE
    states = dict(
        Machine.objects.filter(pk__in=[first.pk, second.pk, player.pk]).values_list("pk", "lock_reason")
    )
    assert states == {first.pk: "hand_pay", second.pk: "hand_pay", player.pk: ""}


@pytest.mark.django_db
def test_a_batch_costs_the_same_statements_whatever_its_size(
    an10_venue: Venue, pool_operator: User, link: LinkGroup, slot_pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared: list[str] = []
    real_fetch = contributions._fetch

    def counting_fetch(sql: str, params: Any) -> Any:
        prepared.append(sql)
        return real_fetch(sql, params)

    monkeypatch.setattr(contributions, "_fetch", counting_fetch)
    machines = linked(an10_venue, pool_operator, link, 20)
    seq = dict.fromkeys((m.pk for m in machines), 0)
    costs = []
    for count, plays in ((1, 1), (2, 1), (20, 1), (20, 10)):
        batch: list[tuple[int, Sequence[protocol.Message]]] = []
        for m in machines[:count]:
            batch.append((m.pk, [play(seq[m.pk] + i + 1, "0.20") for i in range(plays)]))
            seq[m.pk] += plays
        prepared.clear()
        with CaptureQueriesContext(connection) as queries:
            replies = gateway.receive_many(batch)
        assert {r["status"] for frame in replies for r in frame} == {"accepted"}
        assert len(prepared) == 1  # one contribute_many for the whole batch
        statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
        costs.append(len(statements) + len(prepared))
    # Lock the machines, insert the plays, contribute them, update the machines: 1 play as 200.
    assert costs == [4, 4, 4, 4]
    assert live_amounts(slot_pool)["Grand"] == SEEDS["Grand"] + D("0.20") * 223 * GRAND_RATE


@pytest.mark.django_db
def test_a_frame_that_fails_does_not_lose_the_batch(
    an10_venue: Venue, pool_operator: User, link: LinkGroup, slot_pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    good, bad, other = linked(an10_venue, pool_operator, link, 3)
    real_apply = gateway.apply_message

    def apply_message(batch: Batch, call: gateway.Call, message: protocol.Message) -> dict[str, Any]:
        if call.row.machine.pk == bad.pk:
            raise RuntimeError("a bug in one machine's frame")
        return real_apply(batch, call, message)

    monkeypatch.setattr(gateway, "apply_message", apply_message)
    replies = gateway.receive_many(
        [
            (good.pk, [play(1, "1.00"), meters_msg(2, "1.00", 1)]),
            (bad.pk, [play(1, "5.00")]),
            (other.pk, [play(1, "2.00")]),
        ]
    )
    assert [statuses(r) for r in replies] == [
        [(1, "accepted", ""), (2, "accepted", "")],
        [(1, "rejected", "server_error")],
        [(1, "accepted", "")],
    ]
    assert not Play.objects.filter(machine=bad).exists()
    assert live_amounts(slot_pool)["Grand"] == SEEDS["Grand"] + D("3.00") * GRAND_RATE
    # Alone, a failing frame raises as `receive` does (the door answers it server_error).
    with pytest.raises(RuntimeError):
        gateway.receive_many([(bad.pk, [play(1, "5.00")])])


# --- the WebSocket door batches its connections' frames --------------------------------------------------


@pytest.fixture
async def layer(settings: Any) -> AsyncIterator[Any]:
    layer = settings.CHANNEL_LAYERS["default"]
    settings.CHANNEL_LAYERS = {
        "default": {**layer, "CONFIG": {**layer["CONFIG"], "prefix": f"test-mq-{uuid.uuid4().hex[:12]}"}}
    }
    channel_layer = get_channel_layer()
    yield channel_layer
    await channel_layer.flush()


@pytest.mark.django_db(transaction=True)
async def test_the_door_takes_many_connections_frames_in_one_batch(
    layer: Any,
    an10_venue: Venue,
    pool_operator: User,
    link: LinkGroup,
    slot_pool: Pool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    boards = await database_sync_to_async(lambda: [register(an10_venue, pool_operator) for _ in range(6)])()
    for m, _token in boards:
        await database_sync_to_async(links.join_link)(group=link, machine=m, actor=pool_operator)
    sizes: list[int] = []
    real = gateway.receive_many

    def counting(batch: Sequence[tuple[int, Sequence[protocol.Message]]], received_at: Any = None) -> Any:
        sizes.append(len(batch))
        return real(batch, received_at)

    monkeypatch.setattr(gateway, "receive_many", counting)
    sockets = []
    for m, token in boards:
        communicator = WebsocketCommunicator(application, f"/ws/machines/{m.asset_number}/?token={token}")
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        sockets.append(communicator)
    batcher = consumers.FrameBatcher(
        consumers._receive_batch_timed, executor=consumers._executor, size=100, wait=0.05, runners=2
    )
    monkeypatch.setattr(consumers, "batcher", lambda: batcher)
    for seq in (1, 2):
        for communicator in sockets:
            frame = {"type": "play", "seq": seq, "game_id": f"g-{seq}", "bet": "1.00", "win": "0.00"}
            await communicator.send_to(text_data=json.dumps(frame))
        replies = [await c.receive_json_from(timeout=5) for c in sockets]
        assert [(r["seq"], r["status"]) for r in replies] == [(seq, "accepted")] * len(sockets)
    assert sum(sizes) == 2 * len(sockets) and max(sizes) > 1  # batched, every frame once
    assert not batcher.pending and batcher.running == 0  # no runner outlives the work
    await asyncio.gather(*(c.disconnect() for c in sockets))
    total = D("1.00") * 2 * len(sockets)
    amounts = await database_sync_to_async(live_amounts)(slot_pool)
    assert amounts["Grand"] == SEEDS["Grand"] + total * GRAND_RATE
