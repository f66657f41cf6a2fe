"""Commit, close, draw and reveal a verifiable draw (bingo.verifiable specifies the bytes).

The seed is made here, committed (its SHA-256 stored and audited) and sealed to the drawing workers' public
key (bingo.draws.seedbox); then it is forgotten. Only a process holding the private key
(HALL_DRAW_SEED_KEY_FILE: the workers) can open it again: to draw (`ball_at`, which keeps the game's order
in memory, so a restarted worker re-opens the sealed seed and goes on with the same sequence) and to reveal
it after the game. The web processes get HALL_DRAW_SEED_PUBLIC_KEY and no key file.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo import verifiable
from bingo.draws import feed, locks, seedbox
from bingo.draws.models import DrawCommitment
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput, NotFound, Unavailable
from halls.services import audit

_ORDERS_KEPT = 256  # games whose order a worker keeps in memory (a hall runs a few at a time)
_orders: OrderedDict[tuple[str, str, str, str], list[int]] = OrderedDict()


class SeedUnavailable(Unavailable):
    """This process does not hold the drawing workers' key (a web process), or the key is another one."""

    default_code = "seed_unavailable"


@dataclass(frozen=True)
class DrawRecord:
    """What may be published of a draw: the seed only once revealed."""

    room: str
    game_ref: str
    game: str
    max_ball: int
    commitment: str
    sales_digest: str
    cards: int
    seed: str
    committed_at: str
    sales_closed_at: str
    revealed_at: str

    @property
    def status(self) -> str:
        """committed (sales open) / sales_closed (drawing) / revealed."""
        if self.seed:
            return "revealed"
        return "sales_closed" if self.sales_digest else "committed"


def enabled() -> bool:
    """Whether RNG games draw from a committed seed (HALL_VERIFIABLE_DRAWS); off, they draw as before."""
    return bool(settings.HALL_VERIFIABLE_DRAWS)


# -- keys -------------------------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def _private_key(path: str, public_hex: str, may_create: bool) -> X25519PrivateKey | None:
    file = Path(path)
    if file.exists():
        return seedbox.read_key_file(file)
    if public_hex or not may_create:
        return None  # a web process: it seals to the published public key and never makes a key
    return seedbox.new_key_file(file)  # the embedded hall, development and the tests: one made on first use


def private_key() -> X25519PrivateKey | None:
    """The workers' key, when this process holds it."""
    return _private_key(
        settings.HALL_DRAW_SEED_KEY_FILE, settings.HALL_DRAW_SEED_PUBLIC_KEY, not settings.HALL_PRODUCTION
    )


def public_key() -> X25519PublicKey:
    """The key seeds are sealed to: HALL_DRAW_SEED_PUBLIC_KEY, or that of the key file held here."""
    if settings.HALL_DRAW_SEED_PUBLIC_KEY:
        return seedbox.public_from_hex(settings.HALL_DRAW_SEED_PUBLIC_KEY)
    key = private_key()
    if key is None:
        raise SeedUnavailable(_("No key to seal the draw's seed to: set HALL_DRAW_SEED_PUBLIC_KEY."))
    return key.public_key()


# -- commit, close, draw, reveal -----------------------------------------------------------------------------


def commit_draw(
    *, venue_id: int | None, room: str, game_ref: str, max_ball: int, actor: Actor, fed: bool = True
) -> DrawCommitment:
    """The game's commitment, made before its sales open (once: a second call returns the first), and its
    message on the authority's feed (`fed=False`: the caller writes it, after audit entries of its own)."""
    found = DrawCommitment.objects.filter(room=room, game_ref=game_ref).first()
    if found is not None:
        return found
    if max_ball not in verifiable.MAX_BALLS:
        raise InvalidInput(_("A verifiable draw has balls 1 to 75 or 1 to 90."), code="bad_max_ball")
    sealing_key = public_key()
    seed = verifiable.new_seed()
    row = DrawCommitment(
        room=room,
        game_ref=game_ref,
        venue_id=venue_id,
        max_ball=max_ball,
        commitment=verifiable.commit(seed),
        key_id=seedbox.key_id(sealing_key),
        created_at=timezone.now(),
    )
    row.sealed_seed = seedbox.seal(seed, sealing_key, row.game)
    del seed  # sealed: from here on only the workers' key opens it
    try:
        with transaction.atomic():
            row.save(force_insert=True)
            if venue_id is not None:
                data = {"room": room, "game": game_ref, "commitment": row.commitment, "key": row.key_id}
                audit.record(venue_id=venue_id, actor=actor, action="draw.committed", obj=row, data=data)
            if fed:
                feed.committed(row)  # the authority's feed: the commitment, before the sales open
    except IntegrityError:
        return DrawCommitment.objects.get(room=room, game_ref=game_ref)  # another request committed first
    return row


