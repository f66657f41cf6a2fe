"""The keys of the audit chain and of its anchors: HMAC-SHA256 keys that never live in the database, so
whoever can write the database can edit an entry but not recompute the chain after it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register

LEGACY_ALG = "sha256"  # entries written before the chain was keyed: plain SHA-256, verifiable, forgeable
ALG_PREFIX = "hmac-sha256:"


@dataclass(frozen=True)
class Keyring:
    current: bytes
    alg: str  # what entries signed with ``current`` record
    by_alg: dict[str, bytes]  # every key this installation holds, current and old
    from_file: bool

    def anchor_key(self, alg: str) -> bytes | None:
        """A key of its own for the anchors (derived), so an anchor line can never pass for an entry."""
        key = self.by_alg.get(alg)
        return None if key is None else hmac.new(key, b"hall-audit-anchor", hashlib.sha256).digest()


def alg_of(key: bytes) -> str:
    """What an entry records of the key that signed it: an id derived from the key, not the key, so a rotated
    key keeps verifying what it signed while listed in ``HALL_AUDIT_OLD_KEYS``."""
    return ALG_PREFIX + hmac.new(key, b"hall-audit-key-id", hashlib.sha256).hexdigest()[:12]


def _file_key(path: Path) -> bytes:
    """Read the per-install key, making it the first time (exclusively: two processes agree on one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for _ in range(50):  # another process made it a moment ago and may still be writing it
            text = path.read_text().strip()
            if text:
                return text.encode()
            time.sleep(0.01)
        raise RuntimeError(f"The audit key file {path} is empty.") from None
    key = secrets.token_hex(32)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")
    return key.encode()


@lru_cache(maxsize=4)
def _keyring(key: str, path: str, old: tuple[str, ...]) -> Keyring:
    # Without HALL_AUDIT_KEY, a per-install key in HALL_AUDIT_KEY_FILE (the embedded demo's var/audit.key):
    # out of the database but on its host, so production sets its own (check_audit_key below).
    current = key.encode() if key else _file_key(Path(path))
    by_alg = {alg_of(k.encode()): k.encode() for k in old if k}
    by_alg[alg_of(current)] = current
    return Keyring(current=current, alg=alg_of(current), by_alg=by_alg, from_file=not key)


def keyring() -> Keyring:
    return _keyring(
        settings.HALL_AUDIT_KEY, settings.HALL_AUDIT_KEY_FILE, tuple(settings.HALL_AUDIT_OLD_KEYS)
    )


@register(Tags.security, deploy=True)
def check_audit_key(**kwargs: object) -> list[CheckMessage]:
    """Production must set HALL_AUDIT_KEY: a key file beside the code is only fit for the demo."""
    if settings.HALL_AUDIT_KEY or settings.HALL_EMBEDDED:
        return []
    return [
        Error(
            "HALL_AUDIT_KEY is not set: the audit chain is keyed with a file on this host.",
            hint="Set HALL_AUDIT_KEY (a long random secret kept outside the database) in the environment.",
            id="halls.E101",
        )
    ]
