"""The winner detector of each electronic game, per process: built at the close of sales from the game's
cards, applied ball by ball inside each ball step's transaction.

As in bingo.services.detection, what a ball decides never depends on the cache being right: an entry is used
only when it stands exactly at the ball before, as committed. An entry is taken out of the cache while a step
uses it and put back only when that step's transaction commits; a step that rolls back (or a process that
never saw its commit) leaves no entry, and the next step rebuilds it from the database: the game's cards and
the balls drawn before it. So a restarted worker, or a second one, decides the same prizes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt
from django.db import connection, transaction

from bingo.electronic.detector import BallResult, PatternIndex
from bingo.electronic.models import EBall, ECard, ElectronicGame
from bingo.electronic.prizetable import Rules

# Games whose detector a process keeps: a speciality's game drawing and the next one closing, a few
# specialities; the least recently used is dropped first.
CACHED_GAMES = 8

Fingerprint = tuple[str, int, datetime, datetime | None, int]


@dataclass
class _Entry:
    fingerprint: Fingerprint
    index: PatternIndex
    pending: bool = False  # a ball applied whose transaction has not been seen committed


_cache: OrderedDict[int, _Entry] = OrderedDict()
_lock = threading.Lock()


def _fingerprint(game: ElectronicGame) -> Fingerprint:
    """What the game's card set is frozen by: the database, the game (and when it was made), its close of
    sales and the cards sold."""
    database = str(connection.settings_dict["NAME"])
    return (database, game.pk, game.created_at, game.sales_closed_at, game.cards_sold)


def sales_closed(game: ElectronicGame, rules: Rules) -> PatternIndex:
    """Build the game's detector (its cards are final now); kept once the close of sales commits."""
    entry = _Entry(_fingerprint(game), _build(game, rules))
    transaction.on_commit(lambda: _keep(game.pk, entry))
    return entry.index


class Step:
    """One ball step's hold on the game's detector (standing at the ball before, as committed): the numbers
    drawn so far, and `apply` for the new ball. The entry is out of the cache while the step holds it."""

    def __init__(self, game: ElectronicGame, entry: _Entry) -> None:
        self.game_id = game.pk
        self.entry = entry

    @property
    def drawn(self) -> list[int]:
        return list(self.entry.index.balls)

    def apply(self, ordinal: int, number: int) -> BallResult:
        """Ball `ordinal` (`number`, just written; the game row locked): the cards completing each pattern."""
        entry = self.entry
        if entry.index.ordinal != ordinal - 1:
            raise ValueError(f"the detector stands at ball {entry.index.ordinal}, not {ordinal - 1}")
        entry.pending = True  # cleared when this transaction commits
        result = entry.index.apply(number)
        game_id = self.game_id
        transaction.on_commit(lambda: _settle(game_id, entry, ordinal))
        return result


def step(game: ElectronicGame, rules: Rules, ordinal: int) -> Step:
    """The detector for ball `ordinal` of the game (its row locked): cached, caught up or rebuilt."""
    return Step(game, _entry_before(game, rules, ordinal))


def apply(game: ElectronicGame, rules: Rules, ordinal: int, number: int) -> BallResult:
    """Ball `ordinal` (`number`, just written; the game row locked): the cards completing each pattern."""
    return step(game, rules, ordinal).apply(ordinal, number)


def index_of(game: ElectronicGame, rules: Rules) -> PatternIndex:
    """The game's detector at its balls as committed (for reading: "falta N"); not kept."""
    return _entry_before(game, rules, game.balls_drawn + 1, keep=True).index


def forget(game_id: int | None = None) -> None:
    """Drop the process's detector of a game (all if None): what a restarted process starts from."""
    with _lock:
        if game_id is None:
            _cache.clear()
        else:
            _cache.pop(game_id, None)


def cached(game_id: int) -> bool:
    with _lock:
        return game_id in _cache


def _keep(game_id: int, entry: _Entry) -> None:
    with _lock:
        _cache[game_id] = entry
        _cache.move_to_end(game_id)
        while len(_cache) > CACHED_GAMES:
            _cache.popitem(last=False)


def _settle(game_id: int, entry: _Entry, ordinal: int) -> None:
    if entry.index.ordinal == ordinal:
        entry.pending = False
        _keep(game_id, entry)


def _entry_before(game: ElectronicGame, rules: Rules, ordinal: int, *, keep: bool = False) -> _Entry:
    """The detector standing at ball `ordinal - 1` as committed: cached, caught up, or rebuilt."""
    fingerprint = _fingerprint(game)
    with _lock:
        entry = _cache.get(game.pk) if keep else _cache.pop(game.pk, None)
    usable = entry is not None and entry.fingerprint == fingerprint and not entry.pending
    if entry is not None and usable and entry.index.ordinal == ordinal - 1:
        return entry
    if keep:  # a reader: never touches an entry a step may be using
        entry = None
    balls = list(
        EBall.objects.filter(game=game, ordinal__lt=ordinal)
        .order_by("ordinal")
        .values_list("number", flat=True)
    )
    if entry is not None and usable and entry.index.balls == balls[: entry.index.ordinal]:
        entry.index.apply_all(balls[entry.index.ordinal :])  # another process drew them since
        return entry
    index = _build(game, rules)
    index.apply_all(balls)
    return _Entry(fingerprint, index)


def _build(game: ElectronicGame, rules: Rules) -> PatternIndex:
    ids, cells = card_cells(game, rules.layout.cells)
    return PatternIndex(rules.layout, ids, cells, rules.patterns())


def card_cells(game: ElectronicGame, size: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """The game's card ids (ascending) and their cells, (cards, size) uint8."""
    if connection.vendor == "postgresql":
        # One aggregate: 8-byte id + the cells per card, 100,000 cards arrive as one 2-3 MB value.
        sql = (
            f"SELECT count(*), string_agg(int8send(id) || cells, ''::bytea ORDER BY id) "  # noqa: S608
            f"FROM {ECard._meta.db_table} WHERE game_id = %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [game.pk])
            count, blob = cursor.fetchone()
        record = np.dtype([("id", ">i8"), ("cells", "u1", (size,))])
        raw = bytes(blob or b"")
        if len(raw) != count * record.itemsize:
            raise ValueError(f"electronic game {game.pk}: a card's cells are not {size} bytes")
        rows = np.frombuffer(raw, dtype=record)
        return rows["id"].astype(np.int64), np.ascontiguousarray(rows["cells"], dtype=np.uint8)
    # The embedded hall (SQLite): the same two columns through the ORM.
    pairs = list(ECard.objects.filter(game=game).order_by("id").values_list("id", "cells"))
    ids = np.array([p[0] for p in pairs], dtype=np.int64)
    cells = np.frombuffer(b"".join(bytes(p[1]) for p in pairs), dtype=np.uint8).reshape(len(pairs), size)
    return ids, cells
