"""Group commit for one event loop: the requests of all the loop's sockets, taken in batches, each batch one
call on a database thread of the door's own (one transaction, one commit for all of it).

`LoopBatcher.submit(item)` awaits its item's answer. A runner lives while there is work: it gathers a batch
(up to `size` items, waiting at most `wait` seconds after the first for more), hands it to `call` on
`executor`, answers each item's future and goes again, or ends when nothing waits (no task outlives the work).
Only one runner gathers at a time and at most `runners` are in the database at once, so under load the next
batch fills while the previous one commits. Machines' frames are batched the same way (machines.consumers).
(Its sibling for threads, where one caller writes the group, is halls.group_commit.)

Why threads of their own and not Channels' `database_sync_to_async`: that one shared sync thread serialises
every database call of every consumer of the process; a socket door that writes would wait behind reads.
The threads close stale connections around each call, as Channels does (by Django's own function: the test
communicator switches Channels' copy off).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any, Generic, TypeVar

from django.db import close_old_connections

T = TypeVar("T")
R = TypeVar("R")

Answers = Sequence[Any]  # one per item: its result, or the exception that is its refusal


def _closing(fn: Callable[..., Any], *args: Any) -> Any:
    close_old_connections()
    try:
        return fn(*args)
    finally:
        close_old_connections()


class LoopBatcher(Generic[T, R]):
    def __init__(
        self,
        call: Callable[[list[T]], Answers],
        *,
        executor: Executor,
        size: int,
        wait: float,
        runners: int,
    ) -> None:
        if size < 1 or runners < 1 or wait < 0:
            raise ValueError("a batch holds at least one item, with at least one runner")
        self.call, self.executor = call, executor
        self.size, self.wait, self.runners = size, wait, runners
        self.pending: deque[tuple[T, asyncio.Future[R]]] = deque()
        self.running = 0
        self.gathering = False
        self.full: asyncio.Future[None] | None = None  # set when the gathering batch is full
        self.tasks: set[asyncio.Task[None]] = set()
        self.batches = 0  # counters for benchmarks and tests
        self.items = 0

    async def submit(self, item: T) -> R:
        """`item`'s answer, taken in the next batch (its refusal raised here)."""
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self.pending.append((item, future))
        if self.full is not None and not self.full.done() and len(self.pending) >= self.size:
            self.full.set_result(None)
        self._spawn()
        return await future

    def _spawn(self) -> None:
        if self.pending and not self.gathering and self.running < self.runners:
            self.running += 1
            task = asyncio.get_running_loop().create_task(self._run())
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _run(self) -> None:
        try:
            while self.pending and not self.gathering:
                batch = await self._gather()
                self._spawn()  # more than a batch waits: the next one gathers while this one is written
                await self._call(batch)
        finally:
            self.running -= 1

    async def _gather(self) -> list[tuple[T, asyncio.Future[R]]]:
        self.gathering = True
        try:
            if len(self.pending) < self.size and self.wait > 0:
                self.full = asyncio.get_running_loop().create_future()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.full, self.wait)
                self.full = None
            return [self.pending.popleft() for _ in range(min(self.size, len(self.pending)))]
        finally:
            self.gathering = False

    async def _call(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        live = [
            (item, future) for item, future in batch if not future.done()
        ]  # a cancelled waiter's: not taken
        if not live:
            return
        self.batches += 1
        self.items += len(live)
        loop = asyncio.get_running_loop()
        try:
            answers = await loop.run_in_executor(
                self.executor, functools.partial(_closing, self.call, [item for item, _ in live])
            )
            if len(answers) != len(live):
                raise RuntimeError(f"a batch of {len(live)} items got {len(answers)} answers")
        except Exception as exc:  # every item of the batch hears it
            answers = [exc] * len(live)
        for (_, future), answer in zip(live, answers, strict=True):
            if future.done():
                continue
            if isinstance(answer, BaseException):
                future.set_exception(answer)
            else:
                future.set_result(answer)
