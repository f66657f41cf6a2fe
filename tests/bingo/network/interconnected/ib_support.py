"""Three member halls of one network in one database (the link's loopback plays both roles), an
interconnected prize over them, and a hall's round game played with a known ball sequence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import User

from bingo.cards import CardGrid
from bingo.network.interconnected.models import NetworkPrize
from bingo.network.interconnected.services import prizes, venue
from bingo.traditional.models import Card, CardSeries, Game
from bingo.traditional.services import claims, draw, games, sales
from bingo.traditional.services import series as series_services
from halls.link.services import loopback, streams
from halls.link.services.inbox import Accepted
from halls.models import GameSession, HallCategory, Jurisdiction, Network, Role, Room, Venue
from halls.services import sessions
from tests.cashier_support import on_shift
from tests.conftest import ALL_BALLS, SEED, make_user

NETWORK = "MLNET"
PRIZE = "IB1"


@dataclass
class Hall:
    venue: Venue
    room: Room
    session: GameSession
    series: CardSeries
    operator: User
    caller: User
    cashier: User


def make_hall(n: int) -> Hall:
    venue = Venue.objects.create(
        name=f"Bingo {n}",
        licence_number=f"ML-B-{n:04d}",
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
    )
    operator = make_user(f"operator{n}", venue, Role.OPERATOR)
    caller = make_user(f"caller{n}", venue, Role.CALLER)
    cashier = make_user(f"cashier{n}", venue, Role.CASHIER)
    on_shift(cashier, venue)
    room = Room.objects.create(venue=venue, name="Sala 1", ball_pace_seconds=Decimal("0.5"))
    session = sessions.open_session(
        room=room, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )
    series = series_services.create_series(
        venue=venue, code="A", face_value=Decimal("2.00"), strips=10, actor=operator, seed=SEED
    )
    return Hall(venue, room, session, series, operator, caller, cashier)


def make_network(halls: Sequence[Hall]) -> Network:
    network = Network.objects.create(name="Red Melilla", code=NETWORK, jurisdiction=Jurisdiction.ML)
    network.venues.set([h.venue for h in halls])
    return network


def make_prize(
    network: Network, halls: Sequence[Hall], *, seed: str = "100.01", max_ball: int = 40
) -> NetworkPrize:
    prize = prizes.create_prize(
        network=network,
        code=PRIZE,
        name="Interconexionado Melilla",
        percent=Decimal("10"),
        max_ball=max_ball,
        seed=Decimal(seed),
        wait_seconds=900,
        authorisation_ref="ML-IB-2026/1",
        halls=[h.venue for h in halls],
        actor="central-operator",
    )
    for hall in halls:
        venue.join_room(room=hall.room, network=network, prize_code=PRIZE, actor=hall.operator)
    return prize


def follow() -> streams.Applied:
    return loopback.follow(stream=f"network.{NETWORK}")


def deliver(hall: Hall) -> list[Accepted]:
    return loopback.deliver(venue_id=hall.venue.pk)


def card_numbers(hall: Hall, serial: int) -> list[int]:
    grid = CardGrid.from_json(Card.objects.get(series=hall.series, serial=serial).grid)
    return sorted(grid.numbers)


def on_sale(hall: Hall, *, first: int = 1, cards: int = 30) -> Game:
    """A manual game of the hall with `cards` cards from `first` sold, its sales closed, its draw started."""
    game = games.create_game(room=hall.room, actor=hall.caller, draw_source="manual")
    games.open_sales(game=game, actor=hall.caller)
    sales.sell_range(game=game, series=hall.series, first=first, last=first + cards - 1, actor=hall.cashier)
    game = games.close_sales(game=game, actor=hall.caller)
    return games.start_draw(game=game, actor=hall.caller)


def bingo_at(hall: Hall, game: Game, *, serial: int, fillers: int) -> int:
    """Draw `fillers` numbers not on card `serial`, then its 15 numbers; claim and confirm its Bingo.
    Returns the Bingo's ordinal (fillers + 15)."""
    numbers = card_numbers(hall, serial)
    others = [n for n in range(1, 91) if n not in numbers][:fillers]
    for number in others + numbers:
        draw.enter_ball(game=game, number=number, actor=hall.caller)
    claim = claims.file_claim(game=game, kind="bingo", series_code="A", serial=serial, actor=hall.caller)
    assert claim.valid, claim.reason
    claims.confirm_claims(game=game, kind="bingo", actor=hall.caller)
    return claim.bound_ordinal
