"""One installation playing both roles (tests, and the embedded demo's single process): the venue's
outbox delivered straight to the central's inbox, the central's streams applied straight to the venue.
The real link (a venue installation and the central apart) sends the same messages over HTTPS and a
WebSocket; both go through `inbox.accept` and `streams.apply`, so what is tested here is what runs there."""

from __future__ import annotations

from halls.link import registry
from halls.link.kinds import LinkKind
from halls.link.services import inbox, outbox, streams
from halls.link.services.inbox import Accepted


def deliver(*, venue_id: int, limit: int = 1000) -> list[Accepted]:
    """Send the venue's pending messages to the central (this same database), in order, acknowledging
    each accepted one; stops at the first one the central will not accept (out of order)."""
    answers = []
    for message in outbox.pending(venue_id=venue_id, limit=limit):
        answer = inbox.accept(
            venue_id=venue_id, sequence=message.sequence, kind=message.kind, payload=message.payload
        )
        outbox.acknowledge(venue_id=venue_id, up_to=message.sequence)
        answers.append(answer)
    return answers


def follow(*, stream: str, after: int | None = None) -> streams.Applied:
    """Apply the central's `stream` (this same database) from where this installation stands."""
    from halls.link.models import StreamPosition

    start = (
        after
        if after is not None
        else (
            StreamPosition.objects.filter(stream=stream).values_list("applied_sequence", flat=True).first()
            or 0
        )
    )
    entries = [
        registry.CentralEntry(e.stream, e.sequence, LinkKind(e.kind), e.payload)
        for e in streams.after(stream=stream, sequence=start)
    ]
    return streams.apply(stream=stream, entries=entries)
