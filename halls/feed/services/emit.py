"""Emitting a fact on the feed to the gaming authority: `emit(kind, payload, venue_id=..., at=...)`, called
inside the fact's own transaction by whatever service makes the fact (issue 29's contract).

- Outside a transaction: RuntimeError (a message must commit with its fact, or not at all).
- The feed off for the fact's jurisdiction (the venue's; an installation's own message, venue_id None: the
  installation's, `installation_on`): nothing, at no cost.
- The payload validated against its kind's schema first: a SchemaError is a bug, raised (the fact's
  transaction rolls back with it), never a message the authority would refuse.
- Then written to the outbox owed to the regulator's node, numbered per installation in commit order.
- Inside `holding()`, written only when the holder releases them: a step whose payment settles pools before
  its own messages are due (an electronic ball pays a pool: the award is made before the ball's message)
  puts the held ones where they belong in its story (the ball, its prizes, then the pools' awards).

The writing is the link's (halls.link.services.feed_outbox, registered at start by halls.link's app):
the feed sits below the link (every app's services emit; the link stands on halls.services), so it offers
this hook rather than importing it (DESIGN §2).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from halls.feed.kinds import FeedKind
from halls.feed.schema import validate_payload
from halls.models import Venue

# writer(kind, payload, venue_id, at): appends one message to the outbox owed to the regulator.
Writer = Callable[[str, dict[str, Any], int | None, datetime], None]
_writer: list[Writer] = []


def register_writer(writer: Writer) -> None:
    """The outbox's writer (the link registers it once, at start)."""
    _writer[:] = [writer]


def enabled_for(jurisdiction: str) -> bool:
    """Whether the feed is on for a jurisdiction: its HALL_FEED_BY_JURISDICTION "enabled", else
    HALL_FEED_ENABLED."""
    overrides = settings.HALL_FEED_BY_JURISDICTION.get(jurisdiction) or {}
    return bool(overrides.get("enabled", settings.HALL_FEED_ENABLED))


def jurisdiction_setting(jurisdiction: str, name: str, default: Any) -> Any:
    """A feed figure for a jurisdiction (e.g. "pool_interval_seconds"): its override, else `default`."""
    overrides = settings.HALL_FEED_BY_JURISDICTION.get(jurisdiction) or {}
    return overrides.get(name, default)


def installation_on() -> bool:
    """Whether this installation feeds its node at all (its own messages: heartbeats, anchors). A central:
    HALL_FEED_ENABLED (its Venue rows are its members', not its own); a venue installation: when the feed
    is on for the jurisdiction of any of its venues (HALL_FEED_ENABLED when it has none yet)."""
    if settings.HALL_ROLE != "venue":
        return bool(settings.HALL_FEED_ENABLED)
    jurisdictions = set(Venue.objects.values_list("jurisdiction", flat=True).distinct())
    if not jurisdictions:
        return bool(settings.HALL_FEED_ENABLED)
    return any(enabled_for(j) for j in jurisdictions)


def any_on() -> bool:
    """Whether the feed is on for any jurisdiction at all (no query: the default, off, costs nothing)."""
    overrides: dict[str, dict[str, Any]] = settings.HALL_FEED_BY_JURISDICTION
    return bool(settings.HALL_FEED_ENABLED) or any(o.get("enabled") for o in overrides.values())


def venue_on(venue_id: int) -> bool:
    if not any_on():
        return False  # off everywhere: no query on a ball's path
    held = _holding.get()
    if held is not None and venue_id in held.venues:
        return held.venues[venue_id]  # a step's messages: its venue read once
    jurisdiction = Venue.objects.filter(pk=venue_id).values_list("jurisdiction", flat=True).first()
    if jurisdiction is None:
        raise ValueError(f"no venue {venue_id} in this installation")
    on = enabled_for(jurisdiction)
    if held is not None:
        held.venues[venue_id] = on
    return on


def emit(
    kind: FeedKind, payload: dict[str, Any], *, venue_id: int | None, at: datetime | None = None
) -> None:
    """Owe the regulator's node one message about a fact of `venue_id` (None: the installation's own), in
    the fact's transaction (see the module's docstring)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("feed.emit must run inside the transaction of the fact it reports")
    if not (venue_on(venue_id) if venue_id is not None else installation_on()):
        return
    validate_payload(str(kind), payload)
    if not _writer:
        raise RuntimeError("no feed writer registered (halls.link's app registers it at start)")
    message = (str(kind), payload, venue_id, at or timezone.now())
    held = _holding.get()
    if held is not None and not (held.released or held.passing):
        held.messages.append(message)  # validated now, written at the holder's release
        return
    _writer[0](*message)


@dataclass
class Held:
    """Messages emitted inside `holding()` before its release, validated, waiting for their place."""

    messages: list[tuple[str, dict[str, Any], int | None, datetime]] = field(default_factory=list)
    released: bool = False
    passing: bool = False  # inside `first()`: the holder's own messages, written at once
    venues: dict[int, bool] = field(default_factory=dict)  # venue id -> feed on, read once while held

    @contextlib.contextmanager
    def first(self) -> Iterator[None]:
        """What is emitted inside is written at once, ahead of the held messages (the holder's own story)."""
        self.passing = True
        try:
            yield
        finally:
            self.passing = False

    def release(self) -> None:
        """Write the held messages in their order; what is emitted after the release is written at once."""
        if not transaction.get_connection().in_atomic_block:
            raise RuntimeError("held feed messages must be released inside their facts' transaction")
        self.released = True
        messages, self.messages = self.messages, []
        for message in messages:
            _writer[0](*message)


_holding: ContextVar[Held | None] = ContextVar("feed_holding", default=None)


@contextlib.contextmanager
def holding() -> Iterator[Held]:
    """Hold what is emitted inside until `release()`, inside the facts' transaction (not nested). Leaving it
    with messages still held is a bug, raised (the transaction around it rolls back: no fact without its
    message)."""
    if _holding.get() is not None:
        raise RuntimeError("feed messages are already held")
    held = Held()
    token = _holding.set(held)
    try:
        yield held
    finally:
        _holding.reset(token)
    if held.messages:
        raise RuntimeError(f"{len(held.messages)} feed messages held and never released")
