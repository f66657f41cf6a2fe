"""The demo's self-playing casino tables: a Celery beat task that plays one hand per table per tick.

Which tables: only while ``settings.HALL_DEMO_TABLE_AUTOPLAY`` is on (default off; ``manage.py demo`` turns it
on for itself and the Celery processes it starts), and then only the demo venue's tables
(``halls.demo_seed.VENUE_LICENCE``) whose name starts with ``AUTOPLAY_PREFIX`` and that play for a pool. A
real venue's tables are never touched, and no model carries a demo flag.

Each hand goes through the same services a croupier's console uses, one service call per step: open_hand,
register_bets (the seats' pool bets contribute to the pool), register_cards, settle_hand (the engine pays
what the pack says). A hand left open by an interrupted tick is finished by the next one. Cards come from
a 52-card deck shuffled with the CSPRNG (``secrets``); now and then a seat is dealt a straight flush (more
rarely a royal flush) so the screens show a hit within a few minutes.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from decimal import Decimal

from celery import shared_task
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from halls.demo_seed import VENUE_LICENCE
from halls.errors import DomainError
from jackpots.poker import RANK_CHARS, Suit
from jackpots.tables import rules
from jackpots.tables.models import CasinoTable, Hand, HandState, TableGame, TableState
from jackpots.tables.services import hands
from jackpots.tables.services.common import table_pack

log = logging.getLogger("hall.jackpots.tables")

AUTOPLAY_USER = "autoplay"
AUTOPLAY_PREFIX = "Demo "
# Games dealt as five cards per seat from one deck, with no community cards.
FIVE_CARD_GAMES = (TableGame.POKER_SIN_DESCARTE, TableGame.POKER_CON_DESCARTE)
# One hand in STRAIGHT_FLUSH_ODDS deals a seat a straight flush, one in ROYAL_ODDS a royal flush.
STRAIGHT_FLUSH_ODDS = 80
ROYAL_ODDS = 800
MIN_PLAYERS, MAX_PLAYERS = 2, 5

_rng = secrets.SystemRandom()

DECK: tuple[str, ...] = tuple(rank + suit.value for suit in Suit for rank in RANK_CHARS)


def autoplay_actor() -> User:
    user, _ = get_user_model().objects.get_or_create(username=AUTOPLAY_USER, defaults={"is_active": False})
    return user


def playing_tables() -> list[CasinoTable]:
    return list(
        CasinoTable.objects.filter(
            venue__licence_number=VENUE_LICENCE,
            name__startswith=AUTOPLAY_PREFIX,
            pool__isnull=False,
            pool__active=True,
            state=TableState.OPEN,
            game__in=FIVE_CARD_GAMES,
        )
        .select_related("pool")
        .order_by("number")
    )


def _straight_flush(high: int) -> list[str]:
    """The five cards of a straight flush up to `high` (5..14; 14 = royal), in a random suit."""
    suit = _rng.choice(list(Suit)).value
    ranks = [high - i for i in range(5)]
    return [("A" if r == 1 else RANK_CHARS[r - 2]) + suit for r in ranks]


def deal(seats: Sequence[int], *, force: str = "") -> dict[int, list[str]]:
    """Five distinct cards per seat from one shuffled deck; `force` ("straight_flush" / "royal_flush")
    gives one random seat that hand first."""
    deck = list(DECK)
    _rng.shuffle(deck)
    dealt: dict[int, list[str]] = {}
    if force and seats:
        high = 14 if force == "royal_flush" else _rng.randint(5, 13)
        lucky = _straight_flush(high)
        dealt[_rng.choice(list(seats))] = lucky
        deck = [card for card in deck if card not in lucky]
    for seat in seats:
        if seat not in dealt:
            dealt[seat], deck = deck[:5], deck[5:]
    return dealt


def _force() -> str:
    if _rng.randrange(ROYAL_ODDS) == 0:
        return "royal_flush"
    if _rng.randrange(STRAIGHT_FLUSH_ODDS) == 0:
        return "straight_flush"
    return ""


def play_hand(table: CasinoTable, actor: User) -> str:
    """Play (or finish) one hand at the table; returns what happened, for logs and tests."""
    assert table.pool is not None
    hand = Hand.objects.filter(table=table, state=HandState.OPEN).first()
    if hand is None:
        hand = hands.open_hand(table=table, actor=actor)
    seats = sorted(hand.bets.values_list("seat", flat=True))
    if not seats:
        pack = table_pack(table)
        pool_bet = table.pool.carousel_bet or pack.max_pool_bet(table.table_minimum) or Decimal("1.00")
        players = _rng.randint(MIN_PLAYERS, min(MAX_PLAYERS, table.seats))
        seats = sorted(_rng.sample(range(1, table.seats + 1), players))
        bets = [rules.SeatBetInput(seat, table.table_minimum, pool_bet) for seat in seats]
        hand = hands.register_bets(hand=hand, actor=actor, bets=bets)
    if not hand.cards.exists():
        cards = deal(seats, force=_force())
        entries = [rules.SeatCardsInput(seat, cards[seat]) for seat in seats]
        hand = hands.register_cards(hand=hand, actor=actor, seats=entries)
    hand = hands.settle_hand(hand=hand, actor=actor)
    paid = [f"seat {p.seat} {p.category} {p.amount}" for p in hand.payouts.order_by("order")]
    done = f"{table.name} hand {hand.number}: {len(seats)} seats"
    return f"{done}, paid {'; '.join(paid)}" if paid else done


@shared_task(ignore_result=True)
def autoplay_tables() -> list[str]:
    """One hand at every demo table (beat, every HALL_TABLE_AUTOPLAY_SECONDS); a no-op unless the demo
    turned HALL_DEMO_TABLE_AUTOPLAY on."""
    if not getattr(settings, "HALL_DEMO_TABLE_AUTOPLAY", False):
        return []
    actor = autoplay_actor()
    done = []
    for table in playing_tables():
        try:
            done.append(play_hand(table, actor))
        except DomainError as exc:  # e.g. a croupier opened a hand by hand meanwhile: next tick
            log.info("autoplay skipped %s: %s", table, exc)
        except Exception:  # one table's failure must not stop the others
            log.exception("autoplay failed at %s", table)
    return done
