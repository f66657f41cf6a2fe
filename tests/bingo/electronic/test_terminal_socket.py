"""The player terminal's WebSocket (bingo.electronic.consumers) on the Redis layer, through config.asgi:
a wrong device token is refused, a terminal hears its speciality's room stream and its own stream and never
another terminal's, one event reaches every terminal of the room as one text, and a lost event shows in the
heads and in the snapshot the page reloads; a rotated token closes the socket at the sweep."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any
from unittest import mock

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections, transaction
from django.db.backends.utils import CursorWrapper

from bingo.electronic import consumers
from bingo.electronic.models import Speciality, Terminal
from bingo.electronic.services import readmodels
from config.asgi import application
from halls import events, fanout
from halls.cashier.models import DeviceKind
from halls.cashier.services import devices
from halls.eventtypes import EGameMeters, EventType, TerminalBalance
from tests.bingo.electronic.support import make_speciality, make_terminal
from tests.tampering import forged

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 5


@pytest.fixture
def hall(venue: Any, operator: Any) -> tuple[Speciality, list[tuple[Terminal, str]], Speciality]:
    """A speciality with two terminals, and another speciality (another room) of the venue."""
    speciality = make_speciality(venue, operator)
    terminals = [make_terminal(speciality, operator) for _ in range(2)]
    return speciality, terminals, make_speciality(venue, operator)


def url(device_id: int, token: str) -> str:
    return f"/ws/electronic/terminal/?device={device_id}&token={token}"


async def connect(terminal: Terminal, token: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, url(terminal.device_id, token))
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    return communicator


async def off_the_loop(fn: Callable[[], Any]) -> Any:
    """Run `fn` in a plain thread, as a Celery worker would (its publish runs on a loop of its own)."""

    def run() -> Any:
        try:
            return fn()
        finally:
            connections.close_all()

    return await asyncio.get_running_loop().run_in_executor(None, run)


def balance(terminal: Terminal, amount: str, *, lost: bool = False) -> events.Event:
    """A TERMINAL_BALANCE on the terminal's own stream; `lost`: committed and numbered, never sent."""
    with mock.patch.object(events, "publish") if lost else contextlib.nullcontext(), transaction.atomic():
        return events.emit(
            terminal.stream,
            EventType.TERMINAL_BALANCE,
            TerminalBalance(terminal=terminal.pk, balance=Decimal(amount)),
        )


def meters(speciality: Speciality) -> events.Event:
    with transaction.atomic():
        return events.emit(
            speciality.stream, EventType.EGAME_METERS, EGameMeters(speciality=speciality.pk, meters=[])
        )


async def test_a_wrong_token_an_unknown_device_or_a_device_that_is_no_terminal_is_refused(
    layer: Any, hall: Any
) -> None:
    speciality, [(terminal, token), _second], _other = hall
    plain, plain_token = await database_sync_to_async(devices.register_device)(
        venue_id=speciality.venue_id, name="Lector", kind=DeviceKind.TERMINAL, actor="test"
    )
    for path in (
        url(terminal.device_id, forged(token)),
        url(terminal.device_id + 1000, token),
        url(plain.pk, plain_token),  # a cash device, but no terminal
        "/ws/electronic/terminal/",
        f"/ws/electronic/terminal/?device=abc&token={token}",
    ):
        refused = WebsocketCommunicator(application, path)
        assert await refused.connect(timeout=TIMEOUT) == (False, consumers.CLOSE_REFUSED), path
    assert not fanout.hub().members


async def test_a_terminal_hears_its_room_and_its_own_stream_never_another_terminals(
    layer: Any, hall: Any
) -> None:
    speciality, [(mine, my_token), (theirs, their_token)], other = hall
    me, them = await connect(mine, my_token), await connect(theirs, their_token)
    hub = fanout.hub()
    assert hub.subscribed == {speciality.stream, mine.stream, theirs.stream}

    # A room event: one channel-layer message, the same text written to both terminals.
    received, delivered = hub.events, hub.deliveries
    event = await off_the_loop(lambda: meters(speciality))
    assert (
        await me.receive_from(timeout=TIMEOUT) == await them.receive_from(timeout=TIMEOUT) == event.encode()
    )
    assert hub.events - received == 1 and hub.deliveries - delivered == 2

    # My balance reaches me only; another room's event reaches neither.
    mine_event = await off_the_loop(lambda: balance(mine, "12.50"))
    assert json.loads(await me.receive_from(timeout=TIMEOUT)) == {
        "stream": mine.stream,
        "seq": 1,
        "type": "terminal.balance",
        "at": mine_event.at,
        "data": {"terminal": mine.pk, "balance": "12.50"},
    }
    await off_the_loop(lambda: meters(other))
    assert await them.receive_nothing(timeout=0.3)
    assert await me.receive_nothing(timeout=0.1)

    for communicator in (me, them):
        await communicator.disconnect()
    assert hub.channel is None and not hub.members  # nothing left listening


