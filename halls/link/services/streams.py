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
    """Venue: apply the entries in order, each once, each in its own transaction with the position (a
    handler takes its own locks in the house's order: two entries in one transaction would take a game's,
    a pool's or a cashier's locks after the first entry's audit head). Entries already applied are
    skipped; at the first one past the next expected, it stops (gap=True) and the caller fetches the
    missing ones from the central. A handler that fails stops the call: that entry and the ones after it
    stay unapplied (the ones before it are kept) and the error reaches the caller."""
    applied = 0
    gap = False
    position = 0
    for entry in sorted(entries, key=lambda e: e.sequence):
        with transaction.atomic():
            held = lock_stream_position(stream)
            position = held.applied_sequence
            if entry.sequence <= position:
                continue
            if entry.sequence != position + 1:
                gap = True
                break
            handler = registry.central_handler(entry.kind)
            if handler is not None:  # a kind this installation has no use for is still counted as read
                handler(entry)
            held.applied_sequence = position = entry.sequence
            held.save(update_fields=["applied_sequence", "updated_at"])
            applied += 1
    if not applied and not gap:
        position = _position(stream)
    return Applied(stream, position, applied, gap)


def _position(stream: str) -> int:
    """How far this installation has applied `stream` (0 before its first entry)."""
    from halls.link.models import StreamPosition

    found = StreamPosition.objects.filter(stream=stream).values_list("applied_sequence", flat=True).first()
    return int(found or 0)
