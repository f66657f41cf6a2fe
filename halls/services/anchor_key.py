"""The installation's Ed25519 anchor key: it signs every anchor (halls.services.anchors), and its public half
is published (/.well-known/hall-anchor-key, the inspector's pages) so that anyone can verify the anchors
(scripts/verify_anchors.py, halls.anchor_lines).

The private key is a PEM file outside the database (HALL_ANCHOR_SIGNING_KEY_FILE, mode 0600), made the
first time it is needed (the demo, the tests; production makes it once, on a disk of its own, and keeps a
copy: a lost key makes new anchors under a new key id, and the old ones no longer verify here).
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)
from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register

from halls import anchor_lines
from halls.services import installation


def _made_or_read(path: Path) -> Ed25519PrivateKey:
    """Read the key, making it the first time (exclusively: two processes agree on one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for _ in range(50):  # another process made it a moment ago and may still be writing it
            data = path.read_bytes()
            if data.strip().endswith(b"-----"):
                key = load_pem_private_key(data, password=None)
                if not isinstance(key, Ed25519PrivateKey):
                    raise RuntimeError(f"{path} does not hold an Ed25519 private key.") from None
                return key
            time.sleep(0.01)
        raise RuntimeError(f"The anchor key file {path} is empty or cut short.") from None
    key = Ed25519PrivateKey.generate()
    with os.fdopen(fd, "wb") as out:
        out.write(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    return key


@lru_cache(maxsize=4)
def _key(path: str) -> Ed25519PrivateKey:
    return _made_or_read(Path(path))


def signing_key() -> Ed25519PrivateKey:
    return _key(settings.HALL_ANCHOR_SIGNING_KEY_FILE)


def document() -> dict[str, Any]:
    """The public key as published: its hex, its id and the installation's id."""
    return anchor_lines.key_document(signing_key().public_key(), installation.identity())


@register(Tags.security, deploy=True)
def check_anchor_key(**kwargs: object) -> list[CheckMessage]:
    """Production keeps the anchor key away from the code's folder (a disk of its own, backed up)."""
    default = Path(settings.BASE_DIR) / "var"
    if settings.HALL_EMBEDDED or not Path(settings.HALL_ANCHOR_SIGNING_KEY_FILE).resolve().is_relative_to(
        default.resolve()
    ):
        return []
    return [
        Warning(
            "HALL_ANCHOR_SIGNING_KEY_FILE is in the code's var/ folder.",
            hint="Point it at a file on a disk of its own, backed up (the anchors' signing key).",
            id="halls.W102",
        )
    ]
