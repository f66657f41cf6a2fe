"""Central side: a committed stream entry sent to the sockets of the venues following its stream.

At most once (DESIGN §4): a venue that misses one sees the gap at the next entry, or catches up on its
reconnect and on its periodic catch-up, by sequence, from the central's log (GET /api/link/streams/…).
"""

from __future__ import annotations

import hashlib
import logging
import re
from typing import Any

from channels.layers import get_channel_layer

from halls import events

log = logging.getLogger("hall.link")

ENTRY_TYPE = "link.entry"  # the channel-layer message type (halls.link.consumers.LinkConsumer.link_entry)
_GROUP_SAFE = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


def group_name(stream: str) -> str:
    """The Channels group of a stream (a stream name Channels would refuse is hashed)."""
    if _GROUP_SAFE.match(stream):
        return f"link.{stream}"
    return "link.h." + hashlib.sha256(stream.encode()).hexdigest()[:40]


def entry_message(stream: str, sequence: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"type": "entry", "stream": stream, "sequence": sequence, "kind": kind, "payload": payload}


def publish_entry(stream: str, sequence: int, kind: str, payload: dict[str, Any]) -> None:
    """After commit: the entry to its stream's group. A failure is logged (the venues catch up)."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": ENTRY_TYPE, "entry": entry_message(stream, sequence, kind, payload)}
    try:
        events.send_to_group(layer, group_name(stream), message)
    except Exception:
        log.exception("could not push %s #%s", stream, sequence)
