"""The winner detector of each electronic game, per process: built at the close of sales from the game's
cards, applied ball by ball inside each ball step's transaction.

The per-game cache is bingo.detection_cache's, as traditional bingo's (bingo.traditional.services.detection):
what a
ball decides never depends on the cache being right: an entry is used only when it stands exactly at the
ball before, as committed. An entry is taken out of the cache while a step uses it and put back only when
that step's transaction commits; a step that rolls back (or a process that never saw its commit) leaves no
entry, and the next step rebuilds it from the database: the game's cards and the balls drawn before it. So
a restarted worker, or a second one, decides the same prizes.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import numpy.typing as npt
from django.db import connection, transaction

from bingo.detection_cache import DetectionCache, Entry
from bingo.electronic.detector import BallResult, PatternIndex
from bingo.electronic.models import EBall, ECard, ElectronicGame
from bingo.electronic.prizetable import Rules

# Games whose detector a process keeps: a speciality's game drawing and the next one closing, a few
# specialities; the least recently used is dropped first.
CACHED_GAMES = 8

Fingerprint = tuple[str, int, datetime, datetime | None, int]

cache: DetectionCache[PatternIndex] = DetectionCache(CACHED_GAMES, transaction.on_commit)


def _fingerprint(game: ElectronicGame) -> Fingerprint:
    """What the game's card set is frozen by: the database, the game (and when it was made), its close of
    sales and the cards sold."""
    database = str(connection.settings_dict["NAME"])
    return (database, game.pk, game.created_at, game.sales_closed_at, game.cards_sold)


def sales_closed(
    game: ElectronicGame,
    rules: Rules,
    *,
    cards: tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]] | None = None,
) -> PatternIndex:
    """Build the game's detector (its cards are final now; `cards`: their `card_cells`, read already);
    kept once the close of sales commits."""
    entry = Entry(_fingerprint(game), _build(game, rules, cards))
    transaction.on_commit(lambda: cache.keep(game.pk, entry))
    return entry.index


class Step:
    """One ball step's hold on the game's detector (standing at the ball before, as committed): the numbers
    drawn so far, and `apply` for the new ball. The entry is out of the cache while the step holds it."""

    def __init__(self, game: ElectronicGame, entry: Entry[PatternIndex]) -> None:
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
        result = entry.index.apply(number)
        cache.applying(self.game_id, entry, ordinal)  # kept again once this transaction commits
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
    cache.forget(game_id)


def cached(game_id: int) -> bool:
    return cache.cached(game_id)


def _entry_before(
    game: ElectronicGame, rules: Rules, ordinal: int, *, keep: bool = False
) -> Entry[PatternIndex]:
    """The detector standing at ball `ordinal - 1` as committed: cached, caught up, or rebuilt (`keep`: a
    reader, which leaves the cache as it is)."""

    def balls() -> list[int]:
        return list(
            EBall.objects.filter(game=game, ordinal__lt=ordinal)
            .order_by("ordinal")
            .values_list("number", flat=True)
        )

    def build(drawn: list[int]) -> PatternIndex:
        index = _build(game, rules)
        index.apply_all(drawn)
        return index

    return cache.before(game.pk, _fingerprint(game), ordinal, balls=balls, build=build, peek=keep)


def _build(
    game: ElectronicGame,
    rules: Rules,
    cards: tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]] | None = None,
) -> PatternIndex:
    ids, cells = cards if cards is not None else card_cells(game, rules.layout.cells)
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
