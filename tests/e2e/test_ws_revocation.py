"""Sockets that lose their right to be open close at once, on real sockets: uvicorn serving
config.asgi.application, the Redis pub/sub layer, a websockets client, the change made by the service (or
the operator's save) in another thread as the admin or API would.

- a machine's device token rotated: its open socket closes (4401) and the old token is refused;
- a machine taken out of service: it hears the lock, its socket closes (4403) and a reconnect is refused
  until it is back in service;
- a hall screen deactivated (or deleted): its socket closes (4404) long before the hub's sweep would.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connections
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from halls.models import Screen
from machines.models import Machine
from machines.services import push, registry
from tests.machines.machine_fixtures import an10_venue, board, link, pool_operator, slot_pool

__all__ = ["an10_venue", "board", "link", "pool_operator", "slot_pool"]

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 5.0
HELLO = json.dumps({"type": "hello", "last_seq": 0, "software_version": "4.1.0"})


async def in_thread(fn: Callable[[], Any]) -> Any:
    """Run `fn` off the test's loop, as a request thread would (its commit publishes from there)."""

    def run() -> Any:
        try:
            return fn()
        finally:
            connections.close_all()

    return await asyncio.to_thread(run)


def ws(server_url: str, path: str) -> str:
    return server_url.replace("http://", "ws://") + path


async def closed_with(socket: ClientConnection, *, skip: int = 5) -> tuple[int | None, list[Any]]:
    """Read until the server closes the socket; its close code and the frames read before it."""
    frames: list[Any] = []
    async with asyncio.timeout(TIMEOUT):
        while len(frames) <= skip:
            try:
                frames.append(json.loads(await socket.recv()))
            except ConnectionClosed as closed:
                return (closed.rcvd.code if closed.rcvd else None), frames
    raise AssertionError(f"still open after {frames}")


async def refused(url: str) -> int:
    """The HTTP status of a handshake the server refuses (a close before accept is a 403)."""
    with pytest.raises(InvalidStatus) as refusal:
        async with connect(url, proxy=None, open_timeout=TIMEOUT):
            pass
    return int(refusal.value.response.status_code)


def machine_url(server_url: str, machine: Machine, token: str) -> str:
    return ws(server_url, f"/ws/machines/{machine.asset_number}/?token={token}")


async def test_a_rotated_token_closes_the_machine_socket_at_once(
    isolated_layer: str, server_url: str, board: tuple[Machine, str], pool_operator: User
) -> None:
    machine, token = board
    async with connect(machine_url(server_url, machine, token), proxy=None) as socket:
        await socket.send(HELLO)
        welcome = json.loads(await socket.recv())
        assert welcome["type"] == "welcome", welcome
        new_token = await in_thread(lambda: registry.rotate_token(machine=machine, actor=pool_operator))
        code, _ = await closed_with(socket, skip=50)  # broadcasts may come before the close
        assert code == push.CLOSE_TOKEN_REVOKED
    assert await refused(machine_url(server_url, machine, token)) == 403
    async with connect(machine_url(server_url, machine, new_token), proxy=None) as again:
        await again.send(HELLO)
        assert json.loads(await again.recv())["type"] == "welcome"


async def test_a_machine_taken_out_of_service_is_locked_closed_and_kept_out(
    isolated_layer: str, server_url: str, board: tuple[Machine, str], pool_operator: User
) -> None:
    machine, token = board
    url = machine_url(server_url, machine, token)

    def set_state(state: str) -> None:
        registry.set_machine_state(machine=machine, state=state, reason="repair", actor=pool_operator)

    async with connect(url, proxy=None) as socket:
        await in_thread(lambda: set_state("out_of_service"))
        code, frames = await closed_with(socket, skip=50)
        assert code == push.CLOSE_OUT_OF_SERVICE
        assert {"type": "lock", "reason": "operator"}.items() <= frames[-1].items(), frames
    assert await refused(url) == 403
    await in_thread(lambda: set_state("in_service"))
    async with connect(url, proxy=None) as again:
        await again.send(HELLO)
        assert json.loads(await again.recv())["type"] == "welcome"


@pytest.mark.parametrize("change", ["deactivate", "delete"])
async def test_a_deactivated_or_deleted_screen_closes_at_once(
    isolated_layer: str, server_url: str, screen: Screen, settings: Any, change: str
) -> None:
    settings.HALL_SCREEN_SWEEP_SECONDS = 3600.0  # the sweep would be an hour away: only the re-check acts
    other = await in_thread(lambda: Screen.objects.create(venue=screen.venue, room=screen.room, name="Otra"))
    url = ws(server_url, f"/ws/screens/{screen.token}/")
    async with (
        connect(url, proxy=None) as socket,
        connect(ws(server_url, f"/ws/screens/{other.token}/"), proxy=None) as bystander,
    ):
        if change == "deactivate":
            screen.active = False
            await in_thread(screen.save)
        else:
            await in_thread(screen.delete)
        started = asyncio.get_running_loop().time()
        code, _ = await closed_with(socket)
        assert code == 4404
        assert asyncio.get_running_loop().time() - started < 2.0
        await bystander.ping()  # the room's other screen stays
        assert bystander.close_code is None
    assert await refused(url) == 403
