"""The machine floor of a web process (machines.floor): one channel hears a link group's broadcast for all
the process's sockets, and a machine whose frames wait for a busy gateway is still heard (presence), so
the link watch does not lock it. Over config.asgi.application and the Redis pub/sub layer, real commits."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import User
from django.utils import timezone

from halls.models import Venue
from machines import floor, tasks
from machines.models import LinkGroup, Machine
from machines.services import gateway, links, liveness
from tests.machines.machine_fixtures import an10_venue, board, link, pool_operator, register, slot_pool
from tests.machines.test_gateway_ws import TIMEOUT, connect, play, send

__all__ = ["an10_venue", "board", "link", "pool_operator", "slot_pool"]

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("isolated_layer")]


async def test_one_channel_per_process_carries_a_groups_broadcast_to_all_its_sockets(
    layer: Any, board: tuple[Machine, str], an10_venue: Venue, pool_operator: User, link: LinkGroup
) -> None:
    machine, token = board

    def another() -> tuple[Machine, str]:
        linked = register(an10_venue, pool_operator)
        links.join_link(group=link, machine=linked[0], actor=pool_operator)
        return linked

    second, second_token = await database_sync_to_async(another)()
    sockets = [await connect(machine, token), await connect(second, second_token)]
    local = floor.local_floor()
    assert set(local.groups) == {link.pk} and len(local.groups[link.pk]) == 2
    assert local.channel is not None and local.listener is not None  # one channel for both sockets

    delivered = local.delivered
    assert await database_sync_to_async(tasks.broadcast_progressives)() == 1
    for communicator in sockets:
        message = await communicator.receive_json_from(timeout=TIMEOUT)
        assert (message["type"], message["group"]) == ("progressive", "L1")
    assert local.delivered == delivered + 2  # heard once, written twice

    await sockets[0].disconnect()
    assert len(local.groups[link.pk]) == 1 and local.channel is not None
    await sockets[1].disconnect()
    assert local.groups == {} and local.channel is None and local.listener is None  # nothing left behind


async def test_a_machine_whose_frame_waits_for_a_busy_gateway_is_heard_and_not_locked(
    layer: Any, board: tuple[Machine, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    machine, token = board
    communicator = await connect(machine, token)
    long_ago = timezone.now() - timedelta(seconds=30)
    await database_sync_to_async(Machine.objects.filter(pk=machine.pk).update)(last_seen_at=long_ago)

    real = gateway.receive
    release = threading.Event()

    def slow(**kwargs: Any) -> list[dict[str, Any]]:
        release.wait(TIMEOUT)
        return real(**kwargs)

    monkeypatch.setattr(gateway, "receive", slow)
    await communicator.send_json_to(play(1))  # held in the database thread: not committed
    await asyncio.sleep(floor.PRESENCE_SECONDS + 0.6)

    def seen_and_watched() -> tuple[Any, list[int]]:
        seen = Machine.objects.get(pk=machine.pk).last_seen_at
        return seen, liveness.mark_silent_machines_offline()

    seen, locked = await database_sync_to_async(seen_and_watched)()
    assert seen > timezone.now() - timedelta(seconds=3)  # heard, though its play is not taken yet
    assert locked == []
    release.set()
    reply = await communicator.receive_json_from(timeout=TIMEOUT)
    assert (reply["seq"], reply["status"]) == (1, "accepted")
    monkeypatch.setattr(gateway, "receive", real)
    assert (await send(communicator, play(2)))["status"] == "accepted"
    await communicator.disconnect()


def test_mark_heard_moves_only_stale_rows_and_skips_rows_a_batch_holds(
    an10_venue: Venue, pool_operator: User, link: LinkGroup
) -> None:
    machines = [register(an10_venue, pool_operator)[0] for _ in range(3)]
    held, stale, fresh = machines
    now = timezone.now()
    Machine.objects.filter(pk__in=[held.pk, stale.pk]).update(last_seen_at=now - timedelta(seconds=30))
    Machine.objects.filter(pk=fresh.pk).update(last_seen_at=now - timedelta(milliseconds=300))
    locked = threading.Event()
    done = threading.Event()

    def hold() -> None:  # a gateway batch holding the row
        from django.db import connection, transaction

        try:
            with transaction.atomic():
                Machine.objects.select_for_update().filter(pk=held.pk).first()
                locked.set()
                done.wait(TIMEOUT)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert locked.wait(TIMEOUT)
    try:
        gateway.mark_heard(machine_ids=[m.pk for m in machines], received_at=now)  # does not wait for it
    finally:
        done.set()
        holder.join(TIMEOUT)
    rows = dict(Machine.objects.filter(pk__in=[m.pk for m in machines]).values_list("pk", "last_seen_at"))
    assert rows[stale.pk] == now
    assert rows[held.pk] == now - timedelta(seconds=30)  # skipped: its batch writes it
    assert rows[fresh.pk] == now - timedelta(milliseconds=300)  # written less than a second ago
