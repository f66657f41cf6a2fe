"""The wire protocol between a machine's interface board (SMIB) and the gateway. Pure: no Django.

Messages are JSON objects, UTF-8, at most MAX_MESSAGE_BYTES each; an HTTP batch carries at most MAX_BATCH.
Machine -> system (stored messages carry ``seq``, an int >= 1 unique per machine, and optionally ``at``,
the device's ISO-8601 time)::

    {"type": "play", "seq": 7, "game_id": "g-123", "bet": "1.00", "win": "0.00"}
    {"type": "meters", "seq": 8, "coin_in": "..", "coin_out": "..", "jackpots_paid": "..", "credits": "..",
     "games_played": 12}
    {"type": "event", "seq": 9, "kind": "door_open"}
    {"type": "hit", "seq": 10, "level": "Grand", "game_id": "g-124"}
    {"type": "hello", "last_seq": 10, "software_version": "1.2.3"}     (no seq: the resync)
    {"type": "heartbeat"}                                              (no seq)

Amounts are strings of whole cents (never JSON numbers: floats are not money). Unknown extra fields are
ignored (boards may send more than we store). Every refusal is a ProtocolError with a stable code;
`parse` raises nothing else, whatever the input.

System -> machine: an ``ack`` per message (`ack`), ``welcome`` after hello, ``progressive`` broadcasts,
``lock`` / ``unlock`` (built by the services; `lock` and `unlock` here).

The link: a board that hears no ``progressive`` for 5 s locks itself. When it hears them again (or is told
``lock`` ``link_lost`` while it hears them) it says ``hello`` after a random delay drawn uniformly from a
window of 2 s that doubles with each lock-up in a row and each hello left unanswered, up to 32 s, and
plays again after the ``welcome``; reconnections back off the same way (jittered, doubling). A floor that
locked at once thus comes back over seconds, not in one instant: the gateway takes hellos in batches
(machines.consumers) but a thousand in the same millisecond would still queue behind each other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final, Literal

from halls import money

MAX_MESSAGE_BYTES: Final = 4096
MAX_BATCH: Final = 200
MAX_SEQ: Final = 2**63 - 1  # a PostgreSQL bigint
MAX_TEXT: Final = 64

ERROR_CODES: Final = frozenset(
    {
        "malformed_json",
        "too_large",
        "unknown_type",
        "bad_seq",
        "bad_amount",
        "missing_field",
        "bad_field",
        "batch_too_large",
    }
)

EVENT_KINDS: Final = frozenset({"door_open", "door_closed", "power_on", "power_off", "tilt", "hand_pay"})

AckStatus = Literal["accepted", "duplicate", "rejected"]

# Whole cents: 1 to 14 integer digits (a 16-digit meter), at most two decimals, no sign, no exponent.
_AMOUNT = re.compile(r"(?:0|[1-9][0-9]{0,13})(?:\.[0-9]{1,2})?")
_CENT = money.CENT
# A play's bet and win: the contribution service's limit (halls.money.MAX_BET, numeric(14, 2)), so a play
# the protocol takes is never refused downstream.
_MAX_PLAY_AMOUNT = money.MAX_BET


class ProtocolError(Exception):
    """A message the gateway cannot take: `code` is one of ERROR_CODES; `seq` when the message had one."""

    def __init__(self, code: str, message: str, *, seq: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.seq = seq

    def ack(self) -> dict[str, Any]:
        return ack(self.seq, "rejected", self.code, self.message)


@dataclass(frozen=True)
class Play:
    seq: int
    game_id: str
    bet: Decimal
    win: Decimal
    at: datetime | None = None
    type: Literal["play"] = "play"


@dataclass(frozen=True)
class Meters:
    seq: int
    coin_in: Decimal
    coin_out: Decimal
    jackpots_paid: Decimal
    credits: Decimal
    games_played: int
    at: datetime | None = None
    type: Literal["meters"] = "meters"


@dataclass(frozen=True)
class Event:
    seq: int
    kind: str
    at: datetime | None = None
    type: Literal["event"] = "event"


@dataclass(frozen=True)
class Hit:
    seq: int
    level: str
    game_id: str
    at: datetime | None = None
    type: Literal["hit"] = "hit"


@dataclass(frozen=True)
class Hello:
    last_seq: int
    software_version: str
    type: Literal["hello"] = "hello"


@dataclass(frozen=True)
class Heartbeat:
    type: Literal["heartbeat"] = "heartbeat"


Stored = Play | Meters | Event | Hit
Message = Play | Meters | Event | Hit | Hello | Heartbeat


def content(message: Stored) -> tuple[object, ...]:
    """What makes two messages with one seq "the same" (a retry) rather than a reused seq. The device time
    is not part of it: a board may stamp a retry anew."""
    if isinstance(message, Play):
        return ("play", message.game_id, message.bet, message.win)
    if isinstance(message, Meters):
        return (
            "meters",
            message.coin_in,
            message.coin_out,
            message.jackpots_paid,
            message.credits,
            message.games_played,
        )
    if isinstance(message, Event):
        return ("event", message.kind)
    return ("hit", message.level, message.game_id)


# --- parsing ---------------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _decode(data: str | bytes | bytearray) -> object:
    if isinstance(data, str):
        # A str may hold lone surrogates that UTF-8 cannot carry: they are malformed, not too large.
        if len(data) > MAX_MESSAGE_BYTES:
            raise ProtocolError("too_large", f"A message is at most {MAX_MESSAGE_BYTES} bytes.")
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:
            raise ProtocolError("malformed_json", "The message is not valid UTF-8 text.") from None
    elif isinstance(data, bytes | bytearray):
        raw = bytes(data)
    else:
        raise ProtocolError("malformed_json", "A message is JSON text.")
    if len(raw) > MAX_MESSAGE_BYTES:
        raise ProtocolError("too_large", f"A message is at most {MAX_MESSAGE_BYTES} bytes, got {len(raw)}.")
    try:
        text = raw.decode("utf-8")
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ProtocolError("malformed_json", "The message is not valid JSON.") from None


def parse(data: str | bytes | bytearray) -> Message:
    """One message from its JSON text. Raises ProtocolError (and nothing else) on any bad input."""
    return parse_object(_decode(data))


def parse_object(obj: object) -> Message:
    """One message already decoded from JSON (an element of an HTTP batch)."""
    if not isinstance(obj, dict):
        raise ProtocolError("malformed_json", "A message is a JSON object.")
    seq = _seq_of(obj)
    try:
        return _parse(obj, seq)
    except ProtocolError as exc:
        exc.seq = seq
        raise


def parse_batch(obj: object) -> list[Message | ProtocolError]:
    """The ``{"messages": [...]}`` body of an HTTP batch, decoded: each element parsed or its error, in
    order (a bad element is answered alone). The envelope's own faults raise ProtocolError."""
    if not isinstance(obj, dict):
        raise ProtocolError("malformed_json", 'A batch is a JSON object {"messages": [...]}.')
    if "messages" not in obj:
        raise ProtocolError("missing_field", 'A batch needs "messages".')
    messages = obj["messages"]
    if not isinstance(messages, list):
        raise ProtocolError("bad_field", '"messages" is a list.')
    if len(messages) > MAX_BATCH:
        raise ProtocolError("batch_too_large", f"A batch carries at most {MAX_BATCH} messages.")
    parsed: list[Message | ProtocolError] = []
    for element in messages:
        try:
            if _encoded_size(element) > MAX_MESSAGE_BYTES:
                raise ProtocolError(
                    "too_large", f"A message is at most {MAX_MESSAGE_BYTES} bytes.", seq=_seq_of(element)
                )
            parsed.append(parse_object(element))
        except ProtocolError as exc:
            parsed.append(exc)
    return parsed


