"""Group commit for threads: concurrent callers of one process hand in their work; one of them writes a
whole group of it in one call (one transaction, one commit) and every caller gets its own answer.

No thread of its own: the caller that finds no group gathering becomes the group's writer (a leader).
It gathers for at most `wait` seconds, and less when `size` items are waiting or when every caller
inside `submit` is either waiting in this group or in a group being written (nobody else can join before
one of those answers: waiting longer would only idle), writes them with `write_many` on its own thread
(so on its own database connection), hands each waiting caller its result or its exception, and returns
its own. At most `runners` groups are being written at once and only one gathers, so under load the next
group fills while the previous one commits; a lone caller waits at most `wait` for company.

`write_many` answers one result per item, in order, an exception standing for that item's failure; an
exception it raises itself is every item's answer. It never gets an empty group.

`together_or_one_by_one` is what each user's `write_many` does: the group in one transaction, or, if it
cannot commit as a whole (a database error, a deadlock), each item alone, each caller getting its own answer
(`answer_of`: a result, or the exception that is its refusal).

`ProcessGroup` is the one setup of a group commit for its users (the pools' contributions, the casino
tables' bets, electronic bingo's purchases): one `GroupCommit` per process (a new one after a fork: a child
never shares its parent's), made on first use with the sizes of the user's own settings, `<prefix>_COMMIT`,
`_SIZE`, `_WAIT_MS` and `_RUNNERS` (HALL_POOL_GROUP_*, HALL_TABLE_GROUP_*, HALL_SALES_GROUP_*). `GroupCommit`
itself is pure threading; only `ProcessGroup` reads Django's settings, and knows nothing of its users.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.conf import settings

T = TypeVar("T")
R = TypeVar("R")


class _Slot(Generic[T, R]):
    __slots__ = ("done", "error", "item", "result")

    def __init__(self, item: T) -> None:
        self.item = item
        self.done = False
        self.result: R | None = None
        self.error: BaseException | None = None


class GroupCommit(Generic[T, R]):
    def __init__(
        self,
        write_many: Callable[[Sequence[T]], Sequence[R | BaseException]],
        *,
        size: int,
        wait: float,
        runners: int,
    ) -> None:
        if size < 1 or runners < 1 or wait < 0:
            raise ValueError("a group holds at least one item, with at least one runner")
        self.write_many = write_many
        self.size, self.wait, self.runners = size, wait, runners
        self._cond = threading.Condition(threading.Lock())
        self._pending: list[_Slot[T, R]] = []
        self._writing = 0  # groups being written now
        self._in_flight = 0  # items in the groups being written
        self._inside = 0  # callers inside submit()
        self._gathering = False
        # Counters for benchmarks and tests (under the lock).
        self.groups = 0
        self.items = 0

    def submit(self, item: T) -> R:
        """`item` written in the next group; its result, or its exception raised here."""
        slot: _Slot[T, R] = _Slot(item)
        cond = self._cond
        with cond:
            self._inside += 1
            self._pending.append(slot)
            if self._gathering and self._complete():
                cond.notify_all()  # the gathering group can go now
            try:
                while not slot.done:
                    if self._pending and not self._gathering and self._writing < self.runners:
                        self._lead()
                    else:
                        cond.wait()
            finally:
                self._inside -= 1
        if slot.error is not None:
            raise slot.error
        return slot.result  # type: ignore[return-value]  # done without error: the result is set

    def _lead(self) -> None:
        """Gather a group, write it, answer it (called and returning with the lock held)."""
        cond = self._cond
        self._gathering = True
        try:
            deadline = time.monotonic() + self.wait
            while not self._complete():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                cond.wait(left)
        finally:
            self._gathering = False
        group = self._pending[: self.size]
        del self._pending[: self.size]
        self._writing += 1
        self._in_flight += len(group)
        self.groups += 1
        self.items += len(group)
        cond.notify_all()  # another caller may gather the next group while this one is written
        cond.release()
        try:
            answers = self._write([slot.item for slot in group])
        finally:
            cond.acquire()
            self._writing -= 1
            self._in_flight -= len(group)
        for slot, answer in zip(group, answers, strict=True):
            if isinstance(answer, BaseException):
                slot.error = answer
            else:
                slot.result = answer
            slot.done = True
        cond.notify_all()

    def _complete(self) -> bool:
        """The gathering group may go: it is full, or every caller inside is waiting in it or in a group
        being written (with the lock held)."""
        waiting = len(self._pending)
        return waiting >= self.size or waiting + self._in_flight >= self._inside

    def _write(self, items: list[T]) -> Sequence[R | BaseException]:
        try:
            answers = self.write_many(items)
        except BaseException as exc:  # every caller of the group hears it; none is left waiting
            return [exc] * len(items)
        if len(answers) != len(items):
            error = RuntimeError(f"a group of {len(items)} items got {len(answers)} answers")
            return [error] * len(items)
        return answers


@dataclass(frozen=True)
class GroupSettings:
    """A group commit's switch and sizes: at most `size` items a group, gathered for at most `wait_ms`,
    `runners` groups written at once."""

    commit: bool = True
    size: int = 64
    wait_ms: float = 2.0
    runners: int = 2

    @classmethod
    def of(cls, prefix: str) -> GroupSettings:
        """`<prefix>_COMMIT`, `_SIZE`, `_WAIT_MS`, `_RUNNERS` from the settings (each defaulting to the
        class's)."""
        default = cls()
        return cls(
            commit=bool(getattr(settings, f"{prefix}_COMMIT", default.commit)),
            size=int(getattr(settings, f"{prefix}_SIZE", default.size)),
            wait_ms=float(getattr(settings, f"{prefix}_WAIT_MS", default.wait_ms)),
            runners=int(getattr(settings, f"{prefix}_RUNNERS", default.runners)),
        )


class ProcessGroup(Generic[T, R]):
    """This process's group commit of one user: `get()` makes it on first use (and again after a fork),
    sized by the settings named `prefix` (read then: a benchmark may set them before)."""

    def __init__(self, write_many: Callable[[Sequence[T]], Sequence[R | BaseException]], prefix: str) -> None:
        self.write_many = write_many
        self.prefix = prefix
        self._groups: dict[int, GroupCommit[T, R]] = {}
        self._lock = threading.Lock()

    def settings(self) -> GroupSettings:
        return GroupSettings.of(self.prefix)

    def enabled(self) -> bool:
        """Whether the user groups its writes at all (`<prefix>_COMMIT`)."""
        return self.settings().commit

    def get(self) -> GroupCommit[T, R]:
        """This process's group (a new one after a fork: a child never shares its parent's)."""
        pid = os.getpid()
        found = self._groups.get(pid)
        if found is None:
            with self._lock:
                found = self._groups.get(pid)
                if found is None:
                    self._groups.clear()
                    sizes = self.settings()
                    found = self._groups[pid] = GroupCommit(
                        self.write_many, size=sizes.size, wait=sizes.wait_ms / 1000, runners=sizes.runners
                    )
        return found


def answer_of(write: Callable[[T], R], item: T) -> R | BaseException:
    """`write(item)`'s result, or the exception that is this caller's own answer."""
    try:
        return write(item)
    except Exception as exc:
        return exc


def together_or_one_by_one(
    items: Sequence[T],
    together: Callable[[Sequence[T]], Sequence[R | BaseException]],
    alone: Callable[[T], R],
    *,
    log: logging.Logger,
    what: str,
) -> list[R | BaseException]:
    """Each item's answer: `together` (the group in one transaction), or, if the group cannot commit as a
    whole, `alone` for each item in turn (each in its own transaction), so one failure never loses the
    others. A group of one is written alone."""
    if len(items) > 1:
        try:
            return list(together(items))
        except Exception:
            log.warning("a group of %s %s failed: writing them one by one", len(items), what, exc_info=True)
    return [answer_of(alone, item) for item in items]