async def test_a_lost_event_shows_in_the_head_and_the_snapshot_the_page_reloads(
    layer: Any, hall: Any
) -> None:
    speciality, [(terminal, token), _second], _other = hall
    communicator = await connect(terminal, token)
    first = await off_the_loop(lambda: balance(terminal, "1.00"))
    assert json.loads(await communicator.receive_from(timeout=TIMEOUT))["seq"] == first.seq
    lost = await off_the_loop(lambda: balance(terminal, "2.00", lost=True))
    assert await communicator.receive_nothing(timeout=0.3)

    # The sweep's heads (one per stream the terminal follows): the own stream is ahead of what the page has.
    await fanout.hub().sweep()
    heads = [json.loads(await communicator.receive_from(timeout=TIMEOUT)) for _ in range(2)]
    assert {h["stream"]: h["head"] for h in heads} == {speciality.stream: 0, terminal.stream: lost.seq}
    # The snapshot the page reloads holds it, and the next event comes with the gap the page reloads on.
    snapshot = await database_sync_to_async(readmodels.terminal_snapshot)(terminal)
    assert snapshot["seqs"] == {speciality.stream: 0, terminal.stream: lost.seq}
    after = await off_the_loop(lambda: balance(terminal, "3.00"))
    assert json.loads(await communicator.receive_from(timeout=TIMEOUT))["seq"] == after.seq == first.seq + 2
    await communicator.disconnect()


async def test_a_rotated_token_closes_the_socket_at_the_sweep(layer: Any, hall: Any) -> None:
    _speciality, [(rotated, rotated_token), (kept, kept_token)], _other = hall
    closing, staying = await connect(rotated, rotated_token), await connect(kept, kept_token)
    device = await database_sync_to_async(lambda: rotated.device)()
    await database_sync_to_async(devices.rotate_token)(device=device, actor="test")
    await fanout.hub().sweep()
    assert await closing.receive_output(timeout=TIMEOUT) == {
        "type": "websocket.close",
        "code": fanout.CLOSE_GONE,
    }
    assert json.loads(await staying.receive_from(timeout=TIMEOUT))["type"] == fanout.HEAD_TYPE
    refused = WebsocketCommunicator(application, url(rotated.device_id, rotated_token))
    assert await refused.connect(timeout=TIMEOUT) == (False, consumers.CLOSE_REFUSED)
    for communicator in (closing, staying):
        await communicator.disconnect()


async def test_a_rotated_token_closes_the_open_socket_at_once(layer: Any, hall: Any) -> None:
    """Without waiting for the sweep: the rotation re-checks the device's sockets once it commits."""
    _speciality, [(rotated, rotated_token), (kept, kept_token)], _other = hall
    closing, staying = await connect(rotated, rotated_token), await connect(kept, kept_token)
    device = await database_sync_to_async(lambda: rotated.device)()
    await off_the_loop(lambda: devices.rotate_token(device=device, actor="test"))
    assert await closing.receive_output(timeout=TIMEOUT) == {
        "type": "websocket.close",
        "code": fanout.CLOSE_GONE,
    }
    assert await staying.receive_nothing(timeout=0.3)
    for communicator in (closing, staying):
        await communicator.disconnect()


async def test_a_token_rotated_between_the_read_and_the_accept_still_closes_the_socket(
    layer: Any, hall: Any
) -> None:
    """The connect reads the database once; a rotation committed after that read, while the socket joins
    its streams, is heard by the hub's watch: the socket closes (4404) instead of opening."""
    _speciality, [(terminal, token), _second], _other = hall
    device = await database_sync_to_async(lambda: terminal.device)()
    read = consumers._authenticate

    async def read_then_rotate(query: Any, address: str) -> Any:
        found = await read(query, address)
        await off_the_loop(lambda: devices.rotate_token(device=device, actor="test"))
        for _ in range(100):  # the re-check comes through the layer
            if any(watch.heard for watch in fanout.hub().watches):
                break
            await asyncio.sleep(0.02)
        return found

    with mock.patch.object(consumers, "_authenticate", read_then_rotate):
        refused = WebsocketCommunicator(application, url(terminal.device_id, token))
        assert await refused.connect(timeout=TIMEOUT) == (False, fanout.CLOSE_GONE)
    hub = fanout.hub()
    assert not hub.members and not hub.watches and hub.channel is None


async def test_a_connect_reads_the_database_once_and_joins_both_streams_at_once(
    layer: Any, hall: Any
) -> None:
    speciality, [(terminal, token), _second], _other = hall
    statements: list[str] = []
    execute = CursorWrapper.execute

    def counted(self: CursorWrapper, sql: str, params: Any = None) -> Any:
        statements.append(sql)
        return execute(self, sql, params)

    hub = fanout.hub()
    with (
        mock.patch.object(CursorWrapper, "execute", counted),
        mock.patch.object(hub, "join", side_effect=AssertionError("one join_all")),
    ):
        communicator = await connect(terminal, token)
    assert len(statements) == 1, statements
    assert hub.subscribed == {speciality.stream, terminal.stream}
    await communicator.disconnect()