def _encoded_size(obj: object) -> int:
    try:
        return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except (ValueError, TypeError, RecursionError):
        return MAX_MESSAGE_BYTES + 1


def _seq_of(obj: object) -> int | None:
    """The message's seq when it is a valid one (so even a refusal can name the message it answers)."""
    if isinstance(obj, dict):
        seq = obj.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool) and 1 <= seq <= MAX_SEQ:
            return seq
    return None


def _parse(obj: Mapping[str, object], seq: int | None) -> Message:
    if "type" not in obj:
        raise ProtocolError("missing_field", 'A message needs a "type".')
    kind = obj["type"]
    if kind == "heartbeat":
        return Heartbeat()
    if kind == "hello":
        return Hello(
            last_seq=_int(obj, "last_seq", minimum=0, code="bad_seq"),
            software_version=_text(obj, "software_version"),
        )
    if kind not in ("play", "meters", "event", "hit"):
        raise ProtocolError("unknown_type", f"Unknown message type {_show(kind)}.")
    if "seq" not in obj:
        raise ProtocolError("missing_field", f'A {kind} message needs a "seq".')
    if seq is None:
        raise ProtocolError("bad_seq", f"seq is a whole number from 1 to {MAX_SEQ}.")
    at = _at(obj)
    if kind == "play":
        bet = _amount(obj, "bet", maximum=_MAX_PLAY_AMOUNT)
        if bet <= 0:
            raise ProtocolError("bad_amount", "The bet must be above 0.")
        return Play(
            seq=seq,
            game_id=_text(obj, "game_id"),
            bet=bet,
            win=_amount(obj, "win", maximum=_MAX_PLAY_AMOUNT),
            at=at,
        )
    if kind == "meters":
        return Meters(
            seq=seq,
            coin_in=_amount(obj, "coin_in"),
            coin_out=_amount(obj, "coin_out"),
            jackpots_paid=_amount(obj, "jackpots_paid"),
            credits=_amount(obj, "credits"),
            games_played=_int(obj, "games_played", minimum=0, code="bad_field"),
            at=at,
        )
    if kind == "event":
        event_kind = _text(obj, "kind")
        if event_kind not in EVENT_KINDS:
            raise ProtocolError("bad_field", f"Unknown event kind {_show(event_kind)}.")
        return Event(seq=seq, kind=event_kind, at=at)
    return Hit(seq=seq, level=_text(obj, "level"), game_id=_text(obj, "game_id"), at=at)


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field(obj: Mapping[str, object], name: str) -> object:
    if name not in obj:
        raise ProtocolError("missing_field", f'The message needs "{name}".')
    return obj[name]


