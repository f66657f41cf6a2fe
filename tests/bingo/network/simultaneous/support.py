"""A network of three member halls in one database playing both roles (halls.link's loopback): each hall
with a room, an open session and a cashier on shift; a central operator; a scripted central draw."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.contrib.auth.models import User
from django.utils import timezone

from bingo.cards import CardGrid
from bingo.network.simultaneous.models import HallGame, NetworkGame
from bingo.network.simultaneous.services import central, venue
from bingo.traditional.models import Card
from halls.cashier.models import Till
from halls.link.services import loopback
from halls.models import GameSession, HallCategory, Jurisdiction, Network, Role, Room, StaffRole, Venue
from halls.services import sessions
from tests.cashier_support import on_shift
from tests.conftest import ALL_BALLS

LICENCES = ("ML-B-0101", "ML-B-0102", "ML-B-0103")


def make_user(username: str, venue: Venue | None = None, role: str | None = None) -> User:
    """A staff user without a password (these tests never log in: no slow hashing)."""
    user = User.objects.create(username=username)
    if venue is not None and role is not None:
        StaffRole.objects.create(user=user, venue=venue, role=role)
    return user


@dataclass
class Hall:
    venue: Venue
    room: Room
    session: GameSession
    caller: User
    cashier: User
    operator: User

    @property
    def licence(self) -> str:
        return self.venue.licence_number


def make_hall(n: int, licence: str) -> Hall:
    venue_row = Venue.objects.create(
        name=f"Bingo {n}",
        licence_number=licence,
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
        time_zone="Africa/Ceuta",
        line_percent=Decimal("10"),
        bingo_percent=Decimal("50"),
    )
    room = Room.objects.create(venue=venue_row, name="Sala 1", ball_pace_seconds=Decimal("0.5"))
    caller = make_user(f"caller{n}", venue_row, Role.CALLER)
    cashier = make_user(f"cashier{n}", venue_row, Role.CASHIER)
    operator = make_user(f"operator{n}", venue_row, Role.OPERATOR)
    on_shift(
        cashier, venue_row, float=Decimal("100.00"), till=Till.objects.create(venue=venue_row, name="Caja 1")
    )
    session = sessions.open_session(
        room=room, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )
    return Hall(venue_row, room, session, caller, cashier, operator)


@dataclass
class Net:
    network: Network
    halls: list[Hall]
    boss: User  # the central's operator

    def sync(self) -> None:
        """The link once each way: every hall's outbox to the central, the network stream to the halls."""
        for hall in self.halls:
            loopback.deliver(venue_id=hall.venue.pk)
        self.follow()

    def follow(self) -> None:
        """The network stream applied here, and the halls' kept entries applied (their task's work)."""
        loopback.follow(stream=f"network.{self.network.code}")
        venue.apply_entries()

    def hall_game(self, hall: Hall, game: NetworkGame) -> HallGame:
        return HallGame.objects.get(venue=hall.venue, code=game.code)


def make_network() -> Net:
    halls = [make_hall(n, licence) for n, licence in enumerate(LICENCES, start=1)]
    network = Network.objects.create(name="Red Melilla", code="MEL", jurisdiction=Jurisdiction.ML)
    network.venues.set([h.venue for h in halls])
    return Net(network, halls, make_user("central"))


def new_game(
    net: Net,
    *,
    code: str = "SB-1",
    strips: Sequence[int] = (2, 2, 2),
    price: str = "1.00",
    percents: tuple[str, str, str] = ("10", "40", "10"),
) -> NetworkGame:
    """A network game created, allocated, placed in each hall's room and on sale everywhere."""
    line, bingo, each_hall = (Decimal(p) for p in percents)
    game = central.create_game(
        network=net.network,
        code=code,
        card_price=Decimal(price),
        line_percent=line,
        bingo_percent=bingo,
        hall_percent=each_hall,
        sales_deadline=timezone.now() + timedelta(minutes=10),
        actor=net.boss,
        operation_id=f"op-{code}",
    )
    central.allocate(
        game=game, strips=[(h.licence, n) for h, n in zip(net.halls, strips, strict=True)], actor=net.boss
    )
    net.follow()
    for hall in net.halls:
        venue.place(hall_game=net.hall_game(hall, game), room=hall.room, actor=hall.operator)
    central.open_sales(game=game, actor=net.boss)
    net.follow()
    game.refresh_from_db()
    return game


def card(hall_game: HallGame, serial: int) -> CardGrid:
    assert hall_game.series is not None
    return CardGrid.from_json(Card.objects.get(series=hall_game.series, serial=serial).grid)


class Script:
    """The central's CSPRNG replaced by a scripted order of balls (then the lowest left)."""

    def __init__(self, order: Sequence[int]) -> None:
        self.order = list(order)

    def __call__(self, remaining: Sequence[int]) -> int:
        while self.order:
            number = self.order.pop(0)
            if number in remaining:
                return number
        return min(remaining)


def draw(game: NetworkGame, balls: int) -> Iterator[int]:
    """Draw `balls` more balls at the central (as its task would, one step after the other)."""
    for _ in range(balls):
        game.refresh_from_db()
        ball = central.draw_ball(game_id=game.pk, ordinal=game.balls_drawn + 1)
        assert ball is not None
        yield ball.number
