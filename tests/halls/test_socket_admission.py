"""A socket's connect once the process is warm (issue 30): the screens' and terminals' connects read the
database once per token, not once per socket (the hub keeps what a token follows while it hears the
re-checks, and forgets it on one); a process admitting many at once admits the others in turn, and with too
many waiting, or draining, refuses at once (accepted and closed 1013 "retry-after=S": a close before the
accept would be an HTTP 403 the page cannot tell from a dead server); a draining process tells its sockets to
come back within a few seconds and closes them (1012).
On the Redis pub/sub layer of production, through config.asgi, counting the SQL actually executed."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from bingo.electronic.models import Terminal
from config.asgi import application
from halls import fanout
from halls.cashier.services import devices
from halls.models import Screen
from tests.bingo.electronic.support import make_speciality, make_terminal
from tests.tampering import forged

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 5
ORIGIN = [(b"origin", b"http://testserver")]


def screen_socket(token: str) -> WebsocketCommunicator:
    return WebsocketCommunicator(application, f"/ws/screens/{token}/", headers=ORIGIN)


def terminal_socket(terminal: Terminal, token: str) -> WebsocketCommunicator:
    return WebsocketCommunicator(
        application, f"/ws/electronic/terminal/?device={terminal.device_id}&token={token}"
    )


async def opened(communicator: WebsocketCommunicator) -> WebsocketCommunicator:
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    return communicator


async def refused(communicator: WebsocketCommunicator) -> int:
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert not connected
    return int(code)


async def told_to_try_later(communicator: WebsocketCommunicator) -> str:
    """Accepted and closed at once with 1013: its reason (the retry hint)."""
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    closed = await communicator.receive_output(TIMEOUT)
    assert closed["type"] == "websocket.close" and closed["code"] == fanout.CLOSE_TRY_LATER, closed
    return str(closed["reason"])


async def test_screens_of_one_token_read_the_database_once_and_a_change_is_read_afresh(
    layer: Any, screen: Screen, statements: list[str]
) -> None:
    first = await opened(screen_socket(screen.token))
    assert len(statements) == 1, statements  # the token's one read (no second read after the join)
    hub = fanout.hub()
    assert hub.admit_reads == 1
    statements.clear()
    again = [await opened(screen_socket(screen.token)) for _ in range(20)]
    assert statements == []  # warm: no database query for any of the 20
    assert hub.admit_reads == 1

    # The screen deactivated: the re-check closes the open sockets, the hub forgets the token, and the
    # next connect reads the database and is refused.
    screen.active = False
    await database_sync_to_async(screen.save)()
    for communicator in [first, *again]:
        assert (await communicator.receive_output(TIMEOUT))["type"] == "websocket.close"
    statements.clear()
    assert await refused(screen_socket(screen.token)) == 4404
    assert len(statements) == 1
    assert hub.admit_reads == 2


async def test_a_cached_token_is_forgotten_when_the_hub_stops_hearing_the_rechecks(
    layer: Any, screen: Screen, statements: list[str]
) -> None:
    communicator = await opened(screen_socket(screen.token))
    await communicator.disconnect()  # the last socket: the hub stops listening, and forgets
    hub = fanout.hub()
    assert hub.channel is None and hub.admitted == {}
    statements.clear()
    await (await opened(screen_socket(screen.token))).disconnect()
    assert len(statements) == 1


async def test_terminals_read_the_database_once_per_token_and_a_rotated_token_is_refused(
    layer: Any, venue: Any, operator: Any, statements: list[str]
) -> None:
    speciality = await database_sync_to_async(make_speciality)(venue, operator)
    terminal, token = await database_sync_to_async(make_terminal)(speciality, operator)
    statements.clear()
    first = await opened(terminal_socket(terminal, token))
    assert len(statements) == 1, statements
    statements.clear()
    second = await opened(terminal_socket(terminal, token))
    assert statements == []
    # A wrong token is never answered from what the hub keeps: it reads (and is counted as a failure).
    assert await refused(terminal_socket(terminal, forged(token))) == 4401
    assert statements

    device = await database_sync_to_async(lambda: terminal.device)()
    await database_sync_to_async(devices.rotate_token)(device=device, actor="test")
    for communicator in (first, second):
        assert (await communicator.receive_output(TIMEOUT))["type"] == "websocket.close"
    assert await refused(terminal_socket(terminal, token)) == 4401


async def test_past_its_concurrency_a_connect_waits_its_turn_and_past_the_queue_is_told_when_to_retry(
    layer: Any, screen: Screen, venue: Any, operator: Any, settings: Any, statements: list[str]
) -> None:
    speciality = await database_sync_to_async(make_speciality)(venue, operator)
    terminal, token = await database_sync_to_async(make_terminal)(speciality, operator)
    settings.HALL_SOCKET_ADMIT_CONCURRENCY = 1
    settings.HALL_SOCKET_ADMIT_QUEUE = 2
    settings.HALL_SOCKET_RETRY_SECONDS = 1.5
    hub = fanout.hub()
    assert await hub.admit()  # the one place, held
    statements.clear()
    screen_waits = asyncio.ensure_future(opened(screen_socket(screen.token)))
    terminal_waits = asyncio.ensure_future(opened(terminal_socket(terminal, token)))
    while len(hub.queued) < 2:
        await asyncio.sleep(0.01)
    # The queue full: refused at once, before any read, and told when to come back.
    assert await told_to_try_later(screen_socket(screen.token)) == "retry-after=1.5"
    assert statements == [] and hub.turned_away == 1 and not screen_waits.done()
    hub.admitted_one()  # the place handed on: the waiting connects are admitted in turn
    sockets = [await screen_waits, await terminal_waits]
    assert hub.waited == 2 and hub.admitting == 0 and not hub.queued
    for communicator in sockets:
        await communicator.disconnect()


async def test_a_connect_that_goes_away_while_waiting_gives_its_turn_on(layer: Any, settings: Any) -> None:
    settings.HALL_SOCKET_ADMIT_CONCURRENCY = 1
    hub = fanout.hub()
    assert await hub.admit()
    gone, next_one = asyncio.ensure_future(hub.admit()), asyncio.ensure_future(hub.admit())
    await asyncio.sleep(0.01)
    gone.cancel()
    hub.admitted_one()
    assert await next_one
    hub.admitted_one()
    assert hub.admitting == 0 and not hub.queued


async def test_a_draining_process_tells_its_sockets_to_come_back_within_the_spread_and_refuses_new_ones(
    layer: Any, screen: Screen, venue: Any, operator: Any
) -> None:
    speciality = await database_sync_to_async(make_speciality)(venue, operator)
    terminal, token = await database_sync_to_async(make_terminal)(speciality, operator)
    screens = [await opened(screen_socket(screen.token)) for _ in range(3)]
    player = await opened(terminal_socket(terminal, token))

    assert await fanout.drain_process(2.5) == 4  # the terminal's two streams: one socket
    for communicator in [*screens, player]:
        notice = json.loads(await communicator.receive_from(TIMEOUT))
        assert notice == {"type": fanout.RESTART_TYPE, "within": 2.5}
        closed = await communicator.receive_output(TIMEOUT)
        assert closed == {"type": "websocket.close", "code": fanout.CLOSE_RESTART}
    assert await told_to_try_later(screen_socket(screen.token)) == "retry-after=2.5"
    assert await told_to_try_later(terminal_socket(terminal, token)) == "retry-after=2.5"
