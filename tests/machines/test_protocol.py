"""The wire protocol (machines/protocol.py, pure): parsing, validation codes, size limits, round-trips.
Property: `parse` raises nothing but ProtocolError, whatever it is given."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from machines import protocol
from machines.protocol import ProtocolError

D = Decimal


def code_of(data: Any) -> str:
    with pytest.raises(ProtocolError) as info:
        protocol.parse(data if isinstance(data, str | bytes) else json.dumps(data))
    assert info.value.code in protocol.ERROR_CODES
    return info.value.code


def test_each_message_type_parses() -> None:
    assert protocol.parse(
        '{"type":"play","seq":7,"game_id":"g-123","bet":"1.00","win":"0.00"}'
    ) == protocol.Play(seq=7, game_id="g-123", bet=D("1.00"), win=D("0.00"))
    meters = protocol.parse(
        json.dumps(
            {
                "type": "meters",
                "seq": 8,
                "coin_in": "120.40",
                "coin_out": "80",
                "jackpots_paid": "0.00",
                "credits": "3.5",
                "games_played": 602,
                "at": "2026-03-01T10:00:00+01:00",
            }
        )
    )
    assert isinstance(meters, protocol.Meters)
    assert (meters.coin_in, meters.coin_out, meters.credits, meters.games_played) == (
        D("120.40"),
        D("80.00"),
        D("3.50"),
        602,
    )
    assert meters.at is not None and meters.at.utcoffset() is not None
    assert protocol.parse(b'{"type":"event","seq":9,"kind":"door_open"}') == protocol.Event(
        seq=9, kind="door_open"
    )
    assert protocol.parse('{"type":"hit","seq":10,"level":"Grand","game_id":"g-124"}') == protocol.Hit(
        seq=10, level="Grand", game_id="g-124"
    )
    assert protocol.parse('{"type":"hello","last_seq":10,"software_version":"4.1.0"}') == protocol.Hello(
        last_seq=10, software_version="4.1.0"
    )
    assert protocol.parse('{"type":"heartbeat"}') == protocol.Heartbeat()


def test_a_naive_device_time_is_taken_as_utc_and_extra_fields_are_ignored() -> None:
    message = protocol.parse('{"type":"event","seq":1,"kind":"tilt","at":"2026-03-01T10:00:00","board":"x"}')
    assert isinstance(message, protocol.Event)
    assert message.at == datetime(2026, 3, 1, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ("{not json", "malformed_json"),
        ("[1, 2]", "malformed_json"),
        ('"play"', "malformed_json"),
        (b"\xff\xfe{}", "malformed_json"),
        ('{"type":"play","seq":1,"game_id":"g","bet":NaN,"win":"0"}', "malformed_json"),
        ("[" * 3000 + "]" * 3000, "too_large"),
        ("[" * 2000 + "]" * 2000, "malformed_json"),
        ({"seq": 1}, "missing_field"),
        ({"type": "jackpot", "seq": 1}, "unknown_type"),
        ({"type": 7}, "unknown_type"),
        ({"type": "play", "game_id": "g", "bet": "1.00", "win": "0.00"}, "missing_field"),
        ({"type": "play", "seq": 0, "game_id": "g", "bet": "1.00", "win": "0.00"}, "bad_seq"),
        ({"type": "play", "seq": -3, "game_id": "g", "bet": "1.00", "win": "0.00"}, "bad_seq"),
        ({"type": "play", "seq": "4", "game_id": "g", "bet": "1.00", "win": "0.00"}, "bad_seq"),
        ({"type": "play", "seq": True, "game_id": "g", "bet": "1.00", "win": "0.00"}, "bad_seq"),
        ({"type": "play", "seq": 1.0, "game_id": "g", "bet": "1.00", "win": "0.00"}, "bad_seq"),
        ({"type": "play", "seq": 2**63, "game_id": "g", "bet": "1.00", "win": "0.00"}, "bad_seq"),
        ({"type": "play", "seq": 1, "game_id": "g", "bet": 1.0, "win": "0.00"}, "bad_amount"),
        ({"type": "play", "seq": 1, "game_id": "g", "bet": "1.005", "win": "0.00"}, "bad_amount"),
        ({"type": "play", "seq": 1, "game_id": "g", "bet": "0.00", "win": "0.00"}, "bad_amount"),
        ({"type": "play", "seq": 1, "game_id": "g", "bet": "-1.00", "win": "0.00"}, "bad_amount"),
        ({"type": "play", "seq": 1, "game_id": "g", "bet": "1e3", "win": "0.00"}, "bad_amount"),
        ({"type": "play", "seq": 1, "game_id": "g", "bet": "1.00", "win": "-0.01"}, "bad_amount"),
        ({"type": "play", "seq": 1, "game_id": "g", "bet": "1.00"}, "missing_field"),
        ({"type": "play", "seq": 1, "game_id": "", "bet": "1.00", "win": "0"}, "bad_field"),
        ({"type": "play", "seq": 1, "game_id": "g" * 65, "bet": "1.00", "win": "0"}, "bad_field"),
        ({"type": "play", "seq": 1, "game_id": "g\n1", "bet": "1.00", "win": "0"}, "bad_field"),
        (
            {"type": "play", "seq": 1, "game_id": "g", "bet": "1.00", "win": "0", "at": "yesterday"},
            "bad_field",
        ),
        ({"type": "event", "seq": 1, "kind": "explosion"}, "bad_field"),
        (
            {
                "type": "meters",
                "seq": 1,
                "coin_in": "1",
                "coin_out": "1",
                "jackpots_paid": "0",
                "credits": "0",
                "games_played": -1,
            },
            "bad_field",
        ),
        (
            {
                "type": "meters",
                "seq": 1,
                "coin_in": "1",
                "coin_out": "1",
                "jackpots_paid": "0",
                "credits": "0",
            },
            "missing_field",
        ),
        ({"type": "hit", "seq": 1, "level": 3, "game_id": "g"}, "bad_field"),
        ({"type": "hello", "last_seq": -1, "software_version": "1"}, "bad_seq"),
        ({"type": "hello", "last_seq": 0}, "missing_field"),
    ],
)
def test_refusals_carry_their_code(data: Any, code: str) -> None:
    assert code_of(data) == code


def test_size_limit_is_in_utf8_bytes() -> None:
    base = {"type": "event", "seq": 1, "kind": "tilt", "pad": ""}
    room = protocol.MAX_MESSAGE_BYTES - len(json.dumps(base, separators=(",", ":")).encode())
    fits = json.dumps({**base, "pad": "x" * room}, separators=(",", ":"))
    assert len(fits.encode()) == protocol.MAX_MESSAGE_BYTES
    assert isinstance(protocol.parse(fits), protocol.Event)
    assert code_of(json.dumps({**base, "pad": "x" * (room + 1)}, separators=(",", ":"))) == "too_large"
    # Fewer characters than the limit, more bytes: "é" is two bytes in UTF-8.
    wide = json.dumps({**base, "pad": "é" * (room // 2 + 1)}, separators=(",", ":"), ensure_ascii=False)
    assert len(wide) < protocol.MAX_MESSAGE_BYTES < len(wide.encode())
    assert code_of(wide) == "too_large"


def test_a_refusal_names_the_seq_it_answers() -> None:
    with pytest.raises(ProtocolError) as info:
        protocol.parse('{"type":"play","seq":12,"game_id":"g","bet":"abc","win":"0"}')
    assert info.value.seq == 12
    assert info.value.ack() == {
        "type": "ack",
        "seq": 12,
        "status": "rejected",
        "code": "bad_amount",
        "message": info.value.message,
    }


def test_batches() -> None:
    good = {"type": "play", "seq": 1, "game_id": "g", "bet": "1.00", "win": "0.00"}
    parsed = protocol.parse_batch({"messages": [good, {"type": "nope", "seq": 2}, {"type": "heartbeat"}]})
    assert isinstance(parsed[0], protocol.Play)
    assert isinstance(parsed[1], ProtocolError) and parsed[1].code == "unknown_type" and parsed[1].seq == 2
    assert parsed[2] == protocol.Heartbeat()
    with pytest.raises(ProtocolError) as info:
        protocol.parse_batch({"messages": [good] * (protocol.MAX_BATCH + 1)})
    assert info.value.code == "batch_too_large"
    for envelope, code in (([], "malformed_json"), ({}, "missing_field"), ({"messages": {}}, "bad_field")):
        with pytest.raises(ProtocolError) as info:
            protocol.parse_batch(envelope)
        assert info.value.code == code
    big = {**good, "pad": "x" * protocol.MAX_MESSAGE_BYTES}
    (only,) = protocol.parse_batch({"messages": [big]})
    assert isinstance(only, ProtocolError) and only.code == "too_large" and only.seq == 1


# --- properties ------------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
field_names = st.sampled_from(
    [
        "type",
        "seq",
        "game_id",
        "bet",
        "win",
        "coin_in",
        "coin_out",
        "jackpots_paid",
        "credits",
        "games_played",
        "kind",
        "level",
        "last_seq",
        "software_version",
        "at",
    ]
)
field_values = st.one_of(
    json_values,
    st.sampled_from(
        [
            "play",
            "meters",
            "event",
            "hit",
            "hello",
            "heartbeat",
            "door_open",
            "1.00",
            "0",
            "-1",
            "1.001",
            "2026-01-01T00:00:00Z",
            "",
        ]
    ),
    st.integers(min_value=-5, max_value=2**64),
)
message_like = st.dictionaries(field_names, field_values, max_size=10)


def _parse_or_error(data: str | bytes) -> None:
    error: ProtocolError | None = None
    try:
        protocol.parse(data)
    except ProtocolError as exc:
        error = exc
    if error is not None:
        assert error.code in protocol.ERROR_CODES
        assert error.seq is None or error.seq >= 1


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=5000))
def test_parse_arbitrary_bytes_raises_only_protocol_errors(data: bytes) -> None:
    _parse_or_error(data)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300))
def test_parse_arbitrary_text_raises_only_protocol_errors(data: str) -> None:
    _parse_or_error(data)


@settings(max_examples=600, deadline=None)
@given(message_like)
def test_parse_message_like_objects_raises_only_protocol_errors(obj: dict[str, Any]) -> None:
    _parse_or_error(json.dumps(obj))
    try:
        protocol.parse_batch({"messages": [obj, obj]})
    except ProtocolError as exc:  # pragma: no cover - two elements never fault the envelope
        raise AssertionError(exc.code) from exc


cents = st.decimals(min_value=0, max_value=D("99999999.99"), places=2)
texts = st.text(
    alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "S")),
    min_size=1,
    max_size=protocol.MAX_TEXT,
).filter(lambda s: s == s.strip() and s.isprintable())
seqs = st.integers(min_value=1, max_value=protocol.MAX_SEQ)
times = st.none() | st.datetimes(timezones=st.just(UTC))

messages = st.one_of(
    st.builds(protocol.Play, seq=seqs, game_id=texts, bet=cents.filter(lambda d: d > 0), win=cents, at=times),
    st.builds(
        protocol.Meters,
        seq=seqs,
        coin_in=cents,
        coin_out=cents,
        jackpots_paid=cents,
        credits=cents,
        games_played=st.integers(min_value=0, max_value=protocol.MAX_SEQ),
        at=times,
    ),
    st.builds(protocol.Event, seq=seqs, kind=st.sampled_from(sorted(protocol.EVENT_KINDS)), at=times),
    st.builds(protocol.Hit, seq=seqs, level=texts, game_id=texts, at=times),
    st.builds(
        protocol.Hello, last_seq=st.integers(min_value=0, max_value=protocol.MAX_SEQ), software_version=texts
    ),
    st.just(protocol.Heartbeat()),
)


@settings(max_examples=500, deadline=None)
@given(messages)
def test_encode_then_parse_round_trips(message: protocol.Message) -> None:
    text = protocol.encode(message)
    assert protocol.parse(text) == message
    assert protocol.parse(text.encode()) == message
    assert protocol.parse_object(json.loads(text)) == message
    assert protocol.to_dict(protocol.parse(text)) == json.loads(text)


@settings(max_examples=200, deadline=None)
@given(messages, messages)
def test_content_tells_a_retry_from_a_reused_seq(a: protocol.Message, b: protocol.Message) -> None:
    if isinstance(a, protocol.Hello | protocol.Heartbeat) or isinstance(
        b, protocol.Hello | protocol.Heartbeat
    ):
        return
    same = protocol.content(a) == protocol.content(b)
    stripped_a = {k: v for k, v in protocol.to_dict(a).items() if k not in ("seq", "at")}
    stripped_b = {k: v for k, v in protocol.to_dict(b).items() if k not in ("seq", "at")}
    assert same == (stripped_a == stripped_b)
