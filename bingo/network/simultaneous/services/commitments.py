"""The central's verifiable draw of a simultaneous game (issue 28), through bingo.draws.

- `commit` (in `central.open_sales`): the draw committed before the first card is sold anywhere; the
  commitment is audited in every member hall's chain and goes to the halls with the sales' opening
  (SB_SALES_OPENED "commitment").
- `close` (in `central.close_sales`, under the game's lock): the sales digest over every card of the
  network game as the central fixes them at the close. What the central knows of each card: its serial in
  the network series (the halls' reports, SB_SALE: runs of serials sold and taken back, per hall) and its
  numbers (the master card, recomputed from the series' seed, which the central made). A card is in the
  digest when its hall's reports counted it sold more often than returned, which is exactly the set
  `central._sold_at_central` accepts a claim of. Its serial in the digest is its serial in the series (the
  runs never overlap, so a serial names one card network-wide). The digest and the card count go to the
  halls with the close (SB_SALES_CLOSED "draw").
- `ball` (in `central.draw_ball`): the ball at the ordinal the seed and the digest give.
- `reveal` (a task the game's end enqueues; the beat for a lost one): the seed published, audited in every
  member hall's chain and sent on the network's stream (SB_DRAW_REVEALED); each hall checks it against the
  commitment it received before its sales opened and the balls it received (venue.draw_revealed).

With HALL_VERIFIABLE_DRAWS off nothing is committed and the central draws from the CSPRNG, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
from django.db import transaction

from bingo import cardgen
from bingo.cards import CARDS_PER_STRIP
from bingo.draws import feed
from bingo.draws import services as draws
from bingo.draws.models import DrawCommitment
from bingo.network.simultaneous.models import NetworkBall, NetworkGame, NetworkGameState, ReportedSale
from halls.actors import Actor
from halls.link.kinds import LinkKind
from halls.link.services import streams
from halls.services import audit

log = logging.getLogger("hall.simultaneous")

ROOM = (
    "simultaneous"  # the room's name in bingo.draws: the game's id in the sales text is "simultaneous-<code>"
)
MAX_BALL = 90
ACTOR = "draw"


def enabled() -> bool:
    return draws.enabled()


def committed(game: NetworkGame) -> DrawCommitment | None:
    return DrawCommitment.objects.filter(room=ROOM, game_ref=game.code).first()


def _audit(game: NetworkGame, actor: Actor, action: str, data: dict[str, Any], venues: Iterable[int]) -> None:
    for venue_id in venues:
        audit.record(
            venue_id=venue_id, actor=actor, action=action, obj=game, data={"game": game.code, **data}
        )


def commit(game: NetworkGame, venues: Iterable[int], actor: Actor) -> DrawCommitment | None:
    """The network game's draw committed (the game locked, its sales about to open), audited in the chain
    of each member hall; None with the setting off."""
    if not draws.enabled():
        return None
    # Its feed message is the central's, written after the halls' audit entries (services.feed).
    row = draws.commit_draw(
        venue_id=None, room=ROOM, game_ref=game.code, max_ball=MAX_BALL, actor=actor, fed=False
    )
    data = {"room": ROOM, "commitment": row.commitment, "key": row.key_id}
    _audit(game, actor, "simultaneous.draw_committed", data, venues)
    return row


def sold_serials(game: NetworkGame) -> list[int]:
    """The serials of the network series the halls' reports count sold at the central (sold more often
    than taken back), ascending: each hall's runs of sales +1 and returns -1 over its serials."""
    size = game.strips * CARDS_PER_STRIP
    counts = np.zeros(size + 2, dtype=np.int64)
    runs = ReportedSale.objects.filter(game=game).values_list("first_serial", "last_serial", "returned")
    for first, last, returned in runs:
        step = -1 if returned else 1
        counts[first] += step
        counts[last + 1] -= step
    return [int(s) for s in np.flatnonzero(np.cumsum(counts) > 0)]


def sales(game: NetworkGame) -> Iterator[tuple[str, bytes]]:
    """Every card of the network game as the sales digest takes it: its serial, its master card's numbers
    packed one byte a number (bingo.verifiable's fast way)."""
    serials = sold_serials(game)
    if not serials:
        return
    if game.generator == cardgen.V2:
        packed = cardgen.generate_series(game.seed.encode(), game.strips).packed()
        for serial in serials:
            yield str(serial), packed[serial - 1].tobytes().replace(b"\0", b"")  # blanks (0) dropped
        return
    rederived = cardgen.rederived_pairs(game.rederived_strips)
    for serial in serials:
        card = cardgen.recompute_card(game.generator, game.seed.encode(), serial, rederived)
        yield str(serial), bytes(sorted(card.numbers))


def close(game: NetworkGame, actor: Actor) -> DrawCommitment | None:
    """Fix the digest of the network game's sales (the game locked, its sales closing); None if it was
    not committed."""
    if committed(game) is None:
        return None
    return draws.close_sales(room=ROOM, game_ref=game.code, cards=sales(game), actor=actor)


