"""Celery doors of the machine link: the silent-machine watch, and one progressive broadcast on demand.

`watch_machine_links` runs from beat (CELERY_BEAT_SCHEDULE "watch-machine-links", every 1 s); its cost is
a handful of set-based statements whatever the number of machines (machines.services.liveness).

The progressive broadcast itself is NOT a beat task any more: it is the machines' link heartbeat (5 s of
silence locks a machine) and a worker busy folding, sealing or watching made it miss that deadline under
load. It runs in a loop of its own (machines.broadcaster: ``manage.py broadcast_progressives``, or a
thread of the embedded hall). `broadcast_progressives` here sends one round now, the same way (tests and
an operator's shell use it).
"""

from __future__ import annotations

import time

from asgiref.sync import async_to_sync
from celery import shared_task
from channels.layers import get_channel_layer

from machines import broadcaster
from machines.services import broadcast, feed, liveness


@shared_task(ignore_result=True)
def broadcast_progressives() -> int:
    """Every link group's levels to its machines, once, now; returns the number of groups sent to."""
    layer = get_channel_layer()
    snapshot = broadcast.link_levels()
    if layer is None or not snapshot:
        return 0
    sends = broadcaster.encode(snapshot, int(time.time() * 1000))
    sent: int = async_to_sync(broadcaster.send_all)(layer, sends)
    return sent


@shared_task(ignore_result=True)
def watch_machine_links() -> int:
    """Machines silent for 5 s: offline, locked (link_lost), alert (beat, every 1 s); returns how many."""
    return len(liveness.mark_silent_machines_offline())


@shared_task(ignore_result=True)
def feed_machine_meters() -> int:
    """The authority's feed: each machine's meters over each ended day (machines.services.feed)."""
    return feed.report_machine_meters()
