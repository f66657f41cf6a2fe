"""Central side: which streams a venue follows and may read: `venue.<its id>` and `network.<code>` of
every network it is a member of. Any other stream is refused (another venue's, another network's)."""

from __future__ import annotations

from django.utils.translation import gettext as _

from halls.errors import NotFound, PermissionDenied
from halls.models import Network

VENUE_PREFIX = "venue."
NETWORK_PREFIX = "network."


def venue_stream(venue_id: int) -> str:
    """The stream of one venue (its notices, whatever the central says to it alone)."""
    return f"{VENUE_PREFIX}{venue_id}"


def followed(*, venue_id: int) -> list[str]:
    """The venue's own stream, then its networks' streams by code."""
    codes = Network.objects.filter(venues__pk=venue_id).order_by("code").values_list("code", flat=True)
    return [venue_stream(venue_id), *(f"{NETWORK_PREFIX}{code}" for code in codes)]


def check(*, venue_id: int, stream: str) -> None:
    """Refuse a stream the venue may not read: unknown names 404, others' streams 403."""
    if stream in followed(venue_id=venue_id):
        return
    if stream.startswith(VENUE_PREFIX) or (
        stream.startswith(NETWORK_PREFIX)
        and Network.objects.filter(code=stream.removeprefix(NETWORK_PREFIX)).exists()
    ):
        raise PermissionDenied(
            _("This venue may not read the stream “%(stream)s”.") % {"stream": stream},
            code="stream_forbidden",
        )
    raise NotFound(_("No stream “%(stream)s”.") % {"stream": stream}, code="unknown_stream")
