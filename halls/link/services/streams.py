"""The central's numbered streams: appended at the central, kept for replay, applied in order by venues."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from halls import events
from halls.link import push, registry
from halls.link.kinds import LinkKind
from halls.link.models import StreamEntry
from halls.link.services.locks import lock_stream_position


def append(*, stream: str, kind: LinkKind, payload: dict[str, Any]) -> StreamEntry:
    """Central: add one entry to `stream`, numbered next, inside the transaction of the decision it
    carries; pushed to the venues' sockets after commit (halls.link.push)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("streams.append must run inside the transaction of the decision it carries")
    sequence = events.next_seq(f"link.stream.{stream}")
    entry = StreamEntry.objects.create(stream=stream, sequence=sequence, kind=str(kind), payload=payload)
    transaction.on_commit(lambda: push.publish_entry(stream, sequence, str(kind), payload))
    return entry


def head(*, stream: str) -> int:
    """Central: the last sequence of `stream` (0 before its first entry)."""
    return events.current_seq(f"link.stream.{stream}")


def after(*, stream: str, sequence: int, limit: int = 500) -> QuerySet[StreamEntry]:
    """Central: the entries of `stream` past `sequence`, in order (a venue's catch-up)."""
    return StreamEntry.objects.filter(stream=stream, sequence__gt=sequence).order_by("sequence")[:limit]


@dataclass(frozen=True)
class Applied:
    stream: str
    position: int  # the last entry applied, after this call
    applied: int  # entries applied by this call
    gap: bool  # an entry past the next one was seen: catch up from `position`


def apply(*, stream: str, entries: Iterable[registry.CentralEntry]) -> Applied:
    """Venue: apply the entries in order, each once, in one transaction with the position. Entries already
    applied are skipped; at the first one past the next expected, it stops (gap=True) and the caller
    fetches the missing ones from the central."""
    applied = 0
    gap = False
    with transaction.atomic():
        position = lock_stream_position(stream)
        for entry in sorted(entries, key=lambda e: e.sequence):
            if entry.sequence <= position.applied_sequence:
                continue
            if entry.sequence != position.applied_sequence + 1:
                gap = True
                break
            handler = registry.central_handler(entry.kind)
            if handler is not None:  # a kind this installation has no use for is still counted as read
                handler(entry)
            position.applied_sequence = entry.sequence
            applied += 1
        position.save(update_fields=["applied_sequence", "updated_at"])
    return Applied(stream, position.applied_sequence, applied, gap)
