"""A screen's snapshot from the web process's cache (issue 30, a reconnect storm; halls.snapshot_cache,
halls.services.screen_snapshots): a socket opened with ``?snapshot=1`` is sent its snapshot as its first
frame, built once per change of the room's stream for the whole process (single-flight: many connects at
once, one build), read with no query at all once cached; a ball or a prize since is in the next one (never
stale); the HTTP snapshot serves the same text after its token's and its cursor's reads.

On PostgreSQL and the Redis pub/sub layer (counting every SQL statement, on any thread), and on the embedded
hall's SQLite and in-memory layer (`make test`'s second run: this module is in its suite).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from unittest import mock

import pytest
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator, WebsocketCommunicator

from bingo.cards import CardGrid
from bingo.traditional.models import Card, CardSeries, Game
from bingo.traditional.services import claims, draw
from config.asgi import application
from halls import fanout, snapshot_cache
from halls.events import current_seq
from halls.models import Screen
from halls.services import screen_snapshots

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10


@pytest.fixture
async def channel_layer(settings: Any) -> Any:
    """This test's own layer: Redis pub/sub under a prefix of its own on PostgreSQL runs, the in-memory
    layer of the embedded hall on SQLite."""
    from channels.layers import get_channel_layer

    if settings.CHANNEL_LAYERS["default"]["BACKEND"].startswith("channels_redis"):
        isolated = settings.CHANNEL_LAYERS["default"]
        settings.CHANNEL_LAYERS = {
            "default": {**isolated, "CONFIG": {**isolated["CONFIG"], "prefix": f"test-snap-{id(settings)}"}}
        }
    layer = get_channel_layer()
    yield layer
    await layer.flush()


async def opened(token: str) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    """A screen's socket asking for its snapshot, and that first frame."""
    communicator = WebsocketCommunicator(application, f"/ws/screens/{token}/?snapshot=1")
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    first: dict[str, Any] = await communicator.receive_json_from(timeout=TIMEOUT)
    assert first["type"] == screen_snapshots.SNAPSHOT_TYPE, first
    return communicator, first


async def http_snapshot(token: str) -> dict[str, Any]:
    communicator = HttpCommunicator(application, "GET", f"/screens/{token}/snapshot/")
    response = await communicator.get_response(TIMEOUT)
    await communicator.wait(TIMEOUT)
    assert response["status"] == 200
    body: dict[str, Any] = json.loads(response["body"])
    return body


def balls(snapshot: dict[str, Any]) -> list[int]:
    game = snapshot["sections"]["bingo"]["game"]
    return [b["ball"] for b in game["balls"]] if game else []


enter_ball = database_sync_to_async(draw.enter_ball)
seq_of = database_sync_to_async(current_seq)


async def test_a_warm_reconnect_reads_nothing_and_a_ball_is_in_the_next_snapshot(
    channel_layer: Any, screen: Screen, drawing_game: Game, caller: Any, statements: list[str]
) -> None:
    cache = snapshot_cache.cache()
    stream = screen.room.stream
    await enter_ball(game=drawing_game, number=33, actor=caller)
    first, snap = await opened(screen.token)
    assert snap["stream"] == stream and snap["seq"] == await seq_of(stream)
    assert (snap["screen"], snap["screen_id"], snap["voice"]["screen"]) == (screen.name, screen.pk, screen.pk)
    assert snap["venue"] == screen.venue.name and snap["room"] == screen.room.name
    assert balls(snap) == [33]
    assert cache.builds == 1

    # Warm: the token and the room's part both kept by the process: not one query for 20 reconnects.
    statements.clear()
    again = [await opened(screen.token) for _ in range(20)]
    assert statements == []
    assert cache.builds == 1 and fanout.hub().admit_reads == 1
    assert all(s == snap for _c, s in again)

    # A ball drawn: every open socket hears it, and the next connect's snapshot holds it (a build).
    await enter_ball(game=drawing_game, number=17, actor=caller)
    event = await first.receive_json_from(timeout=TIMEOUT)
    assert event["type"] == "ball.drawn" and event["seq"] == snap["seq"] + 1
    for communicator, _s in again:
        assert (await communicator.receive_json_from(timeout=TIMEOUT))["seq"] == event["seq"]
    _c, fresh = await opened(screen.token)
    assert fresh["seq"] == event["seq"] and balls(fresh) == [33, 17]
    assert cache.builds == 2
    statements.clear()
    _c, same = await opened(screen.token)
    assert statements == [] and same == fresh

    # The HTTP snapshot: the same text, from the same entry (its token's read and the cursor's only).
    statements.clear()
    assert await http_snapshot(screen.token) == {k: v for k, v in fresh.items() if k != "type"}
    assert len(statements) == 2, statements
    assert cache.builds == 2


