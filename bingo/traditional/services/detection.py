"""Winner detection built once per game: the index at the close of sales, each ball's completions recorded
in that ball's transaction.

The index (bingo.detect_index) is built from the sold cards' packed numbers when sales close and kept in a
per-process cache keyed by game. A ball step (under the game's row lock) applies its ball to the cached
index and inserts the cards that completed their first line or their bingo with it as `Completion` rows,
in the ball's transaction (one row per ball and kind holding the cards' ids, so the 90th ball of a big
game, completing a sixth of its cards, still writes at most two rows): a rolled-back step records
nothing, a repeated step never gets here (the draw refuses a done ordinal) and the unique constraint
would refuse it anyway. `rebuild_completions` records a game's completions again from its stored balls.

What is recorded never depends on the cache being right: an entry is used only when it stands exactly at
the ball before, as committed. An entry whose last ball has not been seen committed (its transaction
raised, or the process's commit hooks never ran) is dropped and rebuilt from the database: the sold
cards' packed numbers and the balls drawn. So a restarted worker, a second worker or a web process
entering a caller's balls all record the same rows.

The frozen part of the index (card ids, number -> rows) is also written to a file at the close of sales
(HALL_DETECTOR_DIR), so another process of the host maps it instead of loading every sold card again; a
missing or unreadable file only means the database rebuild.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from bingo import detect_index
from bingo.detect_index import PACKED_LENGTH, BallCompletions, GameIndex, build, card_ids, pack_ids
from bingo.detection_cache import DetectionCache, Entry
from bingo.traditional.models import Ball, Card, ClaimKind, Completion, Game, SoldCard

# Games whose index a process keeps (about 72 MB each at a million cards sold): a room's game in play and
# the next few; the least recently used is dropped first.
CACHED_GAMES = 4
# Index files kept on the host (the newest): the games in play and some just closed.
KEPT_FILES = 8

log = logging.getLogger("hall.detection")

Fingerprint = tuple[str, int, datetime, datetime | None, int, int]

# The process's indexes (bingo.detection_cache: the one per-game cache of every game type's detector).
cache: DetectionCache[GameIndex] = DetectionCache(CACHED_GAMES, transaction.on_commit)


def _postgresql() -> bool:
    """PostgreSQL gets one-statement loads and inserts; any other database (the embedded SQLite) the ORM's."""
    return connection.vendor == "postgresql"


def _fingerprint(game: Game) -> Fingerprint:
    """What the sold set is frozen by: the database, the game (and when it was made, should a restored
    database hand its id out again), when its sales closed and how many cards were sold; and how many of
    its balls were corrected, so an index applied to the balls before a correction is not used again."""
    database = str(connection.settings_dict["NAME"])
    sold = (database, game.pk, game.created_at, game.sales_closed_at, game.cards_sold)
    return (*sold, game.balls_corrected)


def sales_closed(game: Game) -> GameIndex:
    """Build the game's index (sales are frozen now) and keep it once the close of sales commits."""
    fingerprint = _fingerprint(game)
    ids, packed = sold_numbers(game)
    entry = Entry(fingerprint, build(ids, packed))

    def committed() -> None:
        cache.keep(game.pk, entry)
        _write_file(fingerprint, entry.index)

    transaction.on_commit(committed)
    return entry.index


def record_ball(game: Game, ball: Ball) -> BallCompletions:
    """Apply `ball` (just appended, game row locked) and record the completions it made."""
    entry = _entry_before(game, ball.ordinal)
    done = entry.index.apply(ball.number)
    _insert(game, done)
    cache.applying(game.pk, entry, ball.ordinal)  # kept again once this transaction commits
    return done


def forget(game_id: int | None = None) -> None:
    """Drop the process's index of a game (all games if None): what a restarted process starts from."""
    cache.forget(game_id)


def _entry_before(game: Game, ordinal: int) -> Entry[GameIndex]:
    """The game's index standing at ball `ordinal - 1` as committed: cached, caught up (another process
    drew the balls since: their completions are recorded already), or rebuilt."""
    fingerprint = _fingerprint(game)

    def balls() -> list[int]:
        return list(
            Ball.objects.filter(game=game, ordinal__lt=ordinal)
            .order_by("ordinal")
            .values_list("number", flat=True)
        )

    return cache.before(
        game.pk, fingerprint, ordinal, balls=balls, build=lambda drawn: _build(game, fingerprint, drawn)
    )


