"""Emitting a feed message with the fact it reports: the MINIMAL version of the contract's
`halls.feed.services.emit.emit` (feedfacts' stand-in; the transport's own, feedwire's, replaces it at merge
with the same name and signature).

What this one does: refuses to run outside the fact's transaction (RuntimeError), does nothing when the feed
is off for the venue's jurisdiction (a central's own messages: HALL_FEED_ENABLED), validates the payload
against its kind's schema (SchemaError: a bug, raised before anything is written), numbers the message in
the installation's one sequence (halls.events' cursor "feed": its row locked till commit, so numbers follow
commit order, and its rank is the last lock a transaction takes, halls.locks.Rank.STREAM: a fact's message
is written after its audit entries, as the link's outbox messages are) and records it when the transaction
commits, in this process's memory (`written`), where the tests read it. It writes no outbox, sends nothing.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from halls import events
from halls.feed.kinds import FeedKind
from halls.feed.schema import validate_payload
from halls.feed.services import facts


@dataclass(frozen=True)
class Written:
    sequence: int
    kind: str
    venue_id: int | None
    at: datetime
    payload: dict[str, Any]


SEQUENCE = "feed"  # the installation's one sequence of feed messages (a halls.events cursor)
_lock = threading.Lock()
_written: list[Written] = []


def emit(
    kind: FeedKind, payload: dict[str, Any], *, venue_id: int | None, at: datetime | None = None
) -> None:
    """Owe the regulator `payload` as a message of `kind`, if and only if the caller's transaction commits."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("feed emit must run inside the transaction of the fact it reports")
    if not facts.feed_on(venue_id):
        return
    validate_payload(str(kind), payload)
    when = at or timezone.now()
    sequence = events.next_seq(SEQUENCE)

    def write() -> None:
        with _lock:
            _written.append(Written(sequence, str(kind), venue_id, when, payload))

    transaction.on_commit(write)


def written() -> list[Written]:
    """What was emitted and committed in this process, in order (the tests' reading)."""
    with _lock:
        return list(_written)


def clear() -> None:
    with _lock:
        _written.clear()
