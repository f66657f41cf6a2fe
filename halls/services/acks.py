"""Display acknowledgements (issue 28): writing the screens' and terminals' acks in batches, and reading them
back per screen for the caller's console and the inspector's record.

`record_acks` is the one write: a batch of acks from the sockets of one web process (halls.ack_batcher), one
statement, append-only (a retry of the same device, stream and seq is a no-op). An ack for a sequence its
stream never reached (above the stream's cursor) is refused: written nowhere as an ack, returned to the
caller, which tells the socket and counts it. The acks are device telemetry, not decisions: no audit entry
per batch (the rows are append-only themselves, and the digests are checked against the game record when
read).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max

from halls import acks as pure
from halls.models import DisplayAck, Room, Screen, StreamCursor

log = logging.getLogger("hall.acks")


class Received(NamedTuple):  # a tuple: one per ack received
    """One ack as a socket read it: who sent it, on which stream, and whether its seq is known to be at or
    below what the stream sent (`known`: the socket's hub saw that seq; otherwise the cursor decides)."""

    kind: str
    device: int
    stream: str
    ack: pure.Ack
    received_ms: int
    known: bool


@dataclass(frozen=True, slots=True)
class Refusal:
    received: Received
    code: str  # "seq_never_sent"


def late_seconds() -> float:
    return float(getattr(settings, "HALL_ACK_LATE_SECONDS", 2.0))


def record_acks(*, acks: Sequence[Received], actor: str) -> list[Refusal]:
    """Write a batch of acks; return those refused (a seq above its stream's cursor), written nowhere."""
    if not acks:
        return []
    unknown = {r.stream for r in acks if not r.known}
    heads: dict[str, int] = {}
    if unknown:
        heads = dict(StreamCursor.objects.filter(stream__in=unknown).values_list("stream", "seq"))
    refused: list[Refusal] = []
    kept: list[Received] = []
    for r in acks:
        if not r.known and r.ack.seq > heads.get(r.stream, 0):
            refused.append(Refusal(r, "seq_never_sent"))
        else:
            kept.append(r)
    if kept:
        with transaction.atomic():
            if connection.vendor == "postgresql":
                _insert_pg(kept)
            else:
                _insert_orm(kept)
    for refusal in refused:
        r = refusal.received
        log.warning(
            "ack refused: %s %s on %s acknowledged seq %s, never sent (by %s)",
            r.kind,
            r.device,
            r.stream,
            r.ack.seq,
            actor,
        )
    return refused


# One statement for the whole batch, its rows as one JSON text: bulk_create builds a model and its SQL per
# row, and ten arrays adapted value by value by psycopg cost 15 µs of the web process's CPU per ack.
_INSERT_SQL = """
INSERT INTO {table} (kind, device, stream, seq, frame, game, balls, digest, rendered_at, received_at)
SELECT r.kind, r.device, r.stream, r.seq, r.frame, r.game, r.balls, r.digest,
    to_timestamp(r.rendered / 1000.0), to_timestamp(r.received / 1000.0)
FROM jsonb_to_recordset(%s::jsonb) AS r(kind text, device bigint, stream text, seq bigint, frame text,
    game bigint, balls jsonb, digest text, rendered bigint, received bigint)
ON CONFLICT (kind, device, stream, seq) DO NOTHING
"""
_ROW_KEYS = ("kind", "device", "stream", "seq", "frame", "game", "balls", "digest", "rendered", "received")


def _when(ms: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)


def _insert_pg(kept: Sequence[Received]) -> None:
    sql = _INSERT_SQL.format(table=connection.ops.quote_name(DisplayAck._meta.db_table))
    rows = [
        dict(
            zip(
                _ROW_KEYS,
                (
                    r.kind,
                    r.device,
                    r.stream,
                    r.ack.seq,
                    r.ack.frame,
                    r.ack.game,
                    r.ack.balls,
                    r.ack.digest,
                    r.ack.rendered_ms,
                    r.received_ms,
                ),
                strict=True,
            )
        )
        for r in kept
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, [json.dumps(rows, separators=(",", ":"))])


def _insert_orm(kept: Sequence[Received]) -> None:
    DisplayAck.objects.bulk_create(
        [
            DisplayAck(
                kind=r.kind,
                device=r.device,
                stream=r.stream,
                seq=r.ack.seq,
                frame=r.ack.frame,
                game=r.ack.game,
                balls=list(r.ack.balls),
                digest=r.ack.digest,
                rendered_at=_when(r.ack.rendered_ms),
                received_at=_when(r.received_ms),
            )
            for r in kept
        ],
        ignore_conflicts=True,
    )


# --- reading: per screen, per ball --------------------------------------------------------------------------


@dataclass(frozen=True)
class DrawnBall:
    ordinal: int
    ball: int
    drawn_at: datetime


@dataclass
class BallShown:
    """One ball on one screen: when it was first shown live (its own frame), or only in a later snapshot
    (a reconnect), or never; and whether the digest the screen sent is the ball's."""

    ordinal: int
    ball: int
    drawn_at: datetime
    shown_at: datetime | None = None  # the screen's render time of the first ack showing it
    received_at: datetime | None = None
    seq: int | None = None
    how: str = "never"  # "live" | "snapshot" | "never"
    digest_ok: bool | None = None
    delay: float | None = None  # seconds from the draw to the server's receipt of the ack

    @property
    def gap(self) -> bool:
        """Not shown when it was drawn: never, or only when a reloaded snapshot brought it."""
        return self.how != "live"


@dataclass
class ScreenRecord:
    kind: str
    device: int
    name: str
    balls: list[BallShown] = field(default_factory=list)
    refused_digests: int = 0

    @property
    def gaps(self) -> list[BallShown]:
        return [b for b in self.balls if b.gap]


def room_screens(room: Room) -> list[tuple[str, int, str]]:
    """The room's active screens as the ack records name them: (kind, id, name)."""
    return [
        (DisplayAck.Kind.SCREEN, pk, name)
        for pk, name in Screen.objects.filter(room=room, active=True)
        .order_by("name", "pk")
        .values_list("pk", "name")
    ]


def ball_on(records: Iterable[ScreenRecord], number: int) -> list[tuple[ScreenRecord, BallShown]]:
    """A claim dispute ("my screen never showed 43"): that ball on every device of `records`. Empty when the
    ball was not drawn in the game."""
    out = []
    for record in records:
        shown = next((b for b in record.balls if b.ball == number), None)
        if shown is not None:
            out.append((record, shown))
    return out


def ball_record(
    *,
    stream: str,
    game: int,
    frame: str,
    drawn: Sequence[DrawnBall],
    devices: Iterable[tuple[str, int, str]],
) -> list[ScreenRecord]:
    """Per device (kind, id, name) following `stream`, when each drawn ball of `game` was shown, and the gaps.

    `frame` is the event type that carries a ball of this game ("ball.drawn", "egame.ball"). A device with
    acks but not listed (a screen since moved or retired) is added with its id as its name."""
    rows = DisplayAck.objects.filter(stream=stream, game=game, frame__in=[frame, pure.SNAPSHOT]).order_by(
        "received_at", "seq"
    )
    by_device: dict[tuple[str, int], list[DisplayAck]] = {}
    for row in rows:
        by_device.setdefault((row.kind, row.device), []).append(row)
    names = {(kind, device): name for kind, device, name in devices}
    for key in by_device:
        names.setdefault(key, f"#{key[1]}")
    out = []
    for (kind, device), name in names.items():
        record = ScreenRecord(kind=kind, device=device, name=name)
        acked = by_device.get((kind, device), [])
        for ball in drawn:
            record.balls.append(_shown(ball, game, frame, acked))
        out.append(record)
    return out


def _shown(ball: DrawnBall, game: int, frame: str, acked: Sequence[DisplayAck]) -> BallShown:
    shown = BallShown(ordinal=ball.ordinal, ball=ball.ball, drawn_at=ball.drawn_at)
    expected = pure.ball_digest(frame, game, ball.ball)
    for row in acked:  # in the order received: the first that shows the ball
        if ball.ball not in (row.balls or ()):
            continue
        if row.frame == frame:
            shown.how, shown.digest_ok = "live", row.digest == expected
        elif row.received_at >= ball.drawn_at:  # a snapshot loaded after the draw brought it
            shown.how = "snapshot"
        else:
            continue
        shown.shown_at, shown.received_at, shown.seq = row.rendered_at, row.received_at, row.seq
        shown.delay = (row.received_at - ball.drawn_at).total_seconds()
        return shown
    return shown


@dataclass(frozen=True)
class CurrentBallState:
    kind: str
    device: int
    name: str
    shown: bool
    late: bool  # not shown, and the ball was drawn more than `late_seconds()` ago
    shown_at: datetime | None
    last_ack_at: datetime | None  # when this screen last acknowledged anything on the stream


def current_ball(
    *,
    stream: str,
    game: int,
    frame: str,
    ball: DrawnBall,
    devices: Iterable[tuple[str, int, str]],
    now: datetime,
) -> list[CurrentBallState]:
    """For the caller's console: has each device shown the current ball? Late once `late_seconds()` passed."""
    listed = list(devices)
    records = ball_record(stream=stream, game=game, frame=frame, drawn=[ball], devices=listed)
    states = {(r.kind, r.device): r for r in records}
    last = _last_acks(stream, since=ball.drawn_at - timedelta(minutes=10))
    overdue = (now - ball.drawn_at).total_seconds() > late_seconds()
    out = []
    for kind, device, name in listed:
        shown = states[(kind, device)].balls[0]
        out.append(
            CurrentBallState(
                kind=kind,
                device=device,
                name=name,
                shown=shown.shown_at is not None,
                late=shown.shown_at is None and overdue,
                shown_at=shown.shown_at,
                last_ack_at=last.get((kind, device)),
            )
        )
    return out


def watch(
    *,
    stream: str,
    game: int | None,
    frame: str,
    last: DrawnBall | None,
    devices: Iterable[tuple[str, int, str]],
    now: datetime,
) -> dict[str, Any]:
    """What a staff page that watches a game's screens polls: the game drawing (`game`), its last ball, and
    whether each device has shown it (`late` once `late_seconds()` have passed without its ack)."""
    if game is None or last is None:
        return {"game": game, "ball": None, "late_after": late_seconds(), "screens": []}
    states = current_ball(stream=stream, game=game, frame=frame, ball=last, devices=devices, now=now)
    return {
        "game": game,
        "ball": last.ball,
        "ordinal": last.ordinal,
        "drawn_at": last.drawn_at,
        "late_after": late_seconds(),
        "screens": [
            {
                "kind": s.kind,
                "id": s.device,
                "name": s.name,
                "shown": s.shown,
                "late": s.late,
                "shown_at": s.shown_at,
                "last_ack_at": s.last_ack_at,
            }
            for s in states
        ],
    }


def _last_acks(stream: str, *, since: datetime) -> dict[tuple[str, int], datetime]:
    rows = (
        DisplayAck.objects.filter(stream=stream, received_at__gte=since)
        .values("kind", "device")
        .annotate(last=Max("received_at"))
    )
    return {(row["kind"], row["device"]): row["last"] for row in rows}
