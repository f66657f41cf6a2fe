"""Display acknowledgements, the pure part: what a screen's or terminal's ack frame says, and the digest of
what it showed (issue 28, "Display acknowledgement"). No Django here: the screens' JS
(halls/static/halls/ack.js) computes the same digest, and anyone can recompute it from the game record.

An ack frame (text, from the screen's own socket):

    {"type": "ack", "seq": 41, "at": 1764950400123, "hash": "9f86d081884c7d65",
     "frame": "ball.drawn", "game": 12, "balls": [43]}

A screen sends its acks a few at a time, in one frame (one WebSocket message per ack cost more server CPU
than the ack itself): ``{"type": "acks", "acks": [[seq, at, hash, frame, game, balls], ...]}``, each array
the fields above in that order, with the stream as a seventh element when the device follows several.

``seq``: the stream sequence it rendered; ``at``: when it rendered (ms since the epoch, the screen's clock);
``hash``: the first 16 hex digits of SHA-256 of the canonical content it showed (`canonical`); ``frame``: the
event type, or "snapshot" for what a (re)loaded snapshot showed; ``game``/``balls``: the game and the balls
that frame put on the glass (a ball frame: its ball; a snapshot: every ball it shows), for the record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

from halls.eventtypes import EventType

DIGEST_HEX = 16  # a short SHA-256: 64 bits name what a screen showed well enough to settle a dispute
SNAPSHOT = "snapshot"
# The frames that put balls on the glass, by the key of the ball in their data.
BALL_FRAMES: dict[str, str] = {EventType.BALL_DRAWN: "ball", EventType.EGAME_BALL: "ball"}
MAX_BALLS = 200  # a snapshot shows at most a game's balls (90 or 75 in the rules; room to spare)
MAX_FRAME_CHARS = 20_000  # an ack frame far beyond this is not an ack
MAX_ACKS = 64  # acks in one frame (a screen sends its pending acks at least every second)
# A screen's clock may be off; a render time further than this from the server's is taken as the server's.
MAX_SKEW_MS = 24 * 3600 * 1000


class AckError(ValueError):
    """An ack frame that cannot be read: ``code`` names the problem."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class Ack(NamedTuple):  # a tuple: made for every ack a screen sends, at a fraction of a dataclass's cost
    seq: int
    rendered_ms: int
    digest: str
    frame: str
    game: int | None
    balls: tuple[int, ...]
    stream: str | None = None  # named by a device that follows more than one stream (a terminal)

    @property
    def rendered_at(self) -> datetime:
        return datetime.fromtimestamp(self.rendered_ms / 1000, tz=UTC)


def canonical(frame: str, data: Mapping[str, Any]) -> str:
    """The canonical text of what one frame showed.

    A ball: ``ball.drawn|<game>|<ball>``; a snapshot: ``snapshot|<seq>|<game>|<ball>,<ball>,...`` (its balls
    in the order shown); any other frame (a prize, a meter): its type and its data as JSON with sorted keys
    and no spaces, as the screen received it (``JSON.stringify`` of the sorted data in ack.js)."""
    if frame in BALL_FRAMES:
        return f"{frame}|{_text(data.get('game'))}|{_text(data.get(BALL_FRAMES[frame]))}"
    if frame == SNAPSHOT:
        balls = ",".join(str(int(b)) for b in data.get("balls") or ())
        return f"{SNAPSHOT}|{_text(data.get('seq'))}|{_text(data.get('game'))}|{balls}"
    return frame + "|" + json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(frame: str, data: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(frame, data).encode()).hexdigest()[:DIGEST_HEX]


def ball_digest(frame: str, game: int, ball: int) -> str:
    """What a screen that showed `ball` of `game` acknowledges for it (the record checks the acks by it)."""
    return digest(frame, {"game": game, BALL_FRAMES.get(frame, "ball"): ball})


def snapshot_digest(seq: int, game: int | None, balls: Sequence[int]) -> str:
    return digest(SNAPSHOT, {"seq": seq, "game": game, "balls": list(balls)})


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _int(value: Any, code: str, *, low: int = 0, high: int = 2**62) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise AckError(code)
    return value


