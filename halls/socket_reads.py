"""The database reads of the sockets' connects (screens, terminals), batched per event loop (issue 30, a
reconnect storm): a web process that takes 2,000 sockets at once read each one's token on its own, one
query and one pooled connection's check each (py-spy, the sibling of a killed process: 45% of its samples
in those reads). Here the connects waiting at a moment are read together, one query for all of them, on
threads of their own that keep their connections (`halls.loop_batcher`).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings

from halls.loop_batcher import LoopBatcher

BATCH_SIZE: int = getattr(settings, "HALL_SOCKET_READ_BATCH", 200)
BATCH_WAIT: float = getattr(settings, "HALL_SOCKET_READ_WAIT_MS", 2) / 1000
RUNNERS = 2

_executor = ThreadPoolExecutor(max_workers=RUNNERS, thread_name_prefix="socket-reads")
_batchers: dict[str, weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopBatcher[Any, Any]]] = {}


def batcher(name: str, call: Callable[[list[Any]], Sequence[Any]]) -> LoopBatcher[Any, Any]:
    """The running loop's batcher of `name`'s reads (one per kind of socket): `call` answers a batch of
    items, one answer per item, in order."""
    loop = asyncio.get_running_loop()
    per_loop = _batchers.setdefault(name, weakref.WeakKeyDictionary())
    found = per_loop.get(loop)
    if found is None:
        found = per_loop[loop] = LoopBatcher(
            call, executor=_executor, size=BATCH_SIZE, wait=BATCH_WAIT, runners=RUNNERS
        )
    return found
