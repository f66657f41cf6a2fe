"""The caller console's live state: its snapshot, and the staff stream that carries what screens never see.

The console's socket delivers two streams, each numbered on its own (DESIGN §4):
- the room's public stream (``room.7``): balls, sales, claims, prizes, the game's steps, as screens get them;
- the room's staff stream (``room.7.staff``): the winning cards nobody has claimed (``console.unclaimed``),
  computed once per change inside the ball's, claim's or prize's own transaction and published on commit;
  each material check recorded before the session opens (event ``session.check``, halls.services.sessions).

A console loads ``console_snapshot`` (each stream's sequence number first, then the state), applies the
events that follow, and reloads the snapshot on a gap in either stream or a reconnect.
"""

from __future__ import annotations

from typing import Any

from bingo.traditional.models import Game
from bingo.traditional.services import readmodels
from halls import events
from halls.eventtypes import ConsoleUnclaimed, EventType
from halls.models import Room, StreamCursor, room_staff_stream


def staff_stream(room_id: int) -> str:
    """The room's staff-only stream: what the caller's console sees beyond the public screens."""
    return room_staff_stream(room_id)


def console_streams(room: Room) -> list[str]:
    return [room.stream, staff_stream(room.pk)]


def stream_seqs(room: Room) -> dict[str, int]:
    streams = console_streams(room)
    found = dict(StreamCursor.objects.filter(stream__in=streams).values_list("stream", "seq"))
    return {stream: found.get(stream, 0) for stream in streams}


def console_snapshot(room: Room) -> dict[str, Any]:
    """The room, its current game as the caller sees it, and the sequence numbers read before them."""
    seqs = stream_seqs(room)  # first: an event committed meanwhile is then applied again, never missed
    game = readmodels.current_game(room)
    return {"streams": seqs, "room": room, "game": readmodels.caller_view(game) if game else None}


def emit_unclaimed(game: Game) -> events.Event:
    """Number the game's unclaimed winners on the staff stream, in the caller's transaction.

    Called by the services that change them (a ball drawn, a valid claim, a prize paid), with the game's
    row locked and written: the list is read as that transaction sees it, and published once it commits
    (a rolled-back ball tells the consoles nothing). The stream's cursor row, bumped here and locked till
    commit, keeps one room's lists in order.
    """
    view = readmodels.unclaimed_view(game, current=True)
    data = ConsoleUnclaimed(
        game=game.pk,
        ordinal=view["ordinal"],
        line=view["line"],
        bingo=view["bingo"],
        line_count=view["line_count"],
        bingo_count=view["bingo_count"],
    )
    return events.emit(staff_stream(game.room_id), EventType.CONSOLE_UNCLAIMED, data)


def tell_consoles(game: Game) -> None:
    """The caller consoles' unclaimed winners as the caller's transaction leaves them (the game locked and
    written): after a ball, a valid claim, a corrected ball or a prize paid."""
    emit_unclaimed(game)
