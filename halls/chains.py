"""The tamper-evident chains, as the verifiers and the anchors see them (plain dataclasses, no Django).

A chain is named by its kind and id: ("venue", id) is a venue's audit chain, ("pool", id) a pool's chain of
ledger seals. Apps above halls register their chains' heads and verifiers in ``halls.hooks``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Anchor:
    """A chain's head as published outside the database: its length and last hash, and when."""

    seq: int
    hash: str
    at: str = ""


@dataclass(frozen=True)
class ChainHead:
    """A chain's head as the database has it now (what an anchor records)."""

    kind: str
    id: int
    seq: int
    hash: str


@dataclass(frozen=True)
class ChainReport:
    """One chain's verification: ``first_bad_seq`` is the position (from 1) of the first bad link."""

    kind: str
    id: int
    name: str  # the venue's name, the pool's code
    ok: bool
    length: int
    first_bad_seq: int | None = None
    first_bad_id: int | None = None
    reason: str = ""
    legacy: int = 0  # links from before the chain was keyed (plain SHA-256)
    anchored_seq: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
