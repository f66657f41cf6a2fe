"""The demo's casino tables: a póquer carrusel with two tables, and the hands they play by themselves.

The seed creates, through the services and only when missing (a restart keeps the pool, its meter and its
ledger), the pool "Carrusel Póquer": Melilla's póquer sin descarte carrusel (``ML_PSD_CARRUSEL``, spec §6.2:
royal flush takes the whole carrusel, straight flush 10 %), and its member tables "Demo Póquer 1" and 2.
No "Bolsa Blackjack": Melilla's only blackjack pack (``ML_BJ_PROGRESIVO``, art. 18.2) takes its paytable
from the authorisation and has no hand ordering to rank a blackjack hand with, so it is left out rather
than invented.

Each self-played hand goes through the services a croupier's console uses, one call per step (open_hand,
register_bets, register_cards, settle_hand); a hand left open by an interrupted step is finished next time.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from decimal import Decimal

from django.contrib.auth.models import User

from demo.hall import VENUE_LICENCE, DemoHall
from jackpots.models import Pool
from jackpots.poker import RANK_CHARS, Suit
from jackpots.services import pools
from jackpots.services.pools import LevelSpec
from jackpots.tables import rules
from jackpots.tables.models import CasinoTable, Hand, HandState, TableGame, TableState
from jackpots.tables.services import hands, tables
from jackpots.tables.services.table_pool import table_pack

POOL_CODE = "DEMO-ML-CARRUSEL"
POOL_NAME = "Carrusel Póquer"
RULE_PACK = "ML_PSD_CARRUSEL"
# The pack caps the pool bet at half the table minimum.
CAROUSEL_BET = Decimal("1.00")
TABLE_MINIMUM = Decimal("5.00")
SEED = Decimal("1000.00")  # the pack sets no minimum seed
CONTRIBUTION_RATE = Decimal("0.75")
RESERVE_RATE = Decimal("0.05")
# (number, name): the tables that play by themselves are the demo venue's tables named "Demo …".
TABLE_PREFIX = "Demo "
TABLES = ((1, "Demo Póquer 1"), (2, "Demo Póquer 2"))

# Games dealt as five cards per seat from one deck, with no community cards.
FIVE_CARD_GAMES = (TableGame.POKER_SIN_DESCARTE, TableGame.POKER_CON_DESCARTE)
# One hand in STRAIGHT_FLUSH_ODDS deals a seat a straight flush, one in ROYAL_ODDS a royal flush: the
# screens show a hit within a few minutes.
STRAIGHT_FLUSH_ODDS = 80
ROYAL_ODDS = 800
MIN_PLAYERS, MAX_PLAYERS = 2, 5

_rng = secrets.SystemRandom()  # the CSPRNG, as for every draw

DECK: tuple[str, ...] = tuple(rank + suit.value for suit in Suit for rank in RANK_CHARS)


def seed_tables(hall: DemoHall) -> None:
    venue = hall.venue
    actor = hall.operator
    pool = Pool.objects.filter(code=POOL_CODE).first()
    if pool is None:
        pool = pools.create_pool(
            name=POOL_NAME,
            code=POOL_CODE,
            jurisdiction=venue.jurisdiction,
            currency=venue.currency,
            authorisation_ref="DEMO — not an authorisation",
            rule_pack=RULE_PACK,
            venue=venue,
            levels=[
                LevelSpec(
                    name="Carrusel",
                    seed=SEED,
                    contribution_rate=CONTRIBUTION_RATE,
                    reserve_rate=RESERVE_RATE,
                )
            ],
            carousel_bet=CAROUSEL_BET,
            actor=actor,
        )
    for number, name in TABLES:
        table = CasinoTable.objects.filter(venue=venue, number=number).first()
        if table is None:
            table = tables.create_table(
                venue=venue,
                number=number,
                name=name,
                game=TableGame.POKER_SIN_DESCARTE,
                table_minimum=TABLE_MINIMUM,
                rule_pack=RULE_PACK,
                actor=actor,
            )
        if table.pool_id is None:
            tables.join_pool(table=table, pool=pool, actor=actor)
    hall.notes.append(
        f"pool {pool.name} ({pool.rule_pack}, pool bet {pool.carousel_bet} {pool.currency}): "
        f"tables {', '.join(name for _, name in TABLES)} play by themselves"
    )


# --- the self-playing tables ----------------------------------------------------------------------------


def playing_tables() -> list[CasinoTable]:
    """The demo venue's open "Demo …" tables that play for a pool: a real venue's tables are never touched."""
    return list(
        CasinoTable.objects.filter(
            venue__licence_number=VENUE_LICENCE,
            name__startswith=TABLE_PREFIX,
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