def parse(message: Mapping[str, Any], *, now_ms: int) -> Ack:
    """An ack frame's fields, checked (`AckError` naming the first that is wrong)."""
    seq = _int(message.get("seq"), "bad_seq", low=1)
    rendered = _int(message.get("at"), "bad_time", low=1)
    if abs(rendered - now_ms) > MAX_SKEW_MS:
        rendered = now_ms
    digest_ = message.get("hash")
    if not isinstance(digest_, str) or len(digest_) != DIGEST_HEX or not _is_hex(digest_):
        raise AckError("bad_hash")
    frame = message.get("frame")
    if not isinstance(frame, str) or not 0 < len(frame) <= 40:
        raise AckError("bad_frame")
    game = message.get("game")
    if game is not None:
        game = _int(game, "bad_game", low=1)
    raw_balls = message.get("balls") or []
    if not isinstance(raw_balls, list) or len(raw_balls) > MAX_BALLS:
        raise AckError("bad_balls")
    balls = tuple(_int(b, "bad_balls", low=1, high=999) for b in raw_balls)
    stream = message.get("stream")
    if stream is not None and (not isinstance(stream, str) or not 0 < len(stream) <= 80):
        raise AckError("bad_stream")
    return Ack(
        seq=seq, rendered_ms=rendered, digest=digest_, frame=frame, game=game, balls=balls, stream=stream
    )


_HEX = frozenset("0123456789abcdef")


def _is_hex(text: str) -> bool:
    return _HEX.issuperset(text)


def read_frame(text: str, *, now_ms: int) -> list[Ack] | None:
    """The acks of a socket's text frame (one "ack", or a list of "acks"); None when the frame is not an ack
    (the screen said something else, ignored as before); `AckError` when it is one that cannot be read (the
    whole frame: nothing of it is taken)."""
    if len(text) > MAX_FRAME_CHARS or '"ack' not in text[:40]:
        return None
    try:
        message = json.loads(text)
    except ValueError:
        raise AckError("bad_json") from None
    if not isinstance(message, dict):
        return None
    kind = message.get("type")
    if kind == "ack":
        return [parse(message, now_ms=now_ms)]
    if kind != "acks":
        return None
    rows = message.get("acks")
    if not isinstance(rows, list) or not 0 < len(rows) <= MAX_ACKS:
        raise AckError("bad_acks")
    out = []
    for row in rows:
        if not isinstance(row, list) or not 6 <= len(row) <= 7:
            raise AckError("bad_acks")
        out.append(_parse_row(row, now_ms))
    return out


def _parse_row(row: list[Any], now_ms: int) -> Ack:
    """`parse` of one array of an "acks" frame, read in place (the same checks)."""
    seq, rendered, digest_, frame, game, raw_balls = row[:6]
    stream = row[6] if len(row) > 6 else None
    if type(seq) is not int or not 1 <= seq <= 2**62:
        raise AckError("bad_seq")
    if type(rendered) is not int or rendered < 1:
        raise AckError("bad_time")
    if abs(rendered - now_ms) > MAX_SKEW_MS:
        rendered = now_ms
    if type(digest_) is not str or len(digest_) != DIGEST_HEX or not _is_hex(digest_):
        raise AckError("bad_hash")
    if type(frame) is not str or not 0 < len(frame) <= 40:
        raise AckError("bad_frame")
    if game is not None and (type(game) is not int or not 1 <= game <= 2**62):
        raise AckError("bad_game")
    if type(raw_balls) is not list or len(raw_balls) > MAX_BALLS:
        raise AckError("bad_balls")
    for ball in raw_balls:
        if type(ball) is not int or not 1 <= ball <= 999:
            raise AckError("bad_balls")
    if stream is not None and (type(stream) is not str or not 0 < len(stream) <= 80):
        raise AckError("bad_stream")
    return Ack(seq, rendered, digest_, frame, game, tuple(raw_balls), stream)
