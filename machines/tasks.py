"""Celery doors of the machine link: the progressive broadcast and the silent-machine watch.

Both run from beat (CELERY_BEAT_SCHEDULE "broadcast-progressives" every 0.4 s, "watch-machine-links"
every 1 s), never one task per play: a worker runs about 550 tasks a second (DESIGN §7), so their cost is
fixed whatever the number of machines or plays.

`broadcast_progressives` is the link's heartbeat as well as its meter: a machine that hears nothing for
5 seconds locks itself, so it sends also when nothing changed. Per tick: one service call (one meters query
for every link group), then every group's payload encoded once and sent with one ``group_send`` per link
group (the pub/sub layer publishes it once to Redis; each web process fans it out to its own sockets),
all from one event loop, so a tick opens one Redis connection, not one per group.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from asgiref.sync import async_to_sync
from celery import shared_task
from channels.layers import get_channel_layer

from machines.consumers import PROGRESSIVE_TYPE
from machines.services import broadcast, liveness

log = logging.getLogger("hall.machines.tasks")


async def _send_all(layer: Any, sends: list[tuple[str, str]]) -> int:
    sent = 0
    for group, text in sends:
        try:
            await layer.group_send(group, {"type": PROGRESSIVE_TYPE, "text": text})
            sent += 1
        except Exception:  # one group's failure must not silence the others (their machines would lock)
            log.exception("could not broadcast to %s", group)
    return sent


def send_broadcasts(payloads: list[tuple[str, dict[str, Any]]]) -> int:
    """Send each (channel-layer group, payload) once; returns how many groups were sent to."""
    layer = get_channel_layer()
    if layer is None or not payloads:
        return 0
    sends = [(group, json.dumps(payload, separators=(",", ":"))) for group, payload in payloads]
    sent: int = async_to_sync(_send_all)(layer, sends)
    return sent


@shared_task(ignore_result=True)
def broadcast_progressives() -> int:
    """Every link group's levels to its machines (beat, every 0.4 s); returns the number of groups."""
    return send_broadcasts(broadcast.progressive_broadcasts())


@shared_task(ignore_result=True)
def watch_machine_links() -> int:
    """Machines silent for 5 s: offline, locked (link_lost), alert (beat, every 1 s); returns how many."""
    return len(liveness.mark_silent_machines_offline())
