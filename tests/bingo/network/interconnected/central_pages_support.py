"""A loopback network for the central's pages: three venues in two regions (Melilla: halls 1 and 2; Ceuta:
hall 3) under an agreement, of two operators; an interconnected prize with a decided round (halls 1 and 2
share at ball 15) and a round in progress (hall 1 contributed); a simultaneous game on the same network
whose network Bingo and first hall's prize went to hall 1 (the game goes on for the other halls)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest

from bingo.network.interconnected.models import NetworkPrize
from bingo.network.interconnected.services import prizes
from bingo.network.simultaneous.models import NetworkGame
from bingo.network.simultaneous.services import central
from bingo.network.simultaneous.services import venue as sb_venue
from halls.models import Operator, Room
from halls.services import regions, sessions
from tests.bingo.network.interconnected.ib_support import (
    Hall,
    bingo_at,
    deliver,
    follow,
    make_hall,
    make_network,
    make_prize,
    on_sale,
)
from tests.bingo.network.simultaneous import support as sb
from tests.conftest import ALL_BALLS
from tests.halls.region_support import agree, operator, region

SB_COUNTS = (6, 4, 3)  # cards sold per hall in the simultaneous game (1.00 each)


@dataclass
class Scene:
    halls: list[Hall]
    prize: NetworkPrize
    game: NetworkGame
    net: sb.Net
    companies: tuple[Operator, Operator]


def _sb_net(halls: list[Hall], prize: NetworkPrize) -> sb.Net:
    """The halls as the simultaneous game's support sees them, each playing it in a second room."""
    sb_halls = []
    for h in halls:
        room = Room.objects.create(venue=h.venue, name="Sala 2", ball_pace_seconds=Decimal("0.5"))
        session = sessions.open_session(
            room=room,
            actor=h.caller,
            blower_ok=True,
            reserve_ok=True,
            reader_ok=True,
            inspection_balls=ALL_BALLS,
        )
        sb_halls.append(sb.Hall(h.venue, room, session, h.caller, h.cashier, h.operator))
    return sb.Net(prize.network, sb_halls, sb.make_user("central-boss"))


def _simultaneous(net: sb.Net, monkeypatch: pytest.MonkeyPatch) -> NetworkGame:
    game = sb.new_game(net, price="1.00", percents=("10", "45", "5"))
    for hall, count in zip(net.halls, SB_COUNTS, strict=True):
        hall_game = net.hall_game(hall, game)
        sb_venue.sell(
            hall_game=hall_game,
            first=hall_game.first_serial,
            last=hall_game.first_serial + count - 1,
            actor=hall.cashier,
        )
    net.sync()
    central.close_sales(game=game, actor=net.boss)
    central.start_draw(game=game, actor=net.boss)
    net.follow()
    one = net.halls[0]
    game_one = net.hall_game(one, game)
    numbers = sorted(sb.card(game_one, game_one.first_serial).numbers)
    monkeypatch.setattr(central, "_pick", sb.Script(numbers))
    list(sb.draw(game, len(numbers)))
    net.follow()
    claim = sb_venue.claim(hall_game=game_one, kind="bingo", serial=game_one.first_serial, actor=one.caller)
    assert claim.valid, claim.reason
    net.sync()
    central.decide(game=game, actor=net.boss)
    net.follow()
    game.refresh_from_db()
    return game


def build_scene(monkeypatch: pytest.MonkeyPatch) -> Scene:
    halls = [make_hall(n) for n in (1, 2, 3)]
    melilla, ceuta = region("ML"), region("CE")
    first, second = operator("B11111111"), operator("B22222222")
    for hall, where, company in zip(halls, (melilla, melilla, ceuta), (first, second, first), strict=True):
        regions.assign_venue(venue=hall.venue, region=where, operator=company, actor="test")
    agree(melilla, ceuta, company=first)
    prize = make_prize(make_network(halls), halls)

    # Round 1: every hall contributes 6.00 (10 % of 60.00); halls 1 and 2 bingo at ball 15 and share.
    prizes.open_round(prize=prize, actor="central-operator")
    follow()
    played = [on_sale(hall) for hall in halls]
    for hall in halls:
        deliver(hall)
    for hall, local, fillers in zip(halls, played, (0, 0, 5), strict=True):
        bingo_at(hall, local, serial=7, fillers=fillers)
        deliver(hall)

    # A simultaneous game on the same network: hall 1's Bingo takes the network Bingo and its hall's prize.
    net = _sb_net(halls, prize)
    game = _simultaneous(net, monkeypatch)

    # Round 2 in progress: hall 1's next game contributed.
    prizes.open_round(prize=prize, actor="central-operator")
    follow()
    on_sale(halls[0], first=31, cards=10)  # 10 cards × 2.00: 2.00 to the pool
    deliver(halls[0])
    return Scene(halls, prize, game, net, (first, second))
