"""A player terminal acknowledges what it put on the glass (issue 28) over its socket, on the Redis layer:
the acks of both its streams are written (kind "terminal", the terminal's id), an ack of another terminal's
stream or of a seq its stream never sent is refused on the socket and written nowhere, and a purchase frame
is still a purchase."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from halls import ack_batcher, acks
from halls.models import DisplayAck
from tests.bingo.electronic.test_terminal_socket import balance, connect, hall, meters, off_the_loop

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 5
__all__ = ["hall"]  # the fixture, shared with the socket's tests (the Redis layer is conftest's)


def row(seq: int, frame: str, data: dict[str, Any], stream: str) -> list[Any]:
    return [seq, int(time.time() * 1000), acks.digest(frame, data), frame, None, [], stream]


async def test_a_terminal_acknowledges_both_its_streams_and_nothing_else(layer: Any, hall: Any) -> None:
    speciality, [(mine, my_token), (theirs, _token)], _other = hall
    me = await connect(mine, my_token)
    try:
        room_event = await off_the_loop(lambda: meters(speciality))
        own_event = await off_the_loop(lambda: balance(mine, "3.00"))
        got = [json.loads(await me.receive_from(timeout=TIMEOUT)) for _ in range(2)]
        assert {g["seq"] for g in got} == {room_event.seq, own_event.seq}
        shown = [row(g["seq"], g["type"], g["data"], g["stream"]) for g in got]
        await me.send_to(text_data=json.dumps({"type": "acks", "acks": shown}))
        # Another terminal's stream: refused at once, by name.
        await me.send_to(text_data=json.dumps({"type": "acks", "acks": [row(1, "x", {}, theirs.stream)]}))
        refused = json.loads(await me.receive_from(timeout=TIMEOUT))
        assert (refused["type"], refused["error"]) == ("ack.refused", "bad_stream")
        # A seq its own stream never reached: refused once the batch is written.
        await me.send_to(text_data=json.dumps({"type": "acks", "acks": [row(99, "x", {}, mine.stream)]}))
        await ack_batcher.batcher().drain()
        refused = json.loads(await me.receive_from(timeout=TIMEOUT))
        assert (refused["type"], refused["seq"], refused["error"]) == ("ack.refused", 99, "seq_never_sent")
        rows = await sync_to_async(
            lambda: list(DisplayAck.objects.order_by("stream").values_list("kind", "device", "stream", "seq"))
        )()
        assert sorted(rows) == sorted(
            [
                ("terminal", mine.pk, speciality.stream, room_event.seq),
                ("terminal", mine.pk, mine.stream, own_event.seq),
            ]
        )
        # Not an ack: a purchase frame, answered as before (here refused for its missing fields).
        await me.send_to(text_data=json.dumps({"type": "purchase", "key": "k-1"}))
        answer = json.loads(await me.receive_from(timeout=TIMEOUT))
        assert answer["type"] == "purchase.answer"
    finally:
        await me.disconnect()
