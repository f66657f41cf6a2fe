"""A terminal's snapshot as its socket's first frame (issue 30, a reconnect storm; bingo.electronic.consumers,
``?snapshot=1``): the speciality's part, shared by every terminal of the speciality from the web process's
cache (no query once cached: a warm reconnect reads nothing at all), with the room stream's seq and the
current ball; never the terminal's own part nor any card. A frame published while the snapshot is read is
sent after it (nothing lost between the snapshot and the stream). Without ``?snapshot=1`` nothing changes.

On PostgreSQL and the Redis pub/sub layer (counting every SQL statement, on any thread).
"""

from __future__ import annotations

import json
import time
from typing import Any
from unittest import mock

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections, transaction
from django.utils import timezone

from bingo.electronic import consumers
from bingo.electronic.models import EBall, EGameState, Speciality, Terminal
from bingo.electronic.services import readmodels
from config.asgi import application
from halls import events, fanout, snapshot_cache
from halls.cashier.services import devices
from halls.eventtypes import EGameBall, EventType
from tests.bingo.electronic.support import make_speciality, make_terminal, open_verified_session
from tests.bingo.electronic.test_terminal_snapshot import _game
from tests.bingo.electronic.test_terminal_socket import balance, meters

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10


def ball(speciality: Speciality, game: Any, ordinal: int, number: int) -> events.Event:
    """A ball drawn: its row and its event on the room stream, in one transaction (as the draw step)."""
    with transaction.atomic():
        now = timezone.now()
        EBall.objects.create(game=game, ordinal=ordinal, number=number, drawn_at=now)
        payload = EGameBall(
            speciality=speciality.pk,
            game=game.pk,
            number=game.number,
            state="drawing",
            ordinal=ordinal,
            ball=number,
            drawn_at=now,
        )
        return events.emit(speciality.stream, EventType.EGAME_BALL, payload)


def drawing_hall(venue: Any, operator: Any) -> tuple[Speciality, list[tuple[Terminal, str]], Any]:
    speciality = make_speciality(venue, operator)
    terminals = [make_terminal(speciality, operator) for _ in range(2)]
    session = open_verified_session(speciality, operator)
    game = _game(speciality, session, 1, EGameState.DRAWING)
    ball(speciality, game, 1, 42)
    return speciality, terminals, game


def second_ident(terminal: Terminal, token: str) -> str:
    return devices.socket_ident(terminal.device_id, devices.hash_token(token))


def url(device_id: int, token: str, *, snapshot: bool = True) -> str:
    return f"/ws/electronic/terminal/?device={device_id}&token={token}" + ("&snapshot=1" if snapshot else "")


async def opened(terminal: Terminal, token: str) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    """A terminal's socket asking for its snapshot, and that first frame."""
    communicator = WebsocketCommunicator(application, url(terminal.device_id, token))
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    first: dict[str, Any] = await communicator.receive_json_from(timeout=TIMEOUT)
    assert first["type"] == consumers.SNAPSHOT_TYPE, first
    return communicator, first


async def off_the_loop(fn: Any) -> Any:
    def run() -> Any:
        try:
            return fn()
        finally:
            connections.close_all()

    return await database_sync_to_async(run, thread_sensitive=False)()


async def test_the_first_frame_is_the_specialitys_snapshot_and_a_warm_reconnect_reads_nothing(
    layer: Any, venue: Any, operator: Any, statements: list[str]
) -> None:
    speciality, [(terminal, token), (other, other_token)], game = await off_the_loop(
        lambda: drawing_hall(venue, operator)
    )
    cache = snapshot_cache.cache()
    api = await off_the_loop(lambda: readmodels.terminal_snapshot(terminal))
    cache.clear()

    first, snap = await opened(terminal, token)
    seq = api["seqs"][speciality.stream]
    assert snap["part"] == "speciality" and snap["seqs"] == {speciality.stream: seq}
    assert snap["streams"] == {"room": speciality.stream, "terminal": terminal.stream}
    assert snap["drawing"]["game"] == game.pk and snap["drawing"]["balls"] == [42]
    # The terminal API's shared fields, as the page draws them; none of the terminal's own, no card.
    for name in ("speciality", "rules", "drawing", "meters", "network", "last_games"):
        assert snap[name] == api[name], name
    assert snap["selling"] == api["selling"] is None
    assert not {"terminal", "player", "card"} & set(snap)
    # The own stream's cursor, read with the token in the connect's one query.
    assert snap["own_seq"] == api["seqs"][terminal.stream] == 0
    assert cache.builds == 1

    # Another terminal of the speciality: its token read, the speciality's part from the cache.
    statements.clear()
    second, second_snap = await opened(other, other_token)
    assert {k: v for k, v in second_snap.items() if k != "server_time"} == {
        **{k: v for k, v in snap.items() if k != "server_time"},
        "streams": {"room": speciality.stream, "terminal": other.stream},
    }
    assert cache.builds == 1 and len(statements) == 1, statements
    # A warm reconnect: the token and the speciality's part both kept by the process: not one query.
    statements.clear()
    await first.disconnect()
    for _ in range(5):
        again, again_snap = await opened(terminal, token)
        assert again_snap["seqs"] == {speciality.stream: seq}
        assert again_snap["own_seq"] is None  # not read: the page loads its own part by the POST
        await again.disconnect()
    assert statements == [] and cache.builds == 1

    # A ball since: the next connect's snapshot is built again and shows it.
    drawn = await off_the_loop(lambda: ball(speciality, game, 2, 7))
    assert json.loads(await second.receive_from(timeout=TIMEOUT))["seq"] == drawn.seq
    # The other terminal's own stream moves on; away from the hub's memory its next connect reads it.
    moved = await off_the_loop(lambda: balance(other, "4.00"))
    assert json.loads(await second.receive_from(timeout=TIMEOUT))["seq"] == moved.seq
    fanout.hub().forget({second_ident(other, other_token)})
    fourth, fourth_snap = await opened(other, other_token)
    assert fourth_snap["own_seq"] == moved.seq
    await fourth.disconnect()
    third, third_snap = await opened(terminal, token)
    assert third_snap["seqs"] == {speciality.stream: drawn.seq}
    assert third_snap["drawing"]["balls"] == [42, 7] and cache.builds == 2
    for communicator in (second, third):
        await communicator.disconnect()
    assert not fanout.hub().members


