"""Pool events: emitted on ``pool.<id>`` inside the service's transaction, published on commit.

Screens may want them on other streams too (a venue's room streams): a listener registered here is
called with the same (pool, type, data) inside the transaction and may emit wherever it likes, so the
engine never imports the screen code. ``pool.contributed`` is NOT an event (thousands a second): the
screen publisher polls `meters.changed_pools_since` and publishes meters at most 4 times a second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from halls import events
from jackpots.models import Pool

PoolEventListener = Callable[[Pool, str, dict[str, Any]], None]

POOL_HIT = "pool.hit"
POOL_PARAMETERS_CHANGED = "pool.parameters_changed"
POOL_CORRECTED = "pool.corrected"
POOL_CREATED = "pool.created"
POOL_MEMBERS_CHANGED = "pool.members_changed"

_listeners: list[PoolEventListener] = []


def register_pool_event_listener(listener: PoolEventListener) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def unregister_pool_event_listener(listener: PoolEventListener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def emit(pool: Pool, type: str, data: dict[str, Any]) -> events.Event:
    data = {"pool": pool.pk, "code": pool.code, **data}
    event = events.emit(pool.stream, type, data)
    for listener in list(_listeners):
        listener(pool, type, data)
    return event
