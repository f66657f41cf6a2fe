"""The per-game detection cache every game type's detector uses (bingo.detection_cache), without Django: a
recording detector, and a transaction hook the test commits or rolls back by hand."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from bingo.detection_cache import DetectionCache, Entry


class Recorder:
    """A detector that only remembers its balls, and how often it was built."""

    built = 0

    def __init__(self, balls: Iterable[int] = ()) -> None:
        Recorder.built += 1
        self.balls: list[int] = []
        self.apply_all(balls)

    @property
    def ordinal(self) -> int:
        return len(self.balls)

    def apply(self, ball: int) -> int:
        self.balls.append(ball)
        return ball

    def apply_all(self, balls: Iterable[int]) -> list[int]:
        return [self.apply(ball) for ball in balls]


class Transaction:
    """The hooks a step registered, run on commit and dropped on rollback."""

    def __init__(self) -> None:
        self.hooks: list[Callable[[], None]] = []

    def on_commit(self, hook: Callable[[], None]) -> None:
        self.hooks.append(hook)

    def commit(self) -> None:
        hooks, self.hooks = self.hooks, []
        for hook in hooks:
            hook()

    def rollback(self) -> None:
        self.hooks = []


DRAWN = [7, 42, 13, 88, 5]


def _cache(games: int = 4) -> tuple[DetectionCache[Recorder], Transaction]:
    tx = Transaction()
    return DetectionCache(games, tx.on_commit), tx


def _step(
    cache: DetectionCache[Recorder], tx: Transaction, game: int, ordinal: int, fp: str = "f"
) -> Recorder:
    """Ball `ordinal` of DRAWN applied as a ball step does (not yet committed)."""
    entry = cache.before(game, fp, ordinal, balls=lambda: DRAWN[: ordinal - 1], build=Recorder)
    entry.index.apply(DRAWN[ordinal - 1])
    cache.applying(game, entry, ordinal)
    return entry.index


def test_a_committed_step_is_used_by_the_next_and_a_rolled_back_one_is_rebuilt() -> None:
    cache, tx = _cache()
    Recorder.built = 0
    first = _step(cache, tx, 1, 1)
    assert not cache.cached(1)  # out of the cache while the step holds it
    tx.commit()
    assert cache.cached(1)
    second = _step(cache, tx, 1, 2)
    assert second is first and Recorder.built == 1
    tx.rollback()  # ball 2 never committed: its entry is gone
    assert not cache.cached(1)
    again = _step(cache, tx, 1, 2)
    assert again is not first and again.balls == DRAWN[:2] and Recorder.built == 2
    tx.commit()
    assert cache.entries[1].index is again and not cache.entries[1].pending


def test_an_entry_behind_catches_up_and_one_of_other_balls_or_cards_is_rebuilt() -> None:
    cache, tx = _cache()
    Recorder.built = 0
    behind = _step(cache, tx, 1, 1)
    tx.commit()
    # Another process drew balls 2 to 4 since: caught up, not rebuilt.
    caught = _step(cache, tx, 1, 5)
    assert caught is behind and caught.balls == DRAWN and Recorder.built == 1
    tx.commit()
    # Other cards (a new fingerprint): rebuilt.
    other = _step(cache, tx, 1, 3, fp="other sales")
    assert other is not behind and other.balls == DRAWN[:3] and Recorder.built == 2
    tx.commit()
    # Balls that differ from the ones the entry applied (a correction elsewhere): rebuilt.
    cache.keep(1, Entry("f", Recorder([7, 41])))
    rebuilt = cache.before(1, "f", 4, balls=lambda: DRAWN[:3], build=Recorder)
    assert rebuilt.index.balls == DRAWN[:3]


def test_a_pending_entry_is_never_used() -> None:
    cache, _tx = _cache()
    stuck = Entry("f", Recorder(DRAWN[:2]), pending=True)  # its commit was never seen
    cache.keep(1, stuck)
    found = cache.before(1, "f", 3, balls=lambda: DRAWN[:2], build=Recorder)
    assert found is not stuck and found.index.balls == DRAWN[:2]


def test_a_reader_peeks_without_taking_the_entry() -> None:
    cache, tx = _cache()
    _step(cache, tx, 1, 1)
    tx.commit()
    kept = cache.entries[1]
    assert cache.before(1, "f", 2, balls=list, build=Recorder, peek=True) is kept
    assert cache.cached(1)
    # A reader asking past the entry gets its own, and leaves the cached one untouched.
    read = cache.before(1, "f", 4, balls=lambda: DRAWN[:3], build=Recorder, peek=True)
    assert read is not kept and read.index.balls == DRAWN[:3] and kept.index.balls == DRAWN[:1]
    assert cache.entries[1] is kept


def test_the_least_recently_used_game_goes_first_and_forget_drops() -> None:
    cache, tx = _cache(games=2)
    for game in (1, 2):
        _step(cache, tx, game, 1)
    tx.commit()
    _step(cache, tx, 1, 2)  # game 1 used again: game 2 is now the oldest
    tx.commit()
    _step(cache, tx, 3, 1)
    tx.commit()
    assert [cache.cached(g) for g in (1, 2, 3)] == [True, False, True]
    cache.forget(1)
    assert [cache.cached(g) for g in (1, 3)] == [False, True]
    cache.forget()
    assert not cache.entries


def test_a_cache_keeps_at_least_one_game() -> None:
    with pytest.raises(ValueError, match="at least one game"):
        DetectionCache[Recorder](0, Transaction().on_commit)