def _locked(room: str, game_ref: str) -> DrawCommitment:
    row = locks.lock_commitment(room, game_ref)
    if row is None:
        raise NotFound(_("This game's draw was never committed."), code="no_commitment")
    return row


def lock(*, room: str, game_ref: str) -> None:
    """Take the draw's lock now, in the caller's transaction: a wing whose close of sales takes locks of a
    higher rank (a program's pools) before the digest is fixed (`close_sales` then holds it already)."""
    _locked(room, game_ref)


def sales_of(row: DrawCommitment, cards: Iterable[tuple[str, Iterable[int]]]) -> verifiable.Sales:
    sold = tuple(verifiable.SoldCard(str(serial), tuple(numbers)) for serial, numbers in cards)
    return verifiable.Sales(game=row.game, max_ball=row.max_ball, cards=sold)


def close_sales(
    *,
    room: str,
    game_ref: str,
    cards: Iterable[tuple[str, bytes | Iterable[int]]],
    actor: Actor,
    audited: bool = True,
) -> DrawCommitment:
    """Fix the digest of the game's final sales (every card sold: its serial and its numbers, best packed
    one byte a number, `verifiable.canonical_sales_of`'s fast way); the same sales again change nothing,
    other sales are refused. `audited=False`: the caller writes its audit entry (`audit_sales_closed`)
    later in the same transaction, after locks ranked below the audit's that its close takes after this
    one's (electronic bingo's pools)."""
    with transaction.atomic():
        row = _locked(room, game_ref)
        cards = list(cards)
        try:
            digest = verifiable.sales_digest_of(row.game, row.max_ball, cards)
        except verifiable.SalesError as exc:
            raise InvalidInput(
                _("The game's sales cannot be digested: %(reason)s") % {"reason": exc}
            ) from exc
        if row.sales_digest:
            if row.sales_digest == digest:
                return row
            raise Conflict(
                _("The sales of this game were closed with digest %(closed)s; these sales give %(computed)s.")
                % {"closed": row.sales_digest, "computed": digest},
                code="sales_digest_differs",
            )
        row.sales_digest, row.cards, row.sales_closed_at = digest, len(cards), timezone.now()
        row.save(update_fields=["sales_digest", "cards", "sales_closed_at"])
        if audited:
            audit_sales_closed(row=row, actor=actor)
    return row


def audit_sales_closed(*, row: DrawCommitment, actor: Actor) -> None:
    """The audit entry of a draw's close of sales, in its venue's chain (a central's game has none here)."""
    if row.venue_id is not None:
        data = {"room": row.room, "game": row.game_ref, "sales_digest": row.sales_digest, "cards": row.cards}
        audit.record(venue_id=row.venue_id, actor=actor, action="draw.sales_closed", obj=row, data=data)


def _seed(row: DrawCommitment) -> bytes:
    """The sealed seed opened with this process's key, checked against its commitment."""
    key = private_key()
    if key is None:
        raise SeedUnavailable(_("This process does not hold the drawing workers' key."))
    if seedbox.key_id(key.public_key()) != row.key_id:
        raise SeedUnavailable(
            _("The draw's seed was sealed to key %(key)s, which this process does not hold.")
            % {"key": row.key_id}
        )
    try:
        seed = seedbox.open_sealed(row.sealed_seed, key, row.game)
    except seedbox.SealError as exc:
        raise Conflict(
            _("The draw's sealed seed does not open: it was altered."), code="seed_altered"
        ) from exc
    if verifiable.commit(seed) != row.commitment:
        raise Conflict(_("The draw's seed does not match its commitment."), code="seed_mismatch")
    return seed


def order(row: DrawCommitment) -> list[int]:
    """The game's whole order of balls (the worker keeps it: one HKDF and ChaCha20 pass per game)."""
    if not row.sales_digest:
        raise Conflict(_("The game's sales are still open: its balls are not fixed yet."), code="sales_open")
    key = (row.room, row.game_ref, row.commitment, row.sales_digest)  # a replaced commitment is another game
    found = _orders.get(key)
    if found is None:
        found = verifiable.balls(_seed(row), row.sales_digest, row.max_ball)
        _orders[key] = found
        while len(_orders) > _ORDERS_KEPT:
            _orders.popitem(last=False)
    else:
        _orders.move_to_end(key)
    return found


