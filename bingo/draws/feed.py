"""The feed's game facts (halls.feed), said once for every wing: a game's commitment and its reveal (written
by bingo.draws' own services, or by a wing that audits more after them: `fed=False`), its sales at their
close, each ball, each prize decided and its end (written by each wing's services, in the transaction of the
fact, through the functions below).

Each message is written after its fact's audit entries and locks, where its event is: its number in the
installation's feed is the last lock the transaction takes (halls.locks.Rank.STREAM), as the link's outbox
messages are.

A game is named as bingo.draws names it: "<draw room>-<game ref>" ("traditional-12", "electronic-40",
"simultaneous-SB-7"); its "room" is the room as the venue names it, which each wing tells bingo.draws
(`register_room_label`). No payload carries a player's identity: a winning card is its serial.

The seed: "game.ended" is written at the game's end with seed null (the seed is revealed after the end
commits, by the worker that holds the key); the reveal writes "game.revealed" with the seed (one message
per fact, never a second game.ended).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal

from bingo.draws.models import DrawCommitment
from halls.feed.kinds import FeedKind
from halls.feed.services import facts
from halls.feed.services.emit import emit

# room (bingo.draws' name) -> label(game_ref): the room as the venue names it
_labels: dict[str, Callable[[str], str]] = {}


def register_room_label(room: str, label: Callable[[str], str]) -> None:
    """How a wing's games name their room in the feed (a traditional room's name, a speciality's name)."""
    _labels[room] = label


def room_label(room: str, game_ref: str) -> str:
    label = _labels.get(room)
    found = label(game_ref) if label is not None else ""
    return found or room


def game_name(room: str, game_ref: str) -> str:
    return f"{room}-{game_ref}"


def _head(venue_id: int | None, room: str, game_ref: str, label: str | None) -> dict[str, object]:
    return {
        "venue": facts.licence(venue_id),
        "room": label or room_label(room, game_ref),
        "game": game_name(room, game_ref),
    }


# -- written by bingo.draws ---------------------------------------------------------------------------------


def committed(row: DrawCommitment) -> None:
    if not facts.feed_on(row.venue_id):
        return
    payload = {
        **_head(row.venue_id, row.room, row.game_ref, None),
        "commitment": row.commitment,
        "committed_at": facts.instant(row.created_at),
    }
    emit(FeedKind.GAME_COMMITTED, payload, venue_id=row.venue_id, at=row.created_at)


def revealed(row: DrawCommitment) -> None:
    if not facts.feed_on(row.venue_id) or row.revealed_at is None:
        return
    payload = {
        **_head(row.venue_id, row.room, row.game_ref, None),
        "commitment": row.commitment,
        "seed": row.seed,
        "revealed_at": facts.instant(row.revealed_at),
    }
    emit(FeedKind.GAME_REVEALED, payload, venue_id=row.venue_id, at=row.revealed_at)


# -- written by the wings ---------------------------------------------------------------------------------


def sales_closed(
    *,
    venue_id: int | None,
    room: str,
    game_ref: str,
    label: str,
    cards: int,
    sales: Decimal,
    digest: str | None,
    closed_at: datetime,
) -> None:
    if not facts.feed_on(venue_id):
        return
    payload = {
        **_head(venue_id, room, game_ref, label),
        "cards": cards,
        "sales": facts.amount(sales),
        "sales_digest": digest or None,
        "closed_at": facts.instant(closed_at),
    }
    emit(FeedKind.GAME_SALES, payload, venue_id=venue_id, at=closed_at)


def ball(
    *, venue_id: int | None, room: str, game_ref: str, label: str, ordinal: int, number: int, at: datetime
) -> None:
    if not facts.feed_on(venue_id):
        return
    payload = {**_head(venue_id, room, game_ref, label), "ordinal": ordinal, "number": number}
    emit(FeedKind.GAME_BALL, payload, venue_id=venue_id, at=at)


def prize(
    *,
    venue_id: int | None,
    room: str,
    game_ref: str,
    label: str,
    prize: str,
    name: str,
    amount: Decimal,
    ordinal: int | None,
    cards: Sequence[str],
    pool: str | None = None,
    where: str | None,
    at: datetime | None = None,
) -> None:
    if not facts.feed_on(venue_id):
        return
    payload = {
        **_head(venue_id, room, game_ref, label),
        "prize": prize,
        "name": name,
        "amount": facts.amount(amount),
        "ordinal": ordinal,
        "cards": list(cards),
        "pool": pool,
        "where": where,
    }
    emit(FeedKind.GAME_PRIZE, payload, venue_id=venue_id, at=at)


def ended(
    *, venue_id: int | None, room: str, game_ref: str, label: str, void: bool, balls: int, at: datetime
) -> None:
    if not facts.feed_on(venue_id):
        return
    payload = {
        **_head(venue_id, room, game_ref, label),
        "state": "void" if void else "closed",
        "balls": balls,
        "seed": None,
    }
    emit(FeedKind.GAME_ENDED, payload, venue_id=venue_id, at=at)
