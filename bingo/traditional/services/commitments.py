"""Verifiable draws in traditional rooms (issue 28): the seed committed when an RNG game is created, the
sales digest fixed at the close of sales, each RNG ball derived from both, the seed revealed after the game.

The commitment, the sealed seed and the reveal are bingo.draws' (this module names the room and the game and
gives it the cards sold). A blower's game (draw source "manual") commits nothing: it records the balls the
reader read, as before, and says it is not verifiable by seed. With HALL_VERIFIABLE_DRAWS off, an RNG game
commits nothing either and draws with `secrets.choice`, as before.

A committed game that switches to a blower (TB-31) leaves the seed with the first ball that is not the seed's
(the RNG, back after it, draws with `secrets`); the public page verifies the balls drawn before the first
switch to a blower, and every ball after it is not verifiable by seed.

A sold card's serial in the digest is "<series code>-<serial, 4 digits at least>" (the last "-" splits
them, so two cards never share one); a series code outside the digest's characters is replaced by "x" and
16 hex digits of its SHA-256.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from collections.abc import Callable, Collection, Iterator
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError

from bingo.draws import services as draws
from bingo.draws.models import DrawCommitment
from bingo.traditional.models import Ball, DeviceSwitch, DrawSource, Game, GameState, SoldCard
from bingo.traditional.services.readmodels import DRAW_ROOM
from halls.actors import Actor

ROOM = DRAW_ROOM  # the room's name in bingo.draws' registry and its public page's address
MAX_BALL = 90
log = logging.getLogger("hall.draw")

REVEAL_GRACE = timedelta(seconds=30)
_SERIES_CODE = re.compile(r"[A-Za-z0-9._-]{1,40}")

# Enqueues the reveal (game id) in the worker, which holds the key: bingo.traditional.apps registers
# bingo.traditional.tasks' door here (services import no Celery task).
_enqueue_reveal: Callable[[int], None] | None = None
_ROWS_KEPT = 256  # games whose commitment a worker keeps in memory (a hall draws a few at a time)
_rows: dict[int, DrawCommitment] = {}


class SeedSequenceBroken(RuntimeError):
    """A game whose commitment was published has none in bingo.draws: the draw stops."""


def register_reveal_enqueuer(enqueue: Callable[[int], None]) -> None:
    global _enqueue_reveal  # one door per process, set once at start-up
    _enqueue_reveal = enqueue


def game_ref(game_id: int) -> str:
    """The game's reference in bingo.draws (its id; the sales digest's game id is "traditional-<id>")."""
    return str(game_id)


def card_serial(series_code: str, serial: int) -> str:
    """A sold card's serial in the sales digest: its series and serial as the winner reads them ("A-0345");
    a series code with characters the digest does not take is written as "x" and 16 hex of its SHA-256."""
    if not _SERIES_CODE.fullmatch(series_code):
        series_code = "x" + hashlib.sha256(series_code.encode()).hexdigest()[:16]
    return f"{series_code}-{serial:04d}"


def commit(*, game: Game, actor: Actor) -> None:
    """In the game's creation: commit an RNG game's draw (before its sales open) and publish the
    commitment on the game."""
    if game.draw_source != DrawSource.RNG or not draws.enabled():
        return
    committed = draws.commit_draw(
        venue_id=game.room.venue_id, room=ROOM, game_ref=game_ref(game.pk), max_ball=MAX_BALL, actor=actor
    )
    game.draw_commitment = committed.commitment
    game.save(update_fields=["draw_commitment"])


def sold_cards(game_id: int) -> Iterator[tuple[str, bytes]]:
    """Every card sold in the game: (its serial in the digest, its 15 numbers packed one byte a number, as
    bingo.verifiable's fast way takes them)."""
    rows = (
        SoldCard.objects.filter(game_id=game_id)
        .values_list("card__series__code", "card__serial", "card__numbers")
        .order_by()
    )
    fetched = list(rows)  # one round trip (100,000 cards: a few MB), not a server-side cursor's many
    # series code -> "<code in the digest>-" (a game sells a few series): one card_serial per series
    prefixes = {code: card_serial(code, 0)[:-4] for code in {row[0] for row in fetched}}
    yield from [(f"{prefixes[code]}{serial:04d}", bytes(packed)) for code, serial, packed in fetched]


def lock(*, game: Game) -> None:
    """Early in the close of sales: the draw's commitment locked before the programs' pools (halls.locks)."""
    if game.draw_commitment:
        draws.lock(room=ROOM, game_ref=game_ref(game.pk))


def close_sales(*, game: Game, actor: Actor) -> None:
    """In the close of sales: fix the sales digest over every card sold (the balls depend on it)."""
    if game.draw_commitment:
        draws.close_sales(room=ROOM, game_ref=game_ref(game.pk), cards=sold_cards(game.pk), actor=actor)


def _commitment(game_id: int, commitment: str) -> DrawCommitment:
    """The game's commitment, kept in this worker's memory once its sales digest is fixed (then nothing of
    it the draw reads can change: bingo.draws' triggers), so a step reads no more rows than before. The
    commitment the game publishes must be the one kept (else it is read again)."""
    row = _rows.get(game_id)
    if row is None or row.commitment != commitment:
        row = DrawCommitment.objects.filter(room=ROOM, game_ref=game_ref(game_id)).first()
        if row is None:  # a published commitment with no draw behind it: no ball from anything else
            raise SeedSequenceBroken(f"game {game_id}: its commitment is not in bingo.draws")
        if row.sales_digest:
            _rows[game_id] = row
            while len(_rows) > _ROWS_KEPT:
                _rows.pop(next(iter(_rows)))
    return row


def forget(game_id: int) -> None:
    """Drop what this worker keeps of a game (its commitment, its order): a restarted worker's memory."""
    _rows.pop(game_id, None)
    draws.forget(room=ROOM, game_ref=game_ref(game_id))


def next_rng_ball(game: Game, ordinal: int, drawn: Collection[int]) -> int:
    """The number the RNG draws at ``ordinal``: the seed's while every ball drawn so far is the seed's (a
    committed game that never left it), else the CSPRNG's among the balls not drawn (a committed game after
    a blower's ball, TB-31; a game without commitment)."""
    if game.draw_commitment:
        order = draws.order(_commitment(game.pk, game.draw_commitment))
        if set(order[: ordinal - 1]) == set(drawn):
            return order[ordinal - 1]
    return secrets.choice([n for n in range(1, MAX_BALL + 1) if n not in drawn])


def game_ended(game: Game) -> None:
    """In the transaction that closes or voids a committed game whose sales closed: reveal its seed once that
    commits (in the worker, which holds the key)."""
    if not game.draw_commitment or game.sales_closed_at is None:
        return  # nothing committed, or voided on sale: the seed drew nothing and stays sealed
    if _enqueue_reveal is None:
        raise RuntimeError("no reveal enqueuer registered (bingo.traditional.apps registers the task's)")
    game_id = game.pk
    transaction.on_commit(lambda: _send_reveal(game_id))


def _send_reveal(game_id: int) -> None:
    """Enqueue the reveal; with the broker away, log it and leave it to the reaper (`unrevealed`), not fail
    the caller's command, which has committed."""
    assert _enqueue_reveal is not None
    try:
        _enqueue_reveal(game_id)
    except OperationalError as exc:
        log.warning("could not enqueue the reveal of game %s (%s): the reaper will", game_id, exc)


def reveal(*, game_id: int, actor: Actor) -> None:
    """The worker's reveal of an ended game's seed (a repeat is a no-op: bingo.draws keeps the first)."""
    draws.reveal(room=ROOM, game_ref=game_ref(game_id), actor=actor)
    _rows.pop(game_id, None)  # drawn out: nothing more to keep


def unrevealed(limit: int = 50) -> list[int]:
    """Ended committed games whose seed is not revealed yet (a reveal lost with the broker): the reaper's."""
    pending = (
        DrawCommitment.objects.filter(room=ROOM, seed="")
        .exclude(sales_digest="")
        .values_list("game_ref", flat=True)
    )
    ended = Game.objects.filter(
        pk__in=[int(ref) for ref in pending.order_by("pk")[: limit * 4] if ref.isdigit()],
        state__in=[GameState.CLOSED, GameState.VOID],
        # Its own task had time to run: the reaper picks up only what a broker outage lost.
        closed_at__lt=timezone.now() - REVEAL_GRACE,
    ).exclude(draw_commitment="")
    return list(ended.order_by("pk").values_list("pk", flat=True)[:limit])


# -- what bingo.draws publishes of a traditional game (its rooms registry) -------------------------------


class Reader:
    """The traditional room's games as bingo.draws' public page reads them."""

    @staticmethod
    def _game(ref: str) -> Game | None:
        if not ref.isdigit():
            return None
        return Game.objects.select_related("room").filter(pk=int(ref)).exclude(draw_commitment="").first()

    def balls(self, game_ref: str) -> list[int]:
        """The balls drawn from the seed, in order: all of them, or those before a switch to a blower."""
        game = self._game(game_ref)
        if game is None:
            return []
        balls = Ball.objects.filter(game=game).order_by("ordinal")
        switch = DeviceSwitch.objects.filter(game=game, to_source=DrawSource.MANUAL).order_by("pk").first()
        if switch is not None:
            balls = balls.filter(ordinal__lte=switch.at_ordinal)
        return list(balls.values_list("number", flat=True))

    def sales(self, game_ref: str) -> Iterator[tuple[str, bytes]]:
        game = self._game(game_ref)
        return sold_cards(game.pk) if game is not None else iter(())

    def title(self, game_ref: str) -> str:
        from django.utils.translation import gettext as _

        game = self._game(game_ref)
        if game is None:
            return ""
        return _("%(room)s · Game %(number)s") % {"room": game.room.name, "number": game.number}

    def venue_id(self, game_ref: str) -> int | None:
        game = self._game(game_ref)
        return game.room.venue_id if game is not None else None

    def golden(self, game_ref: str) -> int | None:
        return None  # its games have no golden ball

    def finished(self, game_ref: str) -> bool:
        game = self._game(game_ref)
        return game is not None and game.state in (GameState.CLOSED, GameState.VOID)
