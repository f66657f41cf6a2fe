"""The link's locks, each through its rank (halls.locks): taken before whatever a message's handler locks."""

from __future__ import annotations

from datetime import datetime

from django.db import connection
from django.db.models import Q

from halls.link.models import StreamPosition, VenueLink
from halls.locks import Rank, take


def lock_venue_link(venue_id: int) -> VenueLink:
    """The venue's link at the central FOR UPDATE (made on its first message)."""
    take(Rank.VENUE_LINK, venue_id)
    link = VenueLink.objects.select_for_update(of=("self",)).filter(venue_id=venue_id).first()
    if link is None:  # its first message (one statement for every later one)
        VenueLink.objects.get_or_create(venue_id=venue_id)
        link = VenueLink.objects.select_for_update(of=("self",)).get(venue_id=venue_id)
    return link


_TOUCH_SQL = """
WITH touched AS (
    UPDATE {table} SET last_seen_at = %s
    WHERE id IN (
        SELECT id FROM {table}
        WHERE venue_id = %s AND (last_seen_at IS NULL OR last_seen_at < %s)
        FOR UPDATE SKIP LOCKED
    )
    RETURNING id
)
SELECT EXISTS (SELECT 1 FROM {table} WHERE venue_id = %s)
"""


def touch_skipping_locked(venue_id: int, at: datetime, stale: datetime) -> bool:
    """``last_seen_at = at`` on the venue's link if it was last seen before `stale` and no transaction
    holds it (the one that does, applying the venue's messages, records the contact itself): one
    statement that never waits. False: the venue has no link row yet."""
    take(Rank.VENUE_LINK)
    if connection.vendor != "postgresql":  # SQLite: one writer at a time, nothing to skip
        if not VenueLink.objects.filter(venue_id=venue_id).exists():
            return False
        VenueLink.objects.filter(venue_id=venue_id).filter(
            Q(last_seen_at__isnull=True) | Q(last_seen_at__lt=stale)
        ).update(last_seen_at=at)
        return True
    with connection.cursor() as cursor:
        cursor.execute(_TOUCH_SQL.format(table=VenueLink._meta.db_table), [at, venue_id, stale, venue_id])
        (exists,) = cursor.fetchone()
    return bool(exists)


def lock_stream_position(stream: str) -> StreamPosition:
    """This installation's position in a central stream FOR UPDATE (made at its first entry)."""
    take(Rank.STREAM_POSITION, stream)
    held = StreamPosition.objects.select_for_update(of=("self",)).filter(stream=stream).first()
    if held is None:  # its first entry (one statement for every later one)
        StreamPosition.objects.get_or_create(stream=stream)
        held = StreamPosition.objects.select_for_update(of=("self",)).get(stream=stream)
    return held
