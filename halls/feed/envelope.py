"""A feed message's envelope, its canonical bytes and its signature (pure: no Django).

An installation numbers its feed messages 1, 2, 3... in the order their facts committed (one sequence per
installation), and signs each with its Ed25519 key (the key its anchors are signed with: its public half is
what the regulator's node registers for it). The node accepts them exactly once, in order.

**Canonical bytes** (`canonical`): the JSON text of a value with its object keys sorted, no whitespace
(separators "," and ":"), non-ASCII characters written as themselves, no NaN or infinity, in UTF-8. Money is
written as a decimal string ("12.50"), never a JSON number, so that every reader gets the cents exact.

**Signed bytes** (`signed_bytes`): the canonical bytes of the object
``{"format": "hall-feed/v1", "installation": ..., "sequence": ..., "kind": ..., "at": ..., "payload": ...}``;
the signature is Ed25519 over them, written as 128 lower-case hex digits. A message on the wire is that object
with "signature" added (`to_json`, `from_json`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

FORMAT = "hall-feed/v1"
_SIGNATURE = re.compile(r"[0-9a-f]{128}")
_FIELDS = ("format", "installation", "sequence", "kind", "at", "payload", "signature")


class EnvelopeError(ValueError):
    """A message that is not a feed envelope: `reason` is a code (the node records it), str() says what."""

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        super().__init__(detail)


@dataclass(frozen=True)
class Envelope:
    installation: str  # the sending installation's id (halls.services.installation.identity)
    sequence: int  # 1, 2, 3... per installation, in commit order
    kind: str  # a halls.feed.kinds.FeedKind value
    at: str  # when the fact happened, ISO 8601 with its UTC offset
    payload: Mapping[str, Any] = field(default_factory=dict)
    signature: str = ""  # 128 hex digits, once signed


def canonical(value: object) -> bytes:
    """The canonical JSON bytes of `value` (see the module's docstring)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def signed_bytes(envelope: Envelope) -> bytes:
    """What the signature covers: every field of the envelope but the signature, canonically."""
    return canonical(
        {
            "format": FORMAT,
            "installation": envelope.installation,
            "sequence": envelope.sequence,
            "kind": envelope.kind,
            "at": envelope.at,
            "payload": envelope.payload,
        }
    )


def sign(envelope: Envelope, key: Ed25519PrivateKey) -> Envelope:
    """The envelope with its signature."""
    return replace(envelope, signature=key.sign(signed_bytes(envelope)).hex())


def signature_holds(envelope: Envelope, public_key: Ed25519PublicKey) -> bool:
    """Whether the envelope's signature is the installation's over its signed bytes."""
    if not _SIGNATURE.fullmatch(envelope.signature):
        return False
    try:
        public_key.verify(bytes.fromhex(envelope.signature), signed_bytes(envelope))
    except InvalidSignature:
        return False
    return True


def to_json(envelope: Envelope) -> dict[str, Any]:
    """The message as sent: the signed object with its signature."""
    return {
        "format": FORMAT,
        "installation": envelope.installation,
        "sequence": envelope.sequence,
        "kind": envelope.kind,
        "at": envelope.at,
        "payload": dict(envelope.payload),
        "signature": envelope.signature,
    }


def from_json(data: object) -> Envelope:
    """A message read back; EnvelopeError naming what is wrong with its shape (the schema: the rest)."""
    if not isinstance(data, Mapping):
        raise EnvelopeError("shape", "a feed message is a JSON object")
    if data.get("format") != FORMAT:
        raise EnvelopeError("format", f"a feed message's format is {FORMAT!r}, not {data.get('format')!r}")
    extra = sorted(set(data) - set(_FIELDS))
    if extra:
        raise EnvelopeError("shape", f"a feed message has no field {extra[0]!r}")
    installation, sequence, kind, at = (data.get(k) for k in ("installation", "sequence", "kind", "at"))
    payload, signature = data.get("payload"), data.get("signature", "")
    if not isinstance(installation, str) or not installation:
        raise EnvelopeError("shape", "the installation is a non-empty string")
    if type(sequence) is not int or sequence < 1:
        raise EnvelopeError("shape", "the sequence is a whole number from 1")
    if not isinstance(kind, str) or not isinstance(at, str):
        raise EnvelopeError("shape", "the kind and the time are strings")
    if not isinstance(payload, Mapping):
        raise EnvelopeError("shape", "the payload is a JSON object")
    if not isinstance(signature, str):
        raise EnvelopeError("shape", "the signature is a string of hex digits")
    return Envelope(installation, sequence, kind, at, payload, signature)
