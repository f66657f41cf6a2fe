"""Who applies each kind of message: registered by the app that owns the fact, looked up by the link.

Two tables: what the central does with a venue's message (`on_venue_message`), and what a venue does with
a central stream entry (`on_central_entry`). A handler runs inside the transaction that records the
message as applied: it writes through services and raises a DomainError to refuse (nothing is applied).

A kind a venue sends in runs (a hall's sale reports) may have a batch handler too (`on_venue_messages`):
the central applies a run of that kind's consecutive messages in one call, which answers each message
(its answer, or the DomainError refusing it: nothing of a refused message written, and what the others
wrote kept). It must apply each message as the kind's handler would, in order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from halls.errors import DomainError
from halls.link.kinds import LinkKind


@dataclass(frozen=True)
class VenueMessage:
    """One outbox message as the central receives it."""

    venue_id: int  # the central's Venue row of the sender (from its credential, never from the payload)
    sequence: int
    kind: LinkKind
    payload: dict[str, Any]


@dataclass(frozen=True)
class CentralEntry:
    """One stream entry as a venue receives it."""

    stream: str
    sequence: int
    kind: LinkKind
    payload: dict[str, Any]


VenueHandler = Callable[[VenueMessage], dict[str, Any] | None]
# A run's answers, one a message in its order: the answer, or the DomainError that refused it.
VenueBatchHandler = Callable[[list[VenueMessage]], list[dict[str, Any] | DomainError]]
CentralHandler = Callable[[CentralEntry], None]

_venue_handlers: dict[LinkKind, VenueHandler] = {}
_venue_batch_handlers: dict[LinkKind, VenueBatchHandler] = {}
_central_handlers: dict[LinkKind, CentralHandler] = {}


def on_venue_message(kind: LinkKind) -> Callable[[VenueHandler], VenueHandler]:
    """Register the central's handler of `kind` (its return value, if any, goes back in the answer)."""

    def register(handler: VenueHandler) -> VenueHandler:
        _venue_handlers[kind] = handler
        return handler

    return register


def on_venue_messages(kind: LinkKind) -> Callable[[VenueBatchHandler], VenueBatchHandler]:
    """Register the central's batch handler of `kind` (beside its handler, `on_venue_message`)."""

    def register(handler: VenueBatchHandler) -> VenueBatchHandler:
        _venue_batch_handlers[kind] = handler
        return handler

    return register


def on_central_entry(kind: LinkKind) -> Callable[[CentralHandler], CentralHandler]:
    """Register a venue's handler of the central's `kind` entries."""

    def register(handler: CentralHandler) -> CentralHandler:
        _central_handlers[kind] = handler
        return handler

    return register


def venue_handler(kind: LinkKind) -> VenueHandler | None:
    return _venue_handlers.get(kind)


def venue_batch_handler(kind: LinkKind) -> VenueBatchHandler | None:
    return _venue_batch_handlers.get(kind)


def central_handler(kind: LinkKind) -> CentralHandler | None:
    return _central_handlers.get(kind)
