"""A prize program's terms as one canonical text and its digest: what the hall's posted prize table prints,
what the second person approves and what the screens show (pure, no Django).

The terms are the room, the program's code, type and name, its parameters exactly as stored and the date it
takes effect (None: from its approval). Their digest is SHA-256 of the canonical JSON (keys sorted, no
spaces, UTF-8), so anyone can recompute it from the public page's terms; people read it in groups of four
("3F2A 9C10 …") and the screens show its short form, the first two groups.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

SHORT_GROUPS = 2  # the screens' short form: 8 hex digits, 1 in 4,294,967,296 to match by chance
GROUP = 4
HEX = re.compile(r"[0-9a-f]{64}")


def program_terms(
    *,
    room: int,
    code: str,
    program_type: str,
    name: str,
    params: Mapping[str, Any],
    effective_from: str | None,
) -> dict[str, Any]:
    """The terms of one version of a program, in the one shape every digest is taken of."""
    return {
        "room": room,
        "code": code,
        "program_type": program_type,
        "name": name,
        "params": dict(params),
        "effective_from": effective_from,
    }


def canonical(terms: Mapping[str, Any]) -> bytes:
    """The canonical text of the terms: JSON, keys sorted, no spaces, UTF-8."""
    return json.dumps(terms, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(terms: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical terms, 64 lower-case hex digits."""
    return hashlib.sha256(canonical(terms)).hexdigest()


def grouped(value: str) -> str:
    """A digest as people read and type it: upper-case groups of four, "3F2A 9C10 …"."""
    return " ".join(value[i : i + GROUP].upper() for i in range(0, len(value), GROUP))


def short(value: str) -> str:
    """The screens' short form: the first two groups, "3F2A-9C10"."""
    return "-".join(value[i : i + GROUP].upper() for i in range(0, GROUP * SHORT_GROUPS, GROUP))


def typed(text: str) -> str | None:
    """A digest as typed or scanned from the posted sheet (spaces, dashes, any case) in its stored form,
    or None when it is not 64 hex digits."""
    value = re.sub(r"[\s\-]", "", text or "").lower()
    return value if HEX.fullmatch(value) else None
