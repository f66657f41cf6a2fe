"""The verifiable common draw of electronic and automatic bingo (issue 28), through bingo.draws.

- A game's draw is committed when its sales open (`commit`, in `games.start_next_game`'s transaction): the
  commitment is published on the speciality's stream, screens, terminals (their snapshot), API and recall.
- At the close of sales (`close`, under the game's lock, before the pools'), the digest of every card sold
  (serial: the card's id, its numbers: its cells but the free one) is fixed.
- Each ball of a committed game is the ball at its ordinal of the order the seed and the sales digest give
  (`ball`); the worker keeps that order in memory, a restarted one re-opens the sealed seed.
- After the game, a task the end's commit enqueues reveals the seed (`reveal`); the beat reveals any game
  whose task was lost (`reveal_due`).

With HALL_VERIFIABLE_DRAWS off nothing is committed and the balls come from the CSPRNG, as before. A game
that opened its sales with the setting off draws from the CSPRNG to its end (it has no commitment).
The golden ball (drawn once, at the close of sales, by the worker that closes them) is the seed's too
(`golden`: bingo.verifiable.golden_ball, its own key from the seed and the sales digest); the public page and
the standalone verifier (--golden) check it with the balls.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import numpy.typing as npt
from django.db import transaction
from django.utils.translation import gettext as _

from bingo.draws import services as draws
from bingo.draws.models import DrawCommitment
from bingo.electronic.models import EBall, EGameState, ElectronicGame
from bingo.electronic.prizetable import Rules
from bingo.electronic.services import detection
from bingo.electronic.services.steps import rules_of
from halls.actors import Actor

log = logging.getLogger("hall.electronic")

ROOM = "electronic"  # the room's name in bingo.draws (automatic bingo's games are the same wing's games)
ACTOR = "electronic"


def ref(game_id: int) -> str:
    """The game's id within the room, as bingo.draws keeps it (the sales text's game is "electronic-<id>")."""
    return str(game_id)


def commit(game: ElectronicGame, rules: Rules, actor: Actor) -> DrawCommitment | None:
    """The game's draw committed before its sales open (None with the setting off)."""
    if not draws.enabled():
        return None
    return draws.commit_draw(
        venue_id=game.speciality.venue_id,
        room=ROOM,
        game_ref=ref(game.pk),
        max_ball=rules.layout.max_number,
        actor=actor,
    )


def enabled() -> bool:
    return draws.enabled()


def committed(game_id: int) -> DrawCommitment | None:
    return DrawCommitment.objects.filter(room=ROOM, game_ref=ref(game_id)).first()


def sold(ids: npt.NDArray[np.int64], cells: npt.NDArray[np.uint8]) -> Iterator[tuple[str, list[int]]]:
    """Every card sold as the sales digest takes it: its id, its numbers (its cells but the free ones, 0)."""
    for card_id, row in zip(ids.tolist(), cells.tolist(), strict=True):
        yield str(card_id), [value for value in row if value]


def packed(ids: npt.NDArray[np.int64], cells: npt.NDArray[np.uint8]) -> list[tuple[str, bytes]]:
    """The same cards as `sold`, their numbers packed one byte a number (bingo.verifiable's fast way): each
    card's cells sorted, the free ones (0, first once sorted) dropped."""
    size = cells.shape[1] if cells.ndim == 2 else 0
    blob = np.sort(cells, axis=1).tobytes() if size else b""
    return [
        (str(card_id), blob[start : start + size].lstrip(b"\0"))
        for card_id, start in zip(ids.tolist(), range(0, len(blob), size or 1), strict=True)
    ]


def close(
    game: ElectronicGame, ids: npt.NDArray[np.int64], cells: npt.NDArray[np.uint8], actor: Actor
) -> DrawCommitment | None:
    """Fix the sales digest of a committed game (the game locked, its sold set final); None if uncommitted.
    Its audit entry is the caller's (`audit_close`), after the pools' locks."""
    if committed(game.pk) is None:
        return None
    cards = packed(ids, cells)
    return draws.close_sales(room=ROOM, game_ref=ref(game.pk), cards=cards, actor=actor, audited=False)


def audit_close(row: DrawCommitment | None, actor: Actor) -> None:
    if row is not None:
        draws.audit_sales_closed(row=row, actor=actor)


# A drawing game's commitment, kept by the worker (its sales digest is fixed, so the row no longer changes;
# a game drawing without one never gets one): no read of it per ball. The least recently used goes first.
_KEPT = 64
# Keyed by the game's id and creation time: an id the database gives again (SQLite reuses a rolled-back
# game's) is another game, never the one kept.
_drawing: OrderedDict[tuple[int, object], DrawCommitment | None] = OrderedDict()


def _of_drawing(game: ElectronicGame) -> DrawCommitment | None:
    key = (game.pk, game.created_at)
    if key in _drawing:
        _drawing.move_to_end(key)
        return _drawing[key]
    row = committed(game.pk)
    if row is None or row.sales_digest:
        _drawing[key] = row
        while len(_drawing) > _KEPT:
            _drawing.popitem(last=False)
    return row


