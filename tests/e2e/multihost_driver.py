"""The multi-host test's hand on the hall (tests/e2e/test_multihost.py): run as ``python -m
tests.e2e.multihost_driver COMMAND`` with the hall's environment (private PostgreSQL, Redis behind Sentinel),
it sets a venue up or plays a game through the services, and prints JSON.

    setup                      a venue, its staff (a cashier on shift), a room, a session, a card series
    game ROOM_ID PACE LAST     an RNG game, cards 1..LAST sold, sales closed, the draw started
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal

import django


def setup() -> dict[str, int]:
    from bingo.traditional.services import series as series_services
    from halls.models import HallCategory, Jurisdiction, Role, Room, Venue
    from halls.services import sessions
    from tests.cashier_support import on_shift
    from tests.conftest import ALL_BALLS, SEED, make_user

    venue = Venue.objects.create(
        name="Bingo Multihost",
        licence_number="ML-B-0030",
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
        time_zone="Africa/Ceuta",
        line_percent=Decimal("10"),
        bingo_percent=Decimal("50"),
    )
    operator = make_user("operator", venue, Role.OPERATOR)
    caller = make_user("caller", venue, Role.CALLER)
    cashier = make_user("cashier", venue, Role.CASHIER)
    on_shift(cashier, venue)
    room = Room.objects.create(venue=venue, name="Sala 1", ball_pace_seconds=Decimal("0.5"))
    sessions.open_session(
        room=room, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )
    series = series_services.create_series(
        venue=venue, code="A", face_value=Decimal("2.00"), strips=10, actor=operator, seed=SEED
    )
    return {"venue": venue.pk, "room": room.pk, "series": series.pk}


def game(room_id: int, pace: str, last: int) -> dict[str, int]:
    from django.contrib.auth import get_user_model

    from bingo.traditional.models import CardSeries, DrawSource
    from bingo.traditional.services import games, sales
    from halls.models import Room

    room = Room.objects.get(pk=room_id)
    users = get_user_model().objects
    caller, cashier = users.get(username="caller"), users.get(username="cashier")
    series = CardSeries.objects.get(venue=room.venue, code="A")
    created = games.create_game(
        room=room, actor=caller, draw_source=DrawSource.RNG, pace_seconds=Decimal(pace)
    )
    games.open_sales(game=created, actor=caller)
    sales.sell_range(game=created, series=series, first=1, last=last, actor=cashier)
    games.close_sales(game=created, actor=caller)
    games.start_draw(game=created, actor=caller)  # its first step goes to the draws queue, via Sentinel
    return {"game": created.pk}


def main(argv: list[str]) -> None:
    django.setup()
    command, *args = argv
    if command == "setup":
        result = setup()
    elif command == "game":
        result = game(int(args[0]), args[1], int(args[2]))
    else:
        raise SystemExit(f"unknown command {command!r}")
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