async def test_many_connects_at_once_build_the_snapshot_once(
    channel_layer: Any, screen: Screen, drawing_game: Game, caller: Any
) -> None:
    await enter_ball(game=drawing_game, number=5, actor=caller)
    opened_all = await asyncio.gather(*(opened(screen.token) for _ in range(30)))
    assert snapshot_cache.cache().builds == 1
    assert {s["seq"] for _c, s in opened_all} == {await seq_of(screen.room.stream)}
    assert all(balls(s) == [5] for _c, s in opened_all)


async def test_an_event_heard_while_the_snapshot_is_built_follows_it(
    channel_layer: Any, screen: Screen, drawing_game: Game, caller: Any
) -> None:
    """A ball committed while a connect's snapshot is being built: the socket gets it (after the snapshot,
    or inside it), never neither: the page drops what the snapshot holds by seq."""
    listener, _snap = await opened(screen.token)  # the hub follows the stream
    built = screen_snapshots.build_room_part

    def slow_build(room_id: int) -> Any:
        draw.enter_ball(game=drawing_game, number=61, actor=caller)  # committed, published meanwhile
        return built(room_id)

    snapshot_cache.cache().clear()  # the next connect builds
    with mock.patch.object(screen_snapshots, "build_room_part", slow_build):
        communicator, snap = await opened(screen.token)
    ball = await listener.receive_json_from(timeout=TIMEOUT)
    assert ball["type"] == "ball.drawn"
    seen = {snap["seq"]}
    if snap["seq"] < ball["seq"]:
        seen.add((await communicator.receive_json_from(timeout=TIMEOUT))["seq"])
    assert max(seen) == ball["seq"] == await seq_of(screen.room.stream)


async def test_a_prize_is_in_the_next_snapshot_and_a_socket_without_the_flag_gets_none(
    channel_layer: Any, screen: Screen, drawing_game: Game, card_series: CardSeries, caller: Any
) -> None:
    _c, before = await opened(screen.token)
    assert before["sections"]["bingo"]["game"]["prizes"] == []
    plain = WebsocketCommunicator(application, f"/ws/screens/{screen.token}/")
    assert (await plain.connect(timeout=TIMEOUT))[0]
    assert await plain.receive_nothing(timeout=0.3)  # the page loads it over HTTP

    def line_of_card_3() -> list[int]:
        grid = CardGrid.from_json(Card.objects.get(series=card_series, serial=3).grid)
        top = sorted(n for n in grid.rows[0] if n)
        for number in top:
            draw.enter_ball(game=drawing_game, number=number, actor=caller)
        claim = claims.file_claim(
            game=drawing_game, kind="line", series_code=card_series.code, serial=3, actor=caller
        )
        assert claim.valid
        claims.confirm_claims(game=drawing_game, kind="line", actor=caller)
        return top

    top = await database_sync_to_async(line_of_card_3)()
    _c, after = await opened(screen.token)
    assert after["seq"] == await seq_of(screen.room.stream) > before["seq"]
    assert balls(after) == top
    [prize] = after["sections"]["bingo"]["game"]["prizes"]
    assert prize["kind"] == "line" and [w["serial"] for w in prize["winners"]] == [3]
    assert await http_snapshot(screen.token) == {k: v for k, v in after.items() if k != "type"}


def test_requests_at_once_build_once_and_a_newer_cursor_builds_again() -> None:
    """The threads' side (the HTTP snapshots): one build for concurrent requests; an entry behind the
    cursor a request read is never served to it."""
    import threading
    import time

    cache = snapshot_cache.SnapshotCache()
    seq = [4]
    calls: list[int] = []

    def build() -> tuple[int, str]:
        calls.append(seq[0])
        time.sleep(0.2)  # long enough for every request to arrive meanwhile
        return seq[0], f"state at {seq[0]}"

    got: list[snapshot_cache.Entry] = []
    threads = [
        threading.Thread(target=lambda: got.append(cache.get(("room.1", "screen"), 4, build)))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [4] and {(e.seq, e.value) for e in got} == {(4, "state at 4")}
    seq[0] = 5
    assert cache.get(("room.1", "screen"), 5, build).value == "state at 5"
    assert cache.get(("room.1", "screen"), 4, build).value == "state at 5"  # newer serves older readers
    assert calls == [4, 5] and cache.builds == 2