def ball(game: NetworkGame, ordinal: int) -> int | None:
    """The ball due at `ordinal` of a committed game, or None (drawn by the CSPRNG)."""
    if not draws.enabled():
        return None
    row = committed(game)
    if row is None:
        return None
    return draws.ball_at(room=ROOM, game_ref=game.code, ordinal=ordinal, row=row)


# --- the reveal ---------------------------------------------------------------------------------------------

# bingo.network.simultaneous.apps registers the Celery door (tasks.enqueue_reveal): services import no tasks.
_enqueue_reveal: Callable[[int], None] | None = None


def register_reveal_enqueuer(enqueue: Callable[[int], None]) -> None:
    global _enqueue_reveal  # one door per process, set once at start-up
    _enqueue_reveal = enqueue


def reveal_after_commit(game: NetworkGame) -> None:
    """The game is over (closed or void, in the caller's transaction): a worker reveals its seed after."""
    if _enqueue_reveal is None or not draws.enabled():
        return
    enqueue, game_id = _enqueue_reveal, game.pk

    def send() -> None:
        try:
            enqueue(game_id)
        except Exception:  # the broker away: the beat's `reveal_due` reveals it
            log.warning("could not enqueue the reveal of network game %s: the beat will", game_id)

    transaction.on_commit(send)


def reveal(game_id: int, venues: Callable[[NetworkGame], list[int]], *, actor: Actor = ACTOR) -> bool:
    """Reveal the seed of a finished network game (a worker: it holds the key), audited in each member
    hall's chain, and send it to the halls; False if not committed, not finished or revealed already."""
    from bingo.network.simultaneous.services.locks import lock_network_game

    with transaction.atomic():
        game = lock_network_game(game_id)
        if game.state not in (NetworkGameState.CLOSED, NetworkGameState.VOID):
            return False
        row = committed(game)
        if row is None or row.seed or not row.sales_digest:
            return False
        row = draws.reveal(room=ROOM, game_ref=game.code, actor=actor, fed=False)
        data = {
            "room": ROOM,
            "seed": row.seed,
            "commitment": row.commitment,
            "sales_digest": row.sales_digest,
        }
        _audit(game, actor, "simultaneous.draw_revealed", data, venues(game))
        # The stream entry after every audit entry (halls.locks: AUDIT_HEAD before STREAM).
        streams.append(
            stream=game.stream,
            kind=LinkKind.SB_DRAW_REVEALED,
            payload={"game": game.code, "seed": row.seed, "commitment": row.commitment},
        )
        feed.revealed(row)  # the authority's feed: the seed, after the halls' audit entries
    return True


def reveal_due(venues: Callable[[NetworkGame], list[int]]) -> list[int]:
    """The beat's safety net: every finished network game whose seed is not revealed yet, revealed."""
    if not draws.enabled() or draws.private_key() is None:
        return []
    waiting = DrawCommitment.objects.filter(room=ROOM, seed="").exclude(sales_digest="")
    codes = list(waiting.values_list("game_ref", flat=True)[:100])
    finished = NetworkGame.objects.filter(
        code__in=codes, state__in=(NetworkGameState.CLOSED, NetworkGameState.VOID)
    )
    done = []
    for game_id in finished.values_list("pk", flat=True):
        try:
            if reveal(game_id, venues):
                done.append(game_id)
        except Exception:
            log.exception("the reveal of network game %s failed", game_id)
    return done


# --- what is published ------------------------------------------------------------------------------------


def draw_view(game: NetworkGame) -> dict[str, Any] | None:
    """The network game's draw as the central's API shows it (None: drawn without commitment)."""
    row = committed(game)
    if row is None:
        return None
    record = draws.as_record(row)
    return {
        "room": ROOM,
        "game": record.game,
        "status": record.status,
        "commitment": record.commitment,
        "sales_digest": record.sales_digest or None,
        "cards": record.cards if record.sales_digest else None,
        "seed": record.seed or None,
    }


class DrawReader:
    """A network game as bingo.draws' rooms registry reads it (registered by the wing's apps)."""

    def _game(self, game_ref: str) -> NetworkGame | None:
        return NetworkGame.objects.filter(code=game_ref).first()

    def balls(self, game_ref: str) -> list[int]:
        drawn = NetworkBall.objects.filter(game__code=game_ref).order_by("ordinal")
        return list(drawn.values_list("number", flat=True))

    def sales(self, game_ref: str) -> Iterable[tuple[str, Iterable[int]]]:
        game = self._game(game_ref)
        return [] if game is None else list(sales(game))

    def title(self, game_ref: str) -> str:
        from django.utils.translation import gettext as _

        return _("Network game %(code)s") % {"code": game_ref}

    def venue_id(self, game_ref: str) -> int | None:
        return None  # the central's game: every member hall's

    def golden(self, game_ref: str) -> int | None:
        return None  # its games have no golden ball

    def finished(self, game_ref: str) -> bool:
        game = self._game(game_ref)
        return game is not None and game.state in (NetworkGameState.CLOSED, NetworkGameState.VOID)
