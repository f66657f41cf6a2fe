"""The link's locks, each through its rank (halls.locks): taken before whatever a message's handler locks."""

from __future__ import annotations

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


def lock_stream_position(stream: str) -> StreamPosition:
    """This installation's position in a central stream FOR UPDATE (made at its first entry)."""
    take(Rank.STREAM_POSITION, stream)
    held = StreamPosition.objects.select_for_update(of=("self",)).filter(stream=stream).first()
    if held is None:  # its first entry (one statement for every later one)
        StreamPosition.objects.get_or_create(stream=stream)
        held = StreamPosition.objects.select_for_update(of=("self",)).get(stream=stream)
    return held
