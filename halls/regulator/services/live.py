"""The portal's live stream: each feed message the node accepted, told to the authority's open pages.

The intake calls `published(message)` for every message it accepted, after its transaction committed (never
before: DESIGN §4). The pages (halls.regulator.consumers) treat an event as "something arrived" and reload
what they show; they also reload slowly by themselves, so nothing depends on an event arriving (the channel
layer delivers at most once).
"""

from __future__ import annotations

from django.utils import timezone

from halls import events
from halls.eventtypes import EventType, RegulatorMessage
from halls.regulator.models import FeedMessage

STREAM = "regulator.live"


def group() -> str:
    """The Channels group the portal's sockets join."""
    return events.group_name(STREAM)


def event_of(message: FeedMessage) -> events.Event:
    payload = message.payload if isinstance(message.payload, dict) else {}
    game, pool = payload.get("game"), payload.get("pool")
    data: RegulatorMessage = {
        "message": int(message.pk),
        "installation": str(message.installation.uid),
        "sequence": int(message.sequence),
        "kind": str(message.kind),
        "at": message.at.isoformat(),
        "game": game if isinstance(game, str) else "",
        "pool": pool if isinstance(pool, str) else "",
    }
    events.checked(EventType.REGULATOR_MESSAGE, data)
    # Numbered by the message's id: the pages reload a snapshot on every event, they never count them.
    return events.Event(
        stream=STREAM,
        seq=int(message.pk),
        type=EventType.REGULATOR_MESSAGE,
        data=data,
        at=timezone.now().isoformat(),
    )


def published(message: FeedMessage) -> None:
    """Tell the portal's open pages that `message` was accepted (call after its transaction committed; a
    failure to publish is logged, never raised: the pages catch up by themselves)."""
    events.publish(event_of(message))
