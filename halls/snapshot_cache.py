"""The web process's cache of stream snapshots (issue 30, a reconnect storm): the part of a snapshot that is
the same for every screen (or terminal) of a stream, built once per stream per change and shared by every
socket and request of the process. 1,000 screens of a room reconnecting at once cost one build (~40
queries), not 1,000.

An entry is what a build returned (its value: text encoded once, or a read-only dict) with the stream's seq
the build read first, as the snapshots always have (the rows may be newer than the seq: the pages apply an
event again harmlessly). A reader takes an entry at or past the seq it knows the stream reached, `at_least`:
- a request (a thread: the screen's HTTP snapshot, the terminal API's) reads the stream's cursor (one small
  query) and takes an entry at or past it: never older than the database at that moment;
- a socket's connect (on the loop) reads nothing: `at_least` is the hub's head of the stream (what the
  process relayed), taken before the socket joined the stream; every event past the entry's seq reaches the
  socket after its snapshot. That holds only for an entry built since the hub last subscribed to the
  stream (the events before were not heard): the hub bumps the stream's `generation` when it subscribes or
  unsubscribes, and a connect takes only an entry of the current generation.
An entry older than `max_age_seconds()` is built again: a change whose event was lost, or one without an
event on the stream, is seen within the sweep's period (as the heads make the live screens see it).

Builds are single-flight per key: a connect waits for the build in progress on the loop (a task), a request
for the one in progress on the threads (an event); each side starts at most one at a time.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import connection

# (stream, what of it: e.g. "screen:es", "terminal:en") -> entry
Key = tuple[str, str]
# A build: the stream's seq, read first, and the value (read only once cached).
Build = Callable[[], tuple[int, Any]]


def max_age_seconds() -> float:
    return float(getattr(settings, "HALL_SNAPSHOT_CACHE_SECONDS", 10.0))


@dataclass(frozen=True)
class Entry:
    seq: int
    value: Any
    started: float  # monotonic, before the build read anything
    generation: int  # the stream's generation when the build started


class SnapshotCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Key, Entry] = {}
        self._generations: dict[str, int] = {}
        self._threads: dict[Key, threading.Event] = {}  # builds in progress on the threads
        # Builds in progress on a loop (a server process runs one; tests one per test).
        self._tasks: dict[tuple[asyncio.AbstractEventLoop, Key], asyncio.Task[Entry]] = {}
        self.builds = 0  # builds done (the tests and the bench count them)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._generations.clear()
            self.builds = 0

    def bump(self, stream: str) -> None:
        """The hub subscribed to (or left) `stream`: no entry built before is trusted by a connect."""
        with self._lock:
            self._generations[stream] = self._generations.get(stream, 0) + 1

    def bump_all(self) -> None:
        """The hub may have missed events of every stream (its layer connection failed)."""
        with self._lock:
            for stream in {key[0] for key in self._entries} | set(self._generations):
                self._generations[stream] = self._generations.get(stream, 0) + 1

    def generation(self, stream: str) -> int:
        with self._lock:
            return self._generations.get(stream, 0)

    def _usable(self, key: Key, at_least: int, generation: int | None) -> Entry | None:
        entry = self._entries.get(key)
        if entry is None or entry.seq < at_least or time.monotonic() - entry.started > max_age_seconds():
            return None
        if generation is not None and entry.generation != generation:
            return None
        return entry

    def _build(self, key: Key, build: Build) -> Entry:
        with self._lock:
            generation = self._generations.get(key[0], 0)
        started = time.monotonic()
        seq, value = build()
        entry = Entry(seq, value, started, generation)
        with self._lock:
            self.builds += 1
            current = self._entries.get(key)
            if current is None or current.started <= started:  # the later build read the later state
                self._entries[key] = entry
        return entry

    # --- a request, on a thread ---

    def get(self, key: Key, at_least: int, build: Build) -> Entry:
        """An entry of `key` at or past `at_least` (the stream's cursor read by the caller): the cached
        one, the one a concurrent request is building, or built here."""
        while True:
            with self._lock:
                entry = self._usable(key, at_least, None)
                if entry is not None:
                    return entry
                flight = self._threads.get(key)
                mine = flight is None
                if flight is None:
                    flight = self._threads[key] = threading.Event()
            if not mine:
                flight.wait(timeout=30.0)  # then look again: built at or past at_least, or build here
                continue
            try:
                entry = self._build(key, build)
            finally:
                with self._lock:
                    self._threads.pop(key, None)
                flight.set()
            if entry.seq >= at_least:
                return entry

    # --- a socket's connect, on the loop ---

    async def aget(self, key: Key, at_least: int, build: Build) -> Entry:
        """An entry of `key` at or past `at_least` (the hub's head of the stream, taken before the socket
        joined it) and of the stream's current generation: no database read when cached; else the build in
        progress on the loop, or one started on a thread (`build` reads the database there)."""
        loop = asyncio.get_running_loop()
        while True:
            generation = self.generation(key[0])
            with self._lock:
                entry = self._usable(key, at_least, generation)
            if entry is not None:
                return entry
            task = self._tasks.get((loop, key))
            if task is None:
                task = loop.create_task(_build_on_thread(self, key, build))
                self._tasks[(loop, key)] = task
                task.add_done_callback(lambda done: self._forget_task((loop, key), done))
            entry = await asyncio.shield(task)  # a connect that goes away does not cancel the others' build
            if entry.generation == self.generation(key[0]) and entry.seq >= at_least:
                return entry

    def _forget_task(self, key: tuple[asyncio.AbstractEventLoop, Key], task: asyncio.Task[Entry]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]


def _build_once(cache: SnapshotCache, key: Key, build: Build) -> Entry:
    try:
        return cache._build(key, build)
    finally:
        connection.close()  # a thread of the loop's pool: no connection left behind on it


async def _build_on_thread(cache: SnapshotCache, key: Key, build: Build) -> Entry:
    # Any thread of the loop's pool, not Channels' one sync thread (as the terminals' token check).
    entry: Entry = await database_sync_to_async(_build_once, thread_sensitive=False)(cache, key, build)
    return entry


_cache = SnapshotCache()


def cache() -> SnapshotCache:
    """The process's one cache (every loop and thread of it)."""
    return _cache
