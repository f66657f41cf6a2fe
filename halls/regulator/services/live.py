"""The portal's live stream: the feed messages the node accepted, told to the authority's open pages.

The intake calls `published(messages)` once for each batch's accepted run, after its transaction committed
(never before: DESIGN §4): one event for the run, named by its last message (the run's first sequence
beside it). The pages (halls.regulator.consumers) treat an event as "something arrived" and reload what they
show; they also reload slowly by themselves, so nothing depends on an event arriving (the channel layer
delivers at most once). One event a run, not one a message: a publish is a round trip to the channel layer,
and 300 installations send their facts in batches (bench/feed_node.py measured 64 ms p50 a message under
load when each was told).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.utils import timezone

from halls import events
from halls.eventtypes import EventType, RegulatorMessage
from halls.regulator.models import FeedMessage

STREAM = "regulator.live"


def group() -> str:
    """The Channels group the portal's sockets join."""
    return events.group_name(STREAM)


def event_of(messages: Sequence[FeedMessage]) -> events.Event:
    """The event of one installation's accepted run (in sequence order)."""
    last = messages[-1]
    payload = last.payload if isinstance(last.payload, dict) else {}
    game, pool = payload.get("game"), payload.get("pool")
    data: RegulatorMessage = {
        "message": int(last.pk),
        "installation": str(last.installation.uid),
        "first": int(messages[0].sequence),
        "sequence": int(last.sequence),
        "kind": str(last.kind),
        "at": last.at.isoformat(),
        "game": game if isinstance(game, str) else "",
        "pool": pool if isinstance(pool, str) else "",
    }
    events.checked(EventType.REGULATOR_MESSAGE, data)
    # Numbered by the last message's id: the pages reload a snapshot on every event, they never count them.
    return events.Event(
        stream=STREAM,
        seq=int(last.pk),
        type=EventType.REGULATOR_MESSAGE,
        data=data,
        at=timezone.now().isoformat(),
    )


def published(messages: Sequence[FeedMessage]) -> None:
    """Tell the portal's open pages that `messages` (one installation's run, in order) were accepted: call
    after their transaction committed; a failure to publish is logged, never raised (the pages catch up)."""
    if messages:
        events.publish_unawaited(event_of(messages))  # the pages only reload: no order, no wait
