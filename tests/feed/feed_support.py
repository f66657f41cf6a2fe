"""Signed feed messages for the tests of the node's intake and the installation's sender."""

from __future__ import annotations

import secrets
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from halls import anchor_lines
from halls.feed import envelope as env
from halls.regulator.models import Installation
from halls.regulator.services import registry

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
OTHER = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
AT = "2026-12-06T22:00:00+00:00"


def public_hex(key: Ed25519PrivateKey = KEY) -> str:
    return anchor_lines.raw_public(key.public_key()).hex()


def register(uid: str | None = None, *, key: Ed25519PrivateKey = KEY, **more: Any) -> Installation:
    fields: dict[str, Any] = {
        "name": "Bingo Melilla Centro",
        "kind": "venue",
        "licence_number": "ML-B-0001",
        "jurisdiction": "ML",
        "actor": "test",
        **more,
    }
    return registry.register(uid=uid or secrets.token_hex(8), public_key=public_hex(key), **fields)


def message(
    uid: str,
    sequence: int,
    *,
    kind: str = "heartbeat",
    payload: dict[str, Any] | None = None,
    key: Ed25519PrivateKey = KEY,
    at: str = AT,
) -> dict[str, Any]:
    """A signed message, as an installation sends it (a heartbeat saying its previous sequence by default)."""
    body = payload if payload is not None else {"last_sequence": sequence - 1}
    return env.to_json(env.sign(env.Envelope(uid, sequence, kind, at, body), key))


def tampered(wire: dict[str, Any], **payload: Any) -> dict[str, Any]:
    """The message with its payload changed after it was signed."""
    return {**wire, "payload": {**wire["payload"], **payload}}
