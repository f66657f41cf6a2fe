"""Pool events: emitted on ``pool.<id>`` inside the service's transaction, published on commit.

Screens may want them on other streams too (a venue's room streams): a listener registered here is
called with the same (pool, type, data) inside the transaction and may emit wherever it likes, so the
engine never imports the screen code. ``pool.contributed`` is NOT an event (thousands a second): the
screen publisher polls `meters.changed_pools_since` and publishes meters at most 4 times a second.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from halls import events
from halls.eventtypes import EventType, PoolHead
from jackpots.models import Pool

PoolEventListener = Callable[[Pool, EventType, dict[str, Any]], None]

_listeners: list[PoolEventListener] = []


def register_pool_event_listener(listener: PoolEventListener) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def unregister_pool_event_listener(listener: PoolEventListener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def head(pool: Pool) -> PoolHead:
    """What every event of a pool starts with."""
    return PoolHead(pool=pool.pk, code=pool.code)


def emit(pool: Pool, type: EventType, data: Mapping[str, Any]) -> events.Event:
    """`data`, a payload of `type` (from `head`), on the pool's stream; the listeners get it too."""
    event = events.emit(pool.stream, type, data)
    for listener in list(_listeners):
        listener(pool, type, dict(data))
    return event