async def test_events_published_while_the_snapshot_is_read_follow_it(
    layer: Any, venue: Any, operator: Any
) -> None:
    """The hub relays a ball on the room stream and a balance on the terminal's own stream while the
    snapshot is being built: both reach the socket after the snapshot frame, the ball past its seq."""
    speciality, [(terminal, token), _second], game = await off_the_loop(lambda: drawing_hall(venue, operator))
    build = readmodels.build_speciality_part
    hub = fanout.hub()
    published: list[events.Event] = []

    def build_then_publish(speciality_id: int) -> Any:
        found = build(speciality_id)  # its seq read first: what is published now is past it
        published.append(ball(speciality, game, 2, 7))
        published.append(balance(terminal, "3.00"))
        # Relayed by the hub before the build returns: the socket, joined and not accepted yet, keeps them.
        for _ in range(250):
            if (
                hub.heads.get(speciality.stream, 0) >= published[0].seq
                and hub.heads.get(terminal.stream, 0) >= published[1].seq
            ):
                break
            time.sleep(0.02)
        else:
            raise AssertionError("the hub did not relay the events")
        return found

    with mock.patch.object(readmodels, "build_speciality_part", build_then_publish):
        communicator, snap = await opened(terminal, token)
    drawn, own = published
    assert snap["seqs"] == {speciality.stream: drawn.seq - 1}
    assert snap["drawing"]["balls"] == [42]
    received = [json.loads(await communicator.receive_from(timeout=TIMEOUT)) for _ in range(2)]
    assert sorted((f["stream"], f["seq"]) for f in received) == sorted(
        [(speciality.stream, drawn.seq), (terminal.stream, own.seq)]
    )
    # And the stream goes on.
    after = await off_the_loop(lambda: meters(speciality))
    assert json.loads(await communicator.receive_from(timeout=TIMEOUT))["seq"] == after.seq == drawn.seq + 1
    await communicator.disconnect()


async def test_without_snapshot_1_no_snapshot_frame_is_sent(layer: Any, venue: Any, operator: Any) -> None:
    speciality, [(terminal, token), _second], _game = await off_the_loop(
        lambda: drawing_hall(venue, operator)
    )
    communicator = WebsocketCommunicator(application, url(terminal.device_id, token, snapshot=False))
    assert (await communicator.connect(timeout=TIMEOUT))[0]
    assert await communicator.receive_nothing(timeout=0.3)
    event = await off_the_loop(lambda: meters(speciality))
    assert json.loads(await communicator.receive_from(timeout=TIMEOUT))["seq"] == event.seq
    assert snapshot_cache.cache().builds == 0
    await communicator.disconnect()


async def test_the_snapshot_frame_is_in_the_pages_language_one_entry_per_language(
    layer: Any, venue: Any, operator: Any
) -> None:
    """``lang=`` names the page's language (its API calls' Accept-Language; a socket cannot send headers):
    the speciality's part in it, the same cache entry as the terminal API's snapshot in that language."""
    _speciality, [(terminal, token), (other, other_token)], _game = await off_the_loop(
        lambda: drawing_hall(venue, operator)
    )
    # Another terminal keeps the hub following the streams (the last socket gone, the hub unsubscribes and
    # the entries built before are not trusted by a connect any more).
    keeper = WebsocketCommunicator(application, url(other.device_id, other_token, snapshot=False))
    assert (await keeper.connect(timeout=TIMEOUT))[0]
    cache = snapshot_cache.cache()
    for language in ("es", "en", "es"):
        path = url(terminal.device_id, token) + f"&lang={language}"
        communicator = WebsocketCommunicator(application, path)
        assert (await communicator.connect(timeout=TIMEOUT))[0]
        frame = await communicator.receive_json_from(timeout=TIMEOUT)
        assert frame["part"] == "speciality"
        await communicator.disconnect()
    assert cache.builds == 2
    assert {key[1] for key in cache._entries} == {"terminal:es", "terminal:en"}
    await keeper.disconnect()
