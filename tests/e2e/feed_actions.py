"""What the feed's end-to-end test (tests/e2e/test_feed_regulator.py) does inside an installation or the
regulator's node, in that installation's own process against its own database; each prints one JSON line
(run_in) or returns a value (link_support.Driver)."""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction

from halls.link.models import Destination, OutboxMessage
from halls.link.services import feed_outbox
from halls.models import Jurisdiction, Venue
from halls.services import anchor_key, anchors, audit


def _say(data: Any) -> None:
    print(json.dumps(data, default=str), flush=True)


def setup(licence: str, name: str) -> None:
    """The installation's venue row (a central's: a member's, whose chain its audit writes), and its feed
    identity (what `manage.py feed_identity` prints)."""
    Venue.objects.get_or_create(
        licence_number=licence, defaults={"name": name, "jurisdiction": Jurisdiction.ML}
    )
    _say(anchor_key.document())


def fact(licence: str, count: int = 1) -> dict[str, Any]:
    """`count` audited facts at the venue, then an anchor of the chains that moved (its feed message)."""
    venue = Venue.objects.get(licence_number=licence)
    for n in range(count):
        with transaction.atomic():
            audit.record(venue_id=venue.pk, actor="e2e", action="e2e.fact", obj=venue, data={"n": n})
    lines = anchors.write()
    return {"lines": len(lines), "last": feed_outbox.last_sequence()}


def feed_state() -> dict[str, Any]:
    """The installation's feed: its highest sequence and what waits for the node."""
    waiting, age = feed_outbox.backlog()
    kinds = list(
        OutboxMessage.objects.filter(destination=Destination.REGULATOR)
        .order_by("sequence")
        .values_list("kind", flat=True)
    )
    return {"last": feed_outbox.last_sequence(), "backlog": waiting, "age": age, "kinds": kinds}