def golden_at(*, room: str, game_ref: str, row: DrawCommitment | None = None) -> int:
    """The game's golden ball (electronic bingo's golden-ball prize), from its seed and its sales digest:
    drawn once, at the close of sales, by the worker (it holds the key)."""
    row = row or DrawCommitment.objects.filter(room=room, game_ref=game_ref).first()
    if row is None:
        raise NotFound(_("This game's draw was never committed."), code="no_commitment")
    if not row.sales_digest:
        raise Conflict(_("The game's sales are still open: its balls are not fixed yet."), code="sales_open")
    return verifiable.golden_ball(_seed(row), row.sales_digest, row.max_ball)


def ball_at(*, room: str, game_ref: str, ordinal: int, row: DrawCommitment | None = None) -> int:
    """The ball due at position `ordinal` (from 1) of the game's draw."""
    row = row or DrawCommitment.objects.filter(room=room, game_ref=game_ref).first()
    if row is None:
        raise NotFound(_("This game's draw was never committed."), code="no_commitment")
    balls = order(row)
    if not 1 <= ordinal <= len(balls):
        raise InvalidInput(
            _("A game of %(count)s balls has no ball %(ordinal)s.")
            % {"count": len(balls), "ordinal": ordinal}
        )
    return balls[ordinal - 1]


def forget(*, room: str, game_ref: str) -> None:
    """Drop a game's order from this worker's memory (after its reveal; the tests' restarted worker)."""
    for key in [key for key in _orders if key[:2] == (room, game_ref)]:
        del _orders[key]


def reveal(*, room: str, game_ref: str, actor: Actor, fed: bool = True) -> DrawCommitment:
    """Publish the seed after the game (a worker: it holds the key); checked against the commitment first,
    so a seed that does not match is refused and nothing is written. Revealing twice changes nothing. Its
    message on the authority's feed with it (`fed=False`: the caller writes it after its audit entries)."""
    with transaction.atomic():
        row = _locked(room, game_ref)
        if row.seed:
            return row
        if not row.sales_digest:
            raise Conflict(
                _("The game's sales are still open: its seed cannot be revealed."), code="sales_open"
            )
        seed = _seed(row)
        row.seed, row.revealed_at = seed.hex(), timezone.now()
        row.save(update_fields=["seed", "revealed_at"])
        if row.venue_id is not None:
            data = {"room": room, "game": game_ref, "seed": row.seed, "commitment": row.commitment}
            audit.record(venue_id=row.venue_id, actor=actor, action="draw.revealed", obj=row, data=data)
        if fed:
            feed.revealed(row)  # the authority's feed: the seed, after the game
    forget(room=room, game_ref=game_ref)
    return row


# -- what is published ---------------------------------------------------------------------------------------


def _iso(value: object) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else ""


def as_record(row: DrawCommitment) -> DrawRecord:
    return DrawRecord(
        room=row.room,
        game_ref=row.game_ref,
        game=row.game,
        max_ball=row.max_ball,
        commitment=row.commitment,
        sales_digest=row.sales_digest,
        cards=row.cards,
        seed=row.seed,
        committed_at=_iso(row.created_at),
        sales_closed_at=_iso(row.sales_closed_at),
        revealed_at=_iso(row.revealed_at),
    )


def record(*, room: str, game_ref: str) -> DrawRecord | None:
    """The draw's public record, or None for a game drawn without commitment (a blower, the flag off)."""
    row = DrawCommitment.objects.filter(room=room, game_ref=game_ref).first()
    return None if row is None else as_record(row)


def check(
    *,
    room: str,
    game_ref: str,
    drawn: Iterable[int],
    sales: verifiable.Sales | None = None,
    golden: int | None = None,
) -> verifiable.Verification:
    """Recompute a revealed draw as anyone can: the seed against the commitment, the sales (when given)
    against the digest, the golden ball (when the game drew one), every ball against the order. Refused
    before the reveal."""
    row = DrawCommitment.objects.filter(room=room, game_ref=game_ref).first()
    if row is None:
        raise NotFound(_("This game's draw was never committed."), code="no_commitment")
    if not row.seed:
        raise Conflict(_("The draw's seed is revealed after the game."), code="not_revealed")
    if sales is not None:
        mismatch = verifiable.check_sales(sales, row.sales_digest)
        if mismatch is not None:
            return mismatch
    seed = verifiable.seed_from_hex(row.seed)
    return verifiable.verify(seed, row.commitment, row.sales_digest, drawn, row.max_ball, golden=golden)