def forget(game_id: int | None = None) -> None:
    """Drop what this process keeps of a game's draw (all if None): what a restarted worker starts from."""
    if game_id is None:
        _drawing.clear()
        return
    for key in [key for key in _drawing if key[0] == game_id]:
        del _drawing[key]
    draws.forget(room=ROOM, game_ref=ref(game_id))


def ball(game: ElectronicGame, ordinal: int) -> int | None:
    """The ball due at `ordinal` of a committed game, or None for a game drawn by the CSPRNG (the setting
    off, or no commitment). Raises bingo.draws.services.SeedUnavailable in a process without the key."""
    if not draws.enabled():
        return None
    row = _of_drawing(game)
    if row is None:
        return None
    return draws.ball_at(room=ROOM, game_ref=ref(game.pk), ordinal=ordinal, row=row)


def golden(row: DrawCommitment) -> int | None:
    """The golden ball of a committed game whose sales just closed (None with the setting off). Raises
    bingo.draws.services.SeedUnavailable in a process without the key."""
    if not draws.enabled():
        return None
    return draws.golden_at(room=ROOM, game_ref=row.game_ref, row=row)


# --- the reveal ---------------------------------------------------------------------------------------------

# bingo.electronic.apps registers the Celery door (tasks.enqueue_reveal) here: services import no tasks.
_enqueue_reveal: Callable[[int], None] | None = None


def register_reveal_enqueuer(enqueue: Callable[[int], None]) -> None:
    global _enqueue_reveal  # one door per process, set once at start-up
    _enqueue_reveal = enqueue


def reveal_after_commit(game: ElectronicGame) -> None:
    """The game is over (in the caller's transaction): once that commits, a worker reveals its seed."""
    if _enqueue_reveal is None or not draws.enabled():
        return
    enqueue, game_id = _enqueue_reveal, game.pk
    transaction.on_commit(lambda: _safely_enqueue(enqueue, game_id))


def _safely_enqueue(enqueue: Callable[[int], None], game_id: int) -> None:
    try:
        enqueue(game_id)
    except Exception:  # the broker away: the beat's `reveal_due` reveals it
        log.warning("could not enqueue the reveal of electronic game %s: the beat will", game_id)


def reveal(game_id: int, *, actor: Actor = ACTOR) -> DrawCommitment | None:
    """Reveal the seed of a finished game (a worker: it holds the key); None if it was never committed or
    is not finished."""
    state = ElectronicGame.objects.filter(pk=game_id).values_list("state", flat=True).first()
    if state != EGameState.CLOSED or committed(game_id) is None:
        return None
    return draws.reveal(room=ROOM, game_ref=ref(game_id), actor=actor)


def reveal_due() -> list[int]:
    """The beat's safety net: every closed game whose seed is not revealed yet (its task lost), revealed."""
    if draws.private_key() is None:
        return []  # a process without the drawing workers' key: theirs reveal
    waiting = DrawCommitment.objects.filter(room=ROOM, seed="").exclude(sales_digest="")
    refs = list(waiting.values_list("game_ref", flat=True)[:100])
    ids = [int(r) for r in refs if r.isdigit()]
    closed = ElectronicGame.objects.filter(pk__in=ids, state=EGameState.CLOSED)
    done = []
    for game_id in closed.values_list("pk", flat=True):
        try:
            draws.reveal(room=ROOM, game_ref=ref(game_id), actor=ACTOR)
        except Exception:
            log.exception("the reveal of electronic game %s failed", game_id)
            continue
        done.append(game_id)
    return done


# --- what bingo.draws reads of the room (its public page, its checks) ---------------------------------


class DrawReader:
    """An electronic game as bingo.draws' rooms registry reads it (registered by bingo.electronic.apps)."""

    def _game(self, game_ref: str) -> ElectronicGame | None:
        if not game_ref.isdigit():
            return None
        return ElectronicGame.objects.select_related("speciality", "version").filter(pk=int(game_ref)).first()

    def balls(self, game_ref: str) -> list[int]:
        if not game_ref.isdigit():
            return []
        drawn = EBall.objects.filter(game_id=int(game_ref)).order_by("ordinal")
        return list(drawn.values_list("number", flat=True))

    def sales(self, game_ref: str) -> Iterable[tuple[str, Iterable[int]]]:
        game = self._game(game_ref)
        if game is None:
            return []
        ids, cells = detection.card_cells(game, rules_of(game.version).layout.cells)
        return list(sold(ids, cells))

    def title(self, game_ref: str) -> str:
        game = self._game(game_ref)
        if game is None:
            return game_ref
        return _("%(speciality)s, game %(number)s") % {
            "speciality": game.speciality.name,
            "number": game.number,
        }

    def venue_id(self, game_ref: str) -> int | None:
        game = self._game(game_ref)
        return None if game is None else game.speciality.venue_id

    def finished(self, game_ref: str) -> bool:
        game = self._game(game_ref)
        return game is not None and game.state == EGameState.CLOSED

    def golden(self, game_ref: str) -> int | None:
        game = self._game(game_ref)
        number = (game.terms or {}).get("golden_ball") if game is not None else None
        return number if isinstance(number, int) else None
