"""A draw's seed sealed to the drawing workers' key (no Django): HPKE (RFC 9180), base mode, with
DHKEM(X25519, HKDF-SHA256), HKDF-SHA256 and ChaCha20-Poly1305, as cryptography implements it.

Whoever holds the public key (every web process) can seal a fresh seed; only the holder of the private key
(the workers that draw: a file outside the database) can open one. The sealed bytes are bound to their game
(the HPKE "info" names it), so a sealed seed moved to another game does not open.

Key file: the X25519 private key as 64 hex digits on one line (`new_key_file` writes one, exclusively).
A key's id is the first 16 hex digits of SHA-256 over its raw 32-byte public key.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hpke
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

SUITE = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.CHACHA20_POLY1305)
INFO = b"hall-draw-seed/v1 "


class SealError(ValueError):
    """A sealed seed that does not open: another key, another game, or edited bytes."""


def info(game: str) -> bytes:
    """The HPKE info of a game's sealed seed: it binds the ciphertext to the game."""
    return INFO + game.encode("utf-8")


def public_bytes(key: X25519PublicKey) -> bytes:
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_id(key: X25519PublicKey) -> str:
    return hashlib.sha256(public_bytes(key)).hexdigest()[:16]


def public_from_hex(text: str) -> X25519PublicKey:
    return X25519PublicKey.from_public_bytes(bytes.fromhex(text.strip()))


def seal(seed: bytes, public_key: X25519PublicKey, game: str) -> bytes:
    """The seed sealed to `public_key` for `game` (encapsulated key then ciphertext)."""
    return SUITE.encrypt(seed, public_key, info(game))


def open_sealed(sealed: bytes | memoryview, private_key: X25519PrivateKey, game: str) -> bytes:
    """The seed back, or SealError when the bytes, the key or the game are not the ones it was sealed with."""
    try:
        return SUITE.decrypt(bytes(sealed), private_key, info(game))
    except (InvalidTag, ValueError) as exc:
        raise SealError(f"the sealed seed of {game} does not open with this key") from exc


def read_key_file(path: Path) -> X25519PrivateKey:
    """The private key in `path` (64 hex digits); FileNotFoundError when there is none."""
    for _ in range(50):  # another process may have created it a moment ago and still be writing it
        text = path.read_text().strip()
        if text:
            return X25519PrivateKey.from_private_bytes(bytes.fromhex(text))
        time.sleep(0.01)
    raise SealError(f"the draw seed key file {path} is empty")


def new_key_file(path: Path) -> X25519PrivateKey:
    """Make the key file (mode 0600), unless another process just did: then read theirs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_key_file(path)
    key = X25519PrivateKey.generate()
    with os.fdopen(fd, "w") as out:
        out.write(key.private_bytes_raw().hex() + "\n")
    return key
