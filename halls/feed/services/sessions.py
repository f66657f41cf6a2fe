"""The feed's session facts (session.opened, session.closed), for every wing's sessions: a traditional room's
(halls.services.sessions opens it, bingo.traditional closes it with its totals), an electronic speciality's,
a network game's at the central."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal

from halls.feed.kinds import FeedKind
from halls.feed.services import facts
from halls.feed.services.emit import emit


def opened(
    *,
    venue_id: int | None,
    room: str,
    session: str,
    family: str,
    opened_at: datetime,
    checks: Iterable[tuple[str, bool]],
) -> None:
    """`checks` (a lazy query is fine) are read only when the feed is on."""
    if not facts.feed_on(venue_id):
        return
    payload = {
        "venue": facts.licence(venue_id),
        "room": room,
        "session": session,
        "family": family,
        "opened_at": facts.instant(opened_at),
        "checks": [{"check": name, "ok": ok} for name, ok in checks],
    }
    emit(FeedKind.SESSION_OPENED, payload, venue_id=venue_id, at=opened_at)


def closed(
    *,
    venue_id: int | None,
    room: str,
    session: str,
    closed_at: datetime,
    games: int,
    sales: Decimal,
    prizes: Decimal,
) -> None:
    if not facts.feed_on(venue_id):
        return
    payload = {
        "venue": facts.licence(venue_id),
        "room": room,
        "session": session,
        "closed_at": facts.instant(closed_at),
        "games": games,
        "sales": facts.amount(sales),
        "prizes": facts.amount(prizes),
    }
    emit(FeedKind.SESSION_CLOSED, payload, venue_id=venue_id, at=closed_at)