def _int(obj: Mapping[str, object], name: str, *, minimum: int, code: str) -> int:
    value = _field(obj, name)
    if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= MAX_SEQ:
        raise ProtocolError(code, f"{name} is a whole number from {minimum} to {MAX_SEQ}.")
    return value


def _text(obj: Mapping[str, object], name: str) -> str:
    value = _field(obj, name)
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > MAX_TEXT
        or not value.isprintable()
        or value != value.strip()
    ):
        raise ProtocolError("bad_field", f"{name} is printable text of 1 to {MAX_TEXT} characters.")
    return value


def _amount(obj: Mapping[str, object], name: str, *, maximum: Decimal | None = None) -> Decimal:
    value = _field(obj, name)
    if not isinstance(value, str) or _AMOUNT.fullmatch(value) is None:
        raise ProtocolError("bad_amount", f'{name} is an amount in whole cents as a string, e.g. "1.00".')
    amount = Decimal(value).quantize(_CENT)
    if maximum is not None and amount > maximum:
        raise ProtocolError("bad_amount", f"{name} is above {maximum}.")
    return amount


def _at(obj: Mapping[str, object]) -> datetime | None:
    value = obj.get("at")
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 40:
        raise ProtocolError("bad_field", "at is an ISO-8601 time.")
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        raise ProtocolError("bad_field", "at is an ISO-8601 time.") from None
    # A board without a time zone keeps UTC (the SMIBs' convention); stored times are always aware.
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


# --- encoding (the simulator, tests, and the replies) ----------------------------------------------------


def _iso(at: datetime | None) -> dict[str, str]:
    return {} if at is None else {"at": at.isoformat()}


def to_dict(message: Message) -> dict[str, Any]:
    """The JSON object of a message (the inverse of parse_object)."""
    if isinstance(message, Play):
        return {
            "type": "play",
            "seq": message.seq,
            "game_id": message.game_id,
            "bet": str(message.bet),
            "win": str(message.win),
            **_iso(message.at),
        }
    if isinstance(message, Meters):
        return {
            "type": "meters",
            "seq": message.seq,
            "coin_in": str(message.coin_in),
            "coin_out": str(message.coin_out),
            "jackpots_paid": str(message.jackpots_paid),
            "credits": str(message.credits),
            "games_played": message.games_played,
            **_iso(message.at),
        }
    if isinstance(message, Event):
        return {"type": "event", "seq": message.seq, "kind": message.kind, **_iso(message.at)}
    if isinstance(message, Hit):
        return {
            "type": "hit",
            "seq": message.seq,
            "level": message.level,
            "game_id": message.game_id,
            **_iso(message.at),
        }
    if isinstance(message, Hello):
        return {"type": "hello", "last_seq": message.last_seq, "software_version": message.software_version}
    return {"type": "heartbeat"}


def encode(payload: Message | Mapping[str, Any]) -> str:
    """Compact JSON text of a message or a reply (encoded once, sent as is)."""
    obj = payload if isinstance(payload, Mapping) else to_dict(payload)
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def ack(
    seq: int | None, status: AckStatus, code: str = "", message: str = "", **extra: Any
) -> dict[str, Any]:
    """The reply to one message: accepted, duplicate (the same seq and content, a no-op) or rejected."""
    return {"type": "ack", "seq": seq, "status": status, "code": code, "message": message, **extra}


def lock(reason: str) -> dict[str, Any]:
    return {"type": "lock", "reason": reason}


def unlock() -> dict[str, Any]:
    return {"type": "unlock"}


def progressive(group: str, levels: Sequence[tuple[str, Decimal]], at_ms: int) -> dict[str, Any]:
    """The broadcast every linked machine hears at least twice a second (also its link heartbeat)."""
    return {
        "type": "progressive",
        "group": group,
        "levels": [{"level": name, "amount": str(amount)} for name, amount in levels],
        "at": at_ms,
    }
