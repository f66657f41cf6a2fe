"""Display acknowledgements (issue 28): the ack frame and its digest (halls.acks, the same in the screens'
JS), the batch write (halls.services.acks: append-only, a retry a no-op, a seq never sent refused), and the
screen's socket taking acks (halls.consumers through halls.ack_batcher) on PostgreSQL and Redis."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.db import DatabaseError, transaction
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from config.asgi import application
from halls import ack_batcher, acks, events
from halls.eventtypes import EventType, SessionClosed
from halls.models import DisplayAck, Screen
from halls.services import acks as ack_services

ROOT = Path(__file__).resolve().parents[2]
ACK_JS = ROOT / "halls/static/halls/ack.js"
TIMEOUT = 5


def now_ms() -> int:
    return int(time.time() * 1000)


def frame(**changes: Any) -> dict[str, Any]:
    base = {"type": "ack", "seq": 3, "at": now_ms(), "hash": acks.ball_digest("ball.drawn", 7, 43)}
    base.update({"frame": "ball.drawn", "game": 7, "balls": [43]})
    base.update(changes)
    return base


# --- the frame and its digest (pure) --------------------------------------------------------------------


def test_an_ack_frame_is_read_with_its_fields() -> None:
    [ack] = acks.read_frame(json.dumps(frame()), now_ms=now_ms()) or []
    assert (ack.seq, ack.frame, ack.game, ack.balls) == (3, "ball.drawn", 7, (43,))
    assert ack.digest == acks.ball_digest("ball.drawn", 7, 43)


def test_what_is_not_an_ack_is_none_and_a_bad_ack_names_its_problem() -> None:
    assert acks.read_frame('{"type": "purchase", "key": "k"}', now_ms=now_ms()) is None
    cases = {
        "bad_seq": frame(seq=0),
        "bad_hash": frame(hash="XYZ"),
        "bad_time": frame(at="yesterday"),
        "bad_frame": frame(frame=""),
        "bad_balls": frame(balls=[0]),
        "bad_game": frame(game=-1),
        "bad_stream": frame(stream=5),
    }
    for code, bad in cases.items():
        with pytest.raises(acks.AckError) as refused:
            acks.read_frame(json.dumps(bad), now_ms=now_ms())
        assert refused.value.code == code
    with pytest.raises(acks.AckError, match="bad_json"):
        acks.read_frame('{"type": "ack", ', now_ms=now_ms())


def test_a_render_time_far_from_the_servers_clock_is_taken_as_the_servers() -> None:
    now = now_ms()
    [ack] = acks.read_frame(json.dumps(frame(at=now - 3 * 24 * 3600 * 1000)), now_ms=now) or []
    assert ack.rendered_ms == now


def test_a_frame_of_acks_is_read_whole_or_refused_whole() -> None:
    now = now_ms()
    rows = [[4, now, "0" * 16, "pool.meters", None, []], [5, now, "1" * 16, "ball.drawn", 7, [43], "room.1"]]
    found = acks.read_frame(json.dumps({"type": "acks", "acks": rows}), now_ms=now) or []
    assert [(a.seq, a.frame, a.balls, a.stream) for a in found] == [
        (4, "pool.meters", (), None),
        (5, "ball.drawn", (43,), "room.1"),
    ]
    with pytest.raises(acks.AckError, match="bad_hash"):
        acks.read_frame(
            json.dumps({"type": "acks", "acks": [*rows, [6, now, "nothex", "x", None, []]]}), now_ms=now
        )
    with pytest.raises(acks.AckError, match="bad_acks"):
        acks.read_frame(json.dumps({"type": "acks", "acks": [[1, 2]]}), now_ms=now)
    with pytest.raises(acks.AckError, match="bad_acks"):
        acks.read_frame(json.dumps({"type": "acks", "acks": [rows[0]] * (acks.MAX_ACKS + 1)}), now_ms=now)


@given(
    game=st.integers(1, 10**9),
    seq=st.integers(1, 10**9),
    balls=st.lists(st.integers(1, 90), max_size=90),
)
def test_the_digest_is_a_short_sha256_of_the_canonical_text(game: int, seq: int, balls: list[int]) -> None:
    import hashlib

    text = f"snapshot|{seq}|{game}|" + ",".join(map(str, balls))
    assert acks.snapshot_digest(seq, game, balls) == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert acks.canonical("ball.drawn", {"game": game, "ball": 5, "ordinal": 9}) == f"ball.drawn|{game}|5"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_screens_js_computes_the_same_digests() -> None:
    cases: list[tuple[str, dict[str, Any]]] = [
        ("ball.drawn", {"game": 12, "ball": 43, "ordinal": 5}),
        ("egame.ball", {"game": 3, "ball": 71, "drawn_at": "2026-12-06T19:00:00Z"}),
        ("snapshot", {"seq": 9, "game": 12, "balls": [1, 2, 90]}),
        ("pool.meters", {"b": [1, {"z": "1.00", "a": "ñ €"}], "a": 2}),
    ]
    script = (
        "global.window = global;"
        f"require({json.dumps(str(ACK_JS))});"
        f"const cases = {json.dumps(cases)};"
        "const A = window.HallAck;"
        "console.log(JSON.stringify(cases.map(c => A.digest(A.canonical(c[0], c[1])))));"
    )
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True, timeout=30)
    assert json.loads(out.stdout) == [acks.digest(name, data) for name, data in cases]


# --- the batch write ------------------------------------------------------------------------------------


def received(screen: Screen, seq: int, *, known: bool = True, ball: int = 43) -> ack_services.Received:
    ack = acks.parse(frame(seq=seq, balls=[ball]), now_ms=now_ms())  # one "ack", as the array form gives it
    return ack_services.Received("screen", screen.pk, screen.room.stream, ack, now_ms(), known)


def emit(stream: str, number: int) -> events.Event:
    with transaction.atomic():
        return events.emit(stream, EventType.SESSION_CLOSED, SessionClosed(session=number))


@pytest.mark.django_db
def test_a_batch_is_written_once_and_a_retry_is_a_no_op(screen: Screen) -> None:
    batch = [received(screen, 1), received(screen, 2)]
    assert ack_services.record_acks(acks=batch, actor="test") == []
    assert ack_services.record_acks(acks=batch, actor="test") == []  # the screen sent them again
    rows = list(DisplayAck.objects.order_by("seq").values_list("kind", "device", "stream", "seq", "balls"))
    assert rows == [
        ("screen", screen.pk, screen.room.stream, 1, [43]),
        ("screen", screen.pk, screen.room.stream, 2, [43]),
    ]


@pytest.mark.django_db
def test_an_ack_above_what_the_stream_sent_is_refused_and_written_nowhere(screen: Screen) -> None:
    emit(screen.room.stream, 1)
    emit(screen.room.stream, 2)  # the stream's cursor is at 2
    refused = ack_services.record_acks(
        acks=[received(screen, 2, known=False), received(screen, 3, known=False)], actor="test"
    )
    assert [(r.received.ack.seq, r.code) for r in refused] == [(3, "seq_never_sent")]
    assert list(DisplayAck.objects.values_list("seq", flat=True)) == [2]


@pytest.mark.django_db(transaction=True)
def test_acks_are_append_only(screen: Screen) -> None:
    ack_services.record_acks(acks=[received(screen, 1)], actor="test")
    with pytest.raises(DatabaseError, match=r"append.only"):
        DisplayAck.objects.update(digest="0" * 16)
    with pytest.raises(DatabaseError, match=r"append.only"):
        DisplayAck.objects.all().delete()


@pytest.mark.django_db
def test_the_record_of_a_ball_per_screen_live_late_or_never(screen: Screen) -> None:
    other = Screen.objects.create(venue=screen.venue, room=screen.room, name="Pantalla 2")
    dark = Screen.objects.create(venue=screen.venue, room=screen.room, name="Pantalla 3")
    stream = screen.room.stream
    drawn_at = timezone.now() - timedelta(seconds=30)
    drawn = [ack_services.DrawnBall(1, 43, drawn_at), ack_services.DrawnBall(2, 12, drawn_at)]
    late = acks.parse(
        {**frame(seq=9, frame="snapshot", balls=[43, 12]), "hash": acks.snapshot_digest(9, 7, [43, 12])},
        now_ms=now_ms(),
    )
    ack_services.record_acks(
        acks=[
            received(screen, 1, ball=43),  # live, with the ball's digest (frame() hashes game 7, ball 43)
            received(screen, 2, ball=12),  # live, but the digest it sent is 43's
            ack_services.Received("screen", other.pk, stream, late, now_ms(), True),  # only the snapshot
        ],
        actor="test",
    )
    devices = [("screen", s.pk, s.name) for s in (screen, other, dark)]
    found = ack_services.ball_record(stream=stream, game=7, frame="ball.drawn", drawn=drawn, devices=devices)
    records = {r.device: r for r in found}
    first, second = records[screen.pk].balls
    assert (first.how, first.digest_ok, first.gap) == ("live", True, False)
    assert (second.how, second.digest_ok, second.gap) == ("live", False, False)
    assert [b.how for b in records[other.pk].balls] == ["snapshot", "snapshot"]
    assert [b.how for b in records[dark.pk].balls] == ["never", "never"]
    assert len(records[other.pk].gaps) == len(records[dark.pk].gaps) == 2


# --- the screen's socket --------------------------------------------------------------------------------


async def connect(token: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, f"/ws/screens/{token}/")
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    return communicator


async def drain() -> None:
    await ack_batcher.batcher().drain()


@pytest.mark.django_db(transaction=True)
async def test_a_screen_acknowledges_what_it_was_sent_and_a_seq_never_sent_is_refused(
    layer: Any, screen: Screen
) -> None:
    from asgiref.sync import sync_to_async

    stream = await sync_to_async(lambda: screen.room.stream)()
    communicator = await connect(screen.token)
    try:
        event = await sync_to_async(emit)(stream, 1)
        got = json.loads(await communicator.receive_from(TIMEOUT))
        assert got["seq"] == event.seq
        shown = {"type": "ack", "seq": event.seq, "at": now_ms(), "frame": "session.closed"}
        shown["hash"] = acks.digest("session.closed", got["data"])
        await communicator.send_to(text_data=json.dumps(shown))
        # Above what the stream sent: refused, and said so on the socket.
        await communicator.send_to(text_data=json.dumps({**shown, "seq": event.seq + 5}))
        # Not an ack at all: refused by name, nothing queued.
        await communicator.send_to(text_data=json.dumps({**shown, "hash": "nothex"}))
        refusals = [json.loads(await communicator.receive_from(TIMEOUT))]
        await drain()
        refusals.append(json.loads(await communicator.receive_from(TIMEOUT)))
        assert {(r["type"], r["seq"], r["error"]) for r in refusals} == {
            ("ack.refused", None, "bad_hash"),
            ("ack.refused", event.seq + 5, "seq_never_sent"),
        }
        rows = await sync_to_async(
            lambda: list(DisplayAck.objects.values_list("device", "stream", "seq", "digest"))
        )()
        assert rows == [(screen.pk, stream, event.seq, shown["hash"])]
    finally:
        await communicator.disconnect()