def _build(game: Game, fingerprint: Fingerprint, balls: list[int]) -> GameIndex:
    """The index at `balls`: from the host's file of the game if there is a good one, else the database."""
    path = _file(fingerprint)
    if path is not None and path.exists():
        try:
            index = detect_index.load(path)
        except (OSError, ValueError) as exc:
            log.warning("index file %s unusable (%s): rebuilt from the database", path, exc)
        else:
            if _sold_here(game, index):
                index.apply_all(balls)
                return index
            log.warning("index file %s is not of game %s's sales: rebuilt from the database", path, game.pk)
    ids, packed = sold_numbers(game)
    index = build(ids, packed)
    _write_file(fingerprint, index)  # sales are frozen: right whether or not this ball commits
    index.apply_all(balls)
    return index


def _sold_here(game: Game, index: GameIndex) -> bool:
    """A cheap check that a file holds this game's sales: as many cards, and a sample of them sold here."""
    if index.cards != game.cards_sold:
        return False
    sample = sorted({int(i) for i in index.card_ids[:: max(1, index.cards // 16)]})
    return SoldCard.objects.filter(game=game, card_id__in=sample).count() == len(sample)


def _file(fingerprint: Fingerprint) -> Path | None:
    directory = settings.HALL_DETECTOR_DIR
    if not directory:
        return None
    # Named by the sales alone (not the corrections): what the file holds does not depend on the balls.
    name = hashlib.sha256(repr(fingerprint[:5]).encode()).hexdigest()[:32]
    return Path(directory) / f"game-{fingerprint[1]}-{name}.idx"


def _write_file(fingerprint: Fingerprint, index: GameIndex) -> None:
    """Save the frozen part for the host's other processes and drop the oldest files; never fails a step."""
    path = _file(fingerprint)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        detect_index.save(index, path)
        files = sorted(path.parent.glob("game-*.idx"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in files[KEPT_FILES:]:
            old.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("index file %s not written: %s", path, exc)


def sold_numbers(game: Game) -> tuple[np.ndarray, bytes]:
    """The sold cards' ids and their packed numbers (15 bytes each, in the same order)."""
    if _postgresql():
        # One aggregate of 8-byte id + 15 bytes per card: a million cards arrive as one 23 MB value.
        sql = (
            f"SELECT count(*), string_agg(int8send(s.card_id) || c.numbers, ''::bytea) "  # noqa: S608
            f"FROM {SoldCard._meta.db_table} s JOIN {Card._meta.db_table} c ON c.id = s.card_id "
            "WHERE s.game_id = %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [game.pk])
            count, blob = cursor.fetchone()
        record = np.dtype([("id", ">i8"), ("numbers", "u1", (PACKED_LENGTH,))])
        raw = bytes(blob or b"")
        if len(raw) != count * record.itemsize:
            raise ValueError(f"game {game.pk}: a sold card has no packed numbers")
        rows = np.frombuffer(raw, dtype=record)
        return rows["id"].astype(np.int64), rows["numbers"].tobytes()
    # The embedded hall (SQLite): the same two columns through the ORM.
    pairs = list(SoldCard.objects.filter(game=game).values_list("card_id", "card__numbers"))
    return np.array([p[0] for p in pairs], dtype=np.int64), b"".join(bytes(p[1]) for p in pairs)


def _insert(game: Game, done: BallCompletions) -> None:
    """The ball's completions: one row per kind that has any (nothing at all for most balls)."""
    Completion.objects.bulk_create(_rows(game, done))


def _rows(game: Game, done: BallCompletions) -> list[Completion]:
    return [
        Completion(game=game, kind=kind, ordinal=done.ordinal, count=int(ids.size), cards=pack_ids(ids))
        for kind, ids in ((ClaimKind.LINE, done.lines), (ClaimKind.BINGO, done.bingos))
        if ids.size
    ]


def rebuild_completions(game: Game) -> list[BallCompletions]:
    """Record the game's completions again from its stored balls, replacing those recorded.

    For a change to balls already drawn (a mis-keyed ball corrected): call it in that change's
    transaction, with the game's row locked, after the balls are written. This process's index of the
    game is replaced by the one built here once the transaction commits; other processes find theirs
    no longer matching the stored balls and rebuild it on their next ball.
    """
    balls = list(Ball.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))
    forget(game.pk)
    fingerprint = _fingerprint(game)
    entry = Entry(fingerprint, _build(game, fingerprint, []))
    done = entry.index.apply_all(balls)
    Completion.objects.filter(game=game).delete()
    Completion.objects.bulk_create(row for ball in done for row in _rows(game, ball))
    cache.applying(game.pk, entry, len(balls))  # kept once this transaction commits
    return done


def recorded_completions(game: Game) -> set[tuple[str, int, int]]:
    """Every recorded completion of the game as (kind, card id, ordinal): for checks and tests, not views
    (it reads every row whole)."""
    rows = Completion.objects.filter(game=game).values_list("kind", "ordinal", "cards")
    return {(kind, int(card), ordinal) for kind, ordinal, cards in rows for card in card_ids(cards)}
