"""The per-game detection cache of a process: one for every game type's winner detector (traditional
bingo's `bingo.detect_index.GameIndex`, electronic bingo's `bingo.electronic.detector.PatternIndex`).

A game's detector is built once (at its close of sales) and then applied ball by ball, each ball inside the
ball step's transaction. What a ball decides never depends on the cache being right: an entry is used only
when it stands exactly at the ball before, as committed. A step takes its entry out of the cache (`before`)
and the entry goes back only when the step's transaction commits (`applying`): a step that rolls back, or a
process that never saw its commit, leaves no entry, and the next step rebuilds it from what its caller reads
(the balls drawn before, and the detector built from the database). An entry whose fingerprint (what the
game's cards are frozen by) changed is never used. The least recently used game is dropped first.

Pure: threading only. The caller's transaction hook (`on_commit`, Django's `transaction.on_commit` in the
services) is handed in, so a rolled-back step never puts its entry back.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar


class Detector(Protocol):
    """What the cache needs of a detector: the balls applied (in order) and how to apply more."""

    balls: list[int]

    @property
    def ordinal(self) -> int: ...

    def apply_all(self, balls: Iterable[int]) -> Any: ...


D = TypeVar("D", bound=Detector)
OnCommit = Callable[[Callable[[], None]], None]


@dataclass
class Entry(Generic[D]):
    """A game's detector and what its game's cards are frozen by."""

    fingerprint: Hashable
    index: D
    # True from the moment a ball is applied until its transaction is seen committed.
    pending: bool = False


class DetectionCache(Generic[D]):
    """The detectors of at most `games` games, by game id (the least recently used dropped first)."""

    def __init__(self, games: int, on_commit: OnCommit) -> None:
        if games < 1:
            raise ValueError("a detection cache keeps at least one game")
        self.games = games
        self.on_commit = on_commit
        self.entries: OrderedDict[int, Entry[D]] = OrderedDict()
        self.lock = threading.Lock()

    def keep(self, game_id: int, entry: Entry[D]) -> None:
        """Keep `entry` as the game's (the most recently used)."""
        with self.lock:
            self.entries[game_id] = entry
            self.entries.move_to_end(game_id)
            while len(self.entries) > self.games:
                self.entries.popitem(last=False)

    def forget(self, game_id: int | None = None) -> None:
        """Drop the game's detector (all games' if None): what a restarted process starts from."""
        with self.lock:
            if game_id is None:
                self.entries.clear()
            else:
                self.entries.pop(game_id, None)

    def cached(self, game_id: int) -> bool:
        with self.lock:
            return game_id in self.entries

    def applying(self, game_id: int, entry: Entry[D], ordinal: int) -> None:
        """A step applied ball `ordinal` to `entry` (taken out by `before`): pending until the step's
        transaction commits, then the game's again."""
        entry.pending = True
        self.on_commit(lambda: self.settle(game_id, entry, ordinal))

    def settle(self, game_id: int, entry: Entry[D], ordinal: int) -> None:
        """Ball `ordinal`'s transaction committed: the entry standing there is the game's again."""
        if entry.index.ordinal == ordinal:
            entry.pending = False
            self.keep(game_id, entry)

    def before(
        self,
        game_id: int,
        fingerprint: Hashable,
        ordinal: int,
        *,
        balls: Callable[[], list[int]],
        build: Callable[[list[int]], D],
        peek: bool = False,
    ) -> Entry[D]:
        """The game's detector standing at ball `ordinal - 1` as committed: the cached one, caught up with
        the balls another process drew since, or one made by `build` at `balls()` (the game's balls before
        `ordinal`, in order). A step takes the entry out of the cache (`applying` puts it back on commit);
        a reader (`peek`) leaves the cache as it is and never touches an entry a step may be using."""
        with self.lock:
            entry = self.entries.get(game_id) if peek else self.entries.pop(game_id, None)
        usable = entry is not None and entry.fingerprint == fingerprint and not entry.pending
        if entry is not None and usable and entry.index.ordinal == ordinal - 1:
            return entry
        if peek:
            entry = None
        drawn = balls()
        if entry is not None and usable and entry.index.balls == drawn[: entry.index.ordinal]:
            entry.index.apply_all(drawn[entry.index.ordinal :])  # another process drew them since
            return entry
        return Entry(fingerprint, build(drawn))
