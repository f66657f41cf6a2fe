"""The feed's envelope (halls.feed.envelope) and schemas (halls.feed.schema): pure, no database."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from halls.feed import envelope as env
from halls.feed import schema
from halls.feed.kinds import FeedKind

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
OTHER = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
envelopes = st.builds(
    env.Envelope,
    installation=st.text("0123456789abcdef", min_size=16, max_size=16),
    sequence=st.integers(1, 2**40),
    kind=st.sampled_from([k.value for k in FeedKind]),
    at=st.just("2026-12-06T22:00:00+00:00"),
    payload=st.dictionaries(st.text(max_size=8), json_values, max_size=5),
)


@settings(max_examples=80, deadline=None)
@given(envelopes)
def test_a_signed_message_reads_back_and_verifies_and_any_change_breaks_it(message: env.Envelope) -> None:
    signed = env.sign(message, KEY)
    wire = json.loads(json.dumps(env.to_json(signed)))
    back = env.from_json(wire)
    assert back == signed and env.signature_holds(back, KEY.public_key())
    assert not env.signature_holds(back, OTHER.public_key())  # another installation's key
    moved = env.from_json({**wire, "sequence": wire["sequence"] + 1})
    assert not env.signature_holds(moved, KEY.public_key())
    changed = env.from_json({**wire, "payload": {**wire["payload"], "extra": 1}})
    assert not env.signature_holds(changed, KEY.public_key())


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6))
def test_the_canonical_bytes_do_not_depend_on_key_order(value: dict[str, object]) -> None:
    reordered = dict(reversed(list(value.items())))
    assert env.canonical(value) == env.canonical(reordered)
    assert json.loads(env.canonical(value)) == value


def test_the_canonical_bytes_are_fixed() -> None:
    assert env.canonical({"b": "ñ", "a": [1, "12.50"]}) == '{"a":[1,"12.50"],"b":"ñ"}'.encode()
    with pytest.raises(ValueError, match="JSON compliant"):
        env.canonical({"x": float("nan")})


GOOD = {"format": "hall-feed/v1", "installation": "a", "sequence": 1, "kind": "k", "at": "t", "payload": {}}


@pytest.mark.parametrize(
    ("data", "reason", "says"),
    [
        ([], "shape", "JSON object"),
        ({"format": "hall-feed/v0"}, "format", "hall-feed/v1"),
        ({**GOOD, "installation": ""}, "shape", "installation"),
        ({**GOOD, "sequence": 0}, "shape", "sequence"),
        ({**GOOD, "sequence": True}, "shape", "sequence"),
        ({**GOOD, "payload": []}, "shape", "payload"),
        ({**GOOD, "x": 1}, "shape", "'x'"),
    ],
)
def test_what_is_not_an_envelope_is_named(data: object, reason: str, says: str) -> None:
    with pytest.raises(env.EnvelopeError) as refused:
        env.from_json(data)
    assert refused.value.reason == reason and says in str(refused.value)


def test_a_bad_signature_text_never_verifies() -> None:
    message = env.Envelope(
        "0123456789abcdef", 1, "heartbeat", "2026-12-06T22:00:00+00:00", {"last_sequence": 0}
    )
    assert not env.signature_holds(message, KEY.public_key())  # unsigned
    assert not env.signature_holds(
        env.Envelope(**{**message.__dict__, "signature": "zz" * 64}), KEY.public_key()
    )


def test_the_schemas_check_the_envelope_and_the_payload() -> None:
    message = env.to_json(
        env.sign(
            env.Envelope(
                "0123456789abcdef", 7, "heartbeat", "2026-12-06T22:00:00+00:00", {"last_sequence": 6}
            ),
            KEY,
        )
    )
    schema.validate(message)
    with pytest.raises(schema.SchemaError) as refused:
        schema.validate({**message, "payload": {"last_sequence": -1}})
    assert refused.value.where == "$.last_sequence"
    with pytest.raises(schema.SchemaError) as refused:
        schema.validate({**message, "kind": "jackpot.won"})
    assert refused.value.where == "$.kind" and "not a kind" in str(refused.value)
    with pytest.raises(schema.SchemaError) as refused:
        schema.validate({**message, "installation": "NOT-HEX"})
    assert refused.value.where == "$.installation"


def test_every_schema_on_disk_is_a_valid_schema_of_a_known_kind() -> None:
    names = {path.stem for path in schema.FOLDER.glob("*.json")}
    assert "envelope" in names
    for name in names - {"envelope"}:
        assert name in {k.value for k in FeedKind}, name
        schema._validator(name)  # check_schema raises for a schema that is not one
