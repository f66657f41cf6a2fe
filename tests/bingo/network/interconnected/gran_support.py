"""Three member halls with an automatic-bingo speciality each, in one database (the link's loopback plays
both roles), a network Gran Línea / Gran Bingo over them, and a hall's game played with known balls."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User

from bingo.electronic.models import EGameState, ElectronicGame, Speciality, Terminal
from bingo.electronic.services import games
from bingo.network.interconnected.models import NetworkPrize, PrizeKind
from bingo.network.interconnected.services import gran, prizes
from halls.cashier.models import PlayerCard
from halls.link.services import loopback, streams
from halls.link.services.inbox import Accepted
from halls.models import HallCategory, Jurisdiction, Network, Role, Venue
from tests.bingo.electronic.support import (
    RULES_AUTOMATIC,
    buy,
    draw_to_end,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.bingo.electronic.test_game_known_balls import C1, C3
from tests.conftest import make_user

NETWORK = "MLGRAN"
ROW1, REST = list(C1[:5]), list(C1[5:])
# Numbers on neither card: they hold a Line or a Bingo back for as many balls as wanted.
FILLERS = [n for n in range(1, 91) if n not in C1 and n not in C3]


@dataclass
class EHall:
    venue: Venue
    operator: User
    cashier: User
    speciality: Speciality
    terminal: Terminal


def make_ehall(n: int, rules: dict[str, Any] | None = None) -> EHall:
    venue = Venue.objects.create(
        name=f"Bingo {n}",
        licence_number=f"ML-B-{n:04d}",
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
    )
    operator = make_user(f"operator{n}", venue, Role.OPERATOR)
    cashier = make_user(f"cashier{n}", venue, Role.CASHIER)
    speciality = make_speciality(venue, operator, rules=rules or RULES_AUTOMATIC)
    terminal, _token = make_terminal(speciality, operator)
    open_verified_session(speciality, operator)
    return EHall(venue, operator, cashier, speciality, terminal)


def short_rules(extractions: int) -> dict[str, Any]:
    """The automatic rules with only `extractions` balls (a game may end with no Bingo)."""
    rules = copy.deepcopy(RULES_AUTOMATIC)
    rules["extractions"] = extractions
    rules["prizes"] = [p for p in rules["prizes"] if p["type"] not in {"super_bingo", "auto_bingo_extra"}]
    return rules


def make_network(halls: Sequence[EHall]) -> Network:
    network = Network.objects.create(name="Red Melilla", code=NETWORK, jurisdiction=Jurisdiction.ML)
    network.venues.set([h.venue for h in halls])
    return network


def make_gran(
    network: Network,
    halls: Sequence[EHall],
    *,
    kind: PrizeKind = PrizeKind.GRAN_LINEA,
    code: str = "GL1",
    seed: str = "100.01",
    join: Sequence[EHall] | None = None,
) -> NetworkPrize:
    """The network prize (10 % of each round game's sales) over `halls`; `join` (every hall) joins it."""
    prize = prizes.create_prize(
        network=network,
        code=code,
        name="Gran Línea Melilla" if kind == PrizeKind.GRAN_LINEA else "Gran Bingo Melilla",
        percent=Decimal("10"),
        max_ball=90,
        seed=Decimal(seed),
        wait_seconds=900,
        authorisation_ref="ML-AB-2026/1",
        halls=[h.venue for h in halls],
        actor="central-operator",
        kind=kind,
    )
    table_code = "granlinea" if kind == PrizeKind.GRAN_LINEA else "granbingo"
    for hall in halls if join is None else join:
        gran.join_speciality(
            speciality=hall.speciality,
            network=network,
            prize_code=code,
            table_code=table_code,
            actor=hall.operator,
        )
    return prize


def follow() -> streams.Applied:
    return loopback.follow(stream=f"network.{NETWORK}")


def deliver(hall: EHall) -> list[Accepted]:
    return loopback.deliver(venue_id=hall.venue.pk)


@dataclass
class Played:
    game: ElectronicGame
    a: int  # the card C1's id, bought with player card `card_a`
    b: int  # C3's, with `card_b`
    card_a: PlayerCard
    card_b: PlayerCard


def sell(hall: EHall, key: str = "") -> Played:
    """The speciality's game with C1 and C3 bought (1.00 each), its sales still open; `key` tells a
    hall's later games' purchases apart."""
    with enqueued():
        games.set_running(speciality=hall.speciality, running=True, actor=hall.operator)
        game = hall.speciality.games.get(state=EGameState.SELLING)
        card_a, card_b = funded_card(hall.venue, hall.cashier), funded_card(hall.venue, hall.cashier)
        _, (a,) = buy(game, hall.terminal, card_a, [C1], f"a{key}")
        _, (b,) = buy(game, hall.terminal, card_b, [C3], f"b{key}")
    return Played(game, a.pk, b.pk, card_a, card_b)


def play(played: Played, balls: list[int]) -> ElectronicGame:
    """Close its sales and draw `balls` in order to the game's end."""
    with enqueued(), forced_balls(balls):
        games.close_sales(played.game, early=True)
        game = draw_to_end(played.game)
    assert game.state == EGameState.CLOSED
    return game


def line_at(ordinal: int) -> list[int]:
    """C1's first row completed at ball `ordinal` (>= 5), then the rest of C1 (the Bingo)."""
    return FILLERS[: ordinal - 5] + ROW1 + REST
