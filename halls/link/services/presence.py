"""Central side: when each venue was last heard, its socket, what it reported; and the network map.

Contact is not a fact of money or play: it is recorded on the venue's VenueLink row (no audit entry per
request), by single UPDATEs that wait behind a message being applied at most. A plain contact (a stream
read) never waits and writes at most once every `CONTACT_EVERY` a venue.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from halls.link.models import VenueLink
from halls.link.services.locks import touch_skipping_locked
from halls.models import Network, Venue

# A plain contact closer to the last one than this writes nothing: the offline window (30 s by default) is
# what the time serves, and a venue reading its streams several times a second made a write of each.
CONTACT_EVERY = timedelta(seconds=1)


def _touch(venue_id: int, **fields: Any) -> None:
    VenueLink.objects.get_or_create(venue_id=venue_id)
    VenueLink.objects.filter(venue_id=venue_id).update(**fields)


def seen(*, venue_id: int, reported: int | None = None, clock: datetime | None = None) -> None:
    """An authenticated contact: a request, a socket's heartbeat. `reported`: the highest outbox
    sequence the venue holds; `clock`: the venue's time when it sent this (the offset is recorded)."""
    now = timezone.now()
    if reported is None and clock is None:
        # Skipped if a transaction holds the link row: it is applying the venue's messages and records
        # the venue's contact itself.
        if not touch_skipping_locked(venue_id, now, now - CONTACT_EVERY):
            _touch(venue_id, last_seen_at=now)  # its first contact
        return
    fields: dict[str, Any] = {"last_seen_at": now}
    if reported is not None:
        fields["reported_sequence"] = Greatest(F("reported_sequence"), reported)
    if clock is not None:
        offset = (now - clock).total_seconds() * 1000
        fields["clock_offset_ms"] = max(-(2**31), min(2**31 - 1, round(offset)))
    _touch(venue_id, **fields)


def connected(*, venue_id: int) -> None:
    now = timezone.now()
    _touch(venue_id, connected_at=now, last_seen_at=now)


def disconnected(*, venue_id: int) -> None:
    _touch(venue_id, disconnected_at=timezone.now())


def hello(*, venue_id: int, software: str, started_at: datetime | None) -> None:
    """A venue's link process started (its HELLO, applied in the inbox's transaction, which holds and made
    its link row)."""
    VenueLink.objects.filter(venue_id=venue_id).update(software_version=software[:80], started_at=started_at)


@dataclass(frozen=True)
class LinkState:
    venue_id: int
    name: str
    licence_number: str
    networks: tuple[str, ...]
    state: str  # "online", "offline", "never" (never connected)
    since: datetime | None  # offline since (the last contact, or the socket's close if later)
    last_seen_at: datetime | None
    socket_open: bool
    applied_sequence: int
    reported_sequence: int
    backlog: int  # reported minus applied: messages the venue holds that the central has not applied
    software_version: str
    clock_offset_ms: int | None


def state_of(link: VenueLink | None, *, now: datetime) -> tuple[str, datetime | None, bool]:
    """(state, offline since, socket open) of a venue's link as of `now`."""
    if link is None or link.last_seen_at is None:
        return "never", None, False
    socket_open = link.connected_at is not None and (
        link.disconnected_at is None or link.disconnected_at < link.connected_at
    )
    closed_after_contact = link.disconnected_at is not None and link.disconnected_at >= link.last_seen_at
    window = timedelta(seconds=settings.HALL_LINK_OFFLINE_SECONDS)
    if closed_after_contact or now - link.last_seen_at > window:
        since = max(link.last_seen_at, link.disconnected_at or link.last_seen_at)
        return "offline", since, socket_open
    return "online", None, socket_open


def network_map() -> list[LinkState]:
    """Every venue that is a member of a network (or has ever linked), by name, with its link's state."""
    now = timezone.now()
    member_ids = set(Network.venues.through.objects.values_list("venue_id", flat=True))
    links = {link.venue_id: link for link in VenueLink.objects.all()}
    codes: dict[int, list[str]] = {}
    for venue_id, code in Network.venues.through.objects.values_list("venue_id", "network__code"):
        codes.setdefault(venue_id, []).append(code)
    venues = Venue.objects.filter(pk__in=member_ids | set(links)).order_by("name", "pk")
    states = []
    for venue in venues:
        link = links.get(venue.pk)
        state, since, socket_open = state_of(link, now=now)
        applied = link.applied_sequence if link else 0
        reported = max(link.reported_sequence, applied) if link else 0
        states.append(
            LinkState(
                venue_id=venue.pk,
                name=venue.name,
                licence_number=venue.licence_number,
                networks=tuple(sorted(codes.get(venue.pk, []))),
                state=state,
                since=since,
                last_seen_at=link.last_seen_at if link else None,
                socket_open=socket_open,
                applied_sequence=applied,
                reported_sequence=reported,
                backlog=reported - applied,
                software_version=link.software_version if link else "",
                clock_offset_ms=link.clock_offset_ms if link else None,
            )
        )
    return states
