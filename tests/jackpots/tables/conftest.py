"""Casino tables on a pool: venues per jurisdiction, croupiers, pools per rule pack, and a hand player.

Every pool here starts its meter at 10,000 € (the meter of the worked examples of spec §6.6 and §6.7) with
a pool bet of 1 € and, unless a test says otherwise, a contribution rate of 0, so the pool bets of the hand
do not move the meter and the payouts are exactly the spec's numbers.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models import Model

from halls.models import AuditEntry, Role, StaffRole, StreamCursor, Venue
from jackpots.models import Award, Contribution, LedgerMove, Pool, PoolLevel, PoolMember, PoolSettlement
from jackpots.rulepacks import PACKS, Game, JackpotKind
from jackpots.services import pools
from jackpots.services.pools import LevelSpec
from jackpots.tables import rules
from jackpots.tables.models import CasinoTable, Hand, SeatBet, SeatCards, SeatPayout
from jackpots.tables.services import hands, tables

D = Decimal
METER = D("10000")
BET = D("1.00")
MINIMUM = D("10.00")
ZERO = D(0)

_numbers = itertools.count(1)

# Every table a table command may write; AuditEntry catches any write that decides money or play.
WRITTEN: list[type[Model]] = [
    CasinoTable,
    Hand,
    SeatBet,
    SeatCards,
    SeatPayout,
    Contribution,
    PoolSettlement,
    Award,
    LedgerMove,
    PoolMember,
    AuditEntry,
    StreamCursor,
]


def row_counts() -> dict[str, int]:
    return {model.__name__: model._default_manager.count() for model in WRITTEN}


@contextmanager
def nothing_written() -> Iterator[None]:
    before = row_counts()
    yield
    assert row_counts() == before


def make_venue(jurisdiction: str) -> Venue:
    n = next(_numbers)
    return Venue.objects.create(
        name=f"Casino {jurisdiction} {n}",
        licence_number=f"TB-{jurisdiction}-{n:04d}",
        jurisdiction=jurisdiction,
    )


def make_user(name: str, venue: Venue, role: str = Role.CALLER) -> User:
    user = User.objects.create_user(username=name, password="pw-" + name)
    StaffRole.objects.create(user=user, venue=venue, role=role)
    return user


def make_pool(
    venue: Venue,
    actor: User,
    pack: str,
    *,
    seed: Decimal | None = None,
    start: Decimal = METER,
    bet: Decimal | None = BET,
    rate: Decimal = ZERO,
    reserve_rate: Decimal = ZERO,
    paytable: list[dict[str, Any]] | None = None,
) -> Pool:
    """A one-level pool of the pack: seed at the pack's minimum (at least 1,000), fixed jackpots at
    `start`; the meter brought to `start` by a recorded, authorised correction."""
    rule_pack = PACKS[pack]
    if seed is None:
        fixed = rule_pack.kind is JackpotKind.FIXED
        seed = start if fixed else max(rule_pack.minimum_seed(bet or BET), D(1000))
    pool = pools.create_pool(
        name=f"Pool {pack}",
        code=f"P{next(_numbers)}-{pack}"[:40],
        jurisdiction=PACKS[pack].jurisdiction,
        authorisation_ref="AUT-TABLES/2026",
        rule_pack=pack,
        venue=venue,
        levels=[LevelSpec(name="Jackpot", seed=seed, contribution_rate=rate, reserve_rate=reserve_rate)],
        carousel_bet=bet,
        actor=actor,
        authorised_paytable=paytable,
    )
    if start > seed:
        pools.correct_meter(
            level=PoolLevel.objects.get(pool=pool, position=0),
            amount_delta=start - seed,
            reason="the meter of the worked example",
            authorised_by=actor,
            actor=actor,
        )
    return pool


def make_table(
    venue: Venue,
    actor: User,
    pack: str,
    *,
    game: str | None = None,
    pool: Pool | None = None,
    minimum: Decimal = MINIMUM,
    seats: int | None = None,
) -> CasinoTable:
    table = tables.create_table(
        venue=venue,
        number=next(_numbers),
        name=f"Mesa {pack}",
        game=game or PACKS[pack].game,
        table_minimum=minimum,
        rule_pack=pack,
        actor=actor,
        seats=seats,
    )
    if pool is not None:
        table = tables.join_pool(table=table, pool=pool, actor=actor)
    return table


class Casino:
    """One venue of a jurisdiction with its operator and croupier, building pools and tables per pack."""

    def __init__(self, jurisdiction: str) -> None:
        self.venue = make_venue(jurisdiction)
        self.operator = make_user(f"op-{self.venue.pk}", self.venue, Role.OPERATOR)
        self.croupier = make_user(f"croupier-{self.venue.pk}", self.venue, Role.CALLER)

    def table(self, pack: str, **options: Any) -> CasinoTable:
        names = ("seed", "start", "bet", "rate", "reserve_rate", "paytable")
        pool_options = {k: options.pop(k) for k in names if k in options}
        pool = options.pop("pool", None) or make_pool(self.venue, self.operator, pack, **pool_options)
        return make_table(self.venue, self.operator, pack, pool=pool, **options)


@pytest.fixture
def casino(db: None) -> Any:
    """casino("AN10") -> a Casino of that jurisdiction."""
    return Casino


def stands(
    cards: str | Sequence[str], seat: int, *, discard: bool = False, extra: bool = False
) -> rules.SeatCardsInput:
    return rules.SeatCardsInput(seat=seat, cards=cards, discard=discard, extra_card=extra)


def play(
    table: CasinoTable,
    actor: User,
    cards: dict[int, str],
    *,
    discards: Sequence[int] = (),
    extra: Sequence[int] = (),
    community: str | None = None,
    initial: Decimal = MINIMUM,
    settle: bool = True,
) -> Hand:
    """One whole hand: open, a pool bet of the stipulated 1 € at each seat with cards, the cards, settle."""
    hand = hands.open_hand(table=table, actor=actor)
    bets = [rules.SeatBetInput(seat=seat, initial_bet=initial, pool_bet=BET) for seat in sorted(cards)]
    pack = PACKS[table.rule_pack]
    hand = hands.register_bets(hand=hand, actor=actor, bets=bets)
    if rules.is_manual_total(pack):
        hand = hands.register_bets(hand=hand, actor=actor, total=BET * len(bets))
    seats = [
        stands(text, seat, discard=seat in discards, extra=seat in extra)
        for seat, text in sorted(cards.items())
    ]
    hand = hands.register_cards(hand=hand, actor=actor, seats=seats, community=community)
    if settle:
        hand = hands.settle_hand(hand=hand, actor=actor)
    return hand


def payouts(hand: Hand) -> list[tuple[int, Decimal]]:
    """(seat, amount) in payment order."""
    return [(p.seat, p.amount) for p in SeatPayout.objects.filter(hand=hand).order_by("order")]


def meter(pool: Pool) -> Decimal:
    return PoolLevel.objects.get(pool=pool, position=0).amount


POKER_GAMES = {Game.POKER_SIN_DESCARTE, Game.POKER_CON_DESCARTE, Game.TRIPOQUER}
