"""Anchor lines signed with the installation's Ed25519 key, and their verification with the public key
alone (pure: no Django; `scripts/verify_anchors.py` imports this module, as the product does).

An anchor is one JSON line: a chain's head published outside the database (halls.services.anchors)::

    {"v": 3, "inst": <installation id>, "kind": "venue" | "pool" | ..., "id": <chain id>,
     "seq": <length>, "hash": <the link's hash, 64 hex>, "at": <ISO time>,
     "alg": "ed25519", "kid": "ed25519:<16 hex>", "sig": <128 hex>}

``sig`` is the Ed25519 signature (RFC 8032) of the line's canonical bytes: every field but ``sig``, as JSON
with sorted keys, separators "," and ":", no spaces, ASCII escapes (Python's ``json.dumps(body,
sort_keys=True, separators=(",", ":"))``), UTF-8. ``kid`` names the key: "ed25519:" and the first 16 hex
digits of the SHA-256 of the 32-byte raw public key. The public key is published as a JSON document
(`key_document`, at /.well-known/hall-anchor-key): {"format": "hall-anchor-key/v1", "alg": "ed25519",
"kid": ..., "key": <64 hex, the raw public key>, "installation": <id>}.

Lines of version 2 (before the Ed25519 key) carry an HMAC under a key the operator holds: the product
verifies them as before, a holder of the public key cannot (`check_line` says so).

An export of chain heads (``manage.py export_chain_heads``) says, per chain, its length and last hash now
and the hash of the link at its latest anchored position: `reaches` tells whether the chain still reaches
its anchor (same hash there), was cut short, or was rewritten.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ALG = "ed25519"
VERSION = 3
KEY_FORMAT = "hall-anchor-key/v1"
HEADS_FORMAT = "hall-chain-heads/v1"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def canonical(line: Mapping[str, Any]) -> bytes:
    """The bytes a line's signature covers: every field but "sig"."""
    body = {k: v for k, v in line.items() if k != "sig"}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    return f"{ALG}:" + hashlib.sha256(raw_public(key)).hexdigest()[:16]


def sign(body: Mapping[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """The line `body` (v, inst, kind, id, seq, hash, at) signed: with "alg", "kid" and "sig"."""
    line = {**body, "alg": ALG, "kid": key_id(key.public_key())}
    return {**line, "sig": key.sign(canonical(line)).hex()}


def key_document(key: Ed25519PublicKey, installation: str) -> dict[str, Any]:
    """What is published of the key (/.well-known/hall-anchor-key)."""
    return {
        "format": KEY_FORMAT,
        "alg": ALG,
        "kid": key_id(key),
        "key": raw_public(key).hex(),
        "installation": installation,
    }


def public_key(text: str) -> Ed25519PublicKey:
    """The public key from its document (JSON) or from its 64 hex digits; ValueError when neither."""
    text = text.strip()
    raw = text
    if text.startswith("{"):
        document = json.loads(text)
        if document.get("alg") != ALG:
            raise ValueError(f"not an Ed25519 key document (alg {document.get('alg')!r})")
        raw = str(document.get("key", ""))
    if not _HEX64.match(raw):
        raise ValueError("an Ed25519 public key is 64 hex digits")
    return Ed25519PublicKey.from_public_bytes(bytes.fromhex(raw))


def check_line(line: Any, key: Ed25519PublicKey, installation: str | None = None) -> str:
    """Why `line` is not an anchor signed by `key` (of `installation`, when given), or ''."""
    if not isinstance(line, dict):
        return "it is not an anchor line"
    if line.get("alg") != ALG:
        alg = line.get("alg")
        return f"it is signed with {alg!r} (made before the Ed25519 key): the public key cannot check it"
    if installation is not None and line.get("inst") != installation:
        return f"it is another installation's anchor ({line.get('inst')!r}, not {installation!r})"
    if line.get("kid") != key_id(key):
        return f"it is signed by another key ({line.get('kid')!r}, not {key_id(key)!r})"
    try:
        key.verify(bytes.fromhex(str(line.get("sig", ""))), canonical(line))
    except (ValueError, InvalidSignature):
        return "its signature does not match (forged or edited)"
    for field, kind in (("kind", str), ("id", int), ("seq", int), ("hash", str)):
        if not isinstance(line.get(field), kind):
            return f"its {field} is missing"
    return ""


def parse_line(raw: str) -> Any:
    """A line of an anchor file as JSON (None when it is not JSON)."""
    try:
        return json.loads(raw)
    except ValueError:
        return None


@dataclass(frozen=True)
class Reach:
    ok: bool
    text: str


def reaches(anchor: Mapping[str, Any], chain: Mapping[str, Any] | None) -> Reach:
    """Whether the chain (an entry of a heads export: seq, hash, links {seq: hash}) reaches its latest
    anchor (seq, hash): as long at least, with the anchored hash at the anchored position."""
    seq, anchored = int(anchor["seq"]), str(anchor["hash"])
    if chain is None:
        return Reach(False, f"anchored at {seq} links, but the export has no such chain (gone)")
    length = int(chain["seq"])
    if length < seq:
        return Reach(False, f"{length} links, but anchored at {seq}: links were removed")
    there = str(chain["hash"]) if length == seq else (chain.get("links") or {}).get(str(seq))
    if there is None:
        return Reach(False, f"{length} links: the export does not give link {seq}, so it cannot be told")
    if there != anchored:
        return Reach(False, f"link {seq} is not the one anchored on {anchor.get('at', '')} (rewritten)")
    grown = f", {length - seq} links since" if length > seq else ""
    return Reach(True, f"reaches its anchor at {seq}{grown}")
