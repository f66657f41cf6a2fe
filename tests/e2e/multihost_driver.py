"""The multi-host test's hand on the hall (tests/e2e/test_multihost.py): run as ``python -m
tests.e2e.multihost_driver COMMAND`` with the hall's environment (private PostgreSQL, Redis behind Sentinel),
it sets a venue up or plays a game through the services, and prints JSON.

    setup                      a venue, its staff (a cashier on shift), two rooms with their sessions open,
                               a card series
    game ROOM_ID PACE LAST [FIRST]
                               an RNG game, cards FIRST..LAST (1..LAST) sold, sales closed, the draw
                               started (a card is sold once: a later game sells others)
    pause GAME_ID              the game's draw paused (its balls stay as they are)
    serve                      the commands above, one a line on stdin, each answered by one line
                               ``RESULT {json}`` (or ``ERROR {json}``) on stdout: one Django start for all
"""

from __future__ import annotations

import json
import sys
import traceback
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
    rooms = []
    for name in ("Sala 1", "Sala 2"):  # the second for the sale after the failover, whatever the first's game
        room = Room.objects.create(venue=venue, name=name, ball_pace_seconds=Decimal("0.5"))
        sessions.open_session(
            room=room,
            actor=caller,
            blower_ok=True,
            reserve_ok=True,
            reader_ok=True,
            inspection_balls=ALL_BALLS,
        )
        rooms.append(room.pk)
    series = series_services.create_series(
        venue=venue, code="A", face_value=Decimal("2.00"), strips=10, actor=operator, seed=SEED
    )
    return {"venue": venue.pk, "room": rooms[0], "room2": rooms[1], "series": series.pk}


def game(room_id: int, pace: str, last: int, first: int = 1) -> dict[str, int]:
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
    sales.sell_range(game=created, series=series, first=first, last=last, actor=cashier)
    games.close_sales(game=created, actor=caller)
    games.start_draw(game=created, actor=caller)  # its first step goes to the draws queue, via Sentinel
    return {"game": created.pk}


def pause(game_id: int) -> dict[str, int]:
    from django.contrib.auth import get_user_model

    from bingo.traditional.models import Game
    from bingo.traditional.services import games

    caller = get_user_model().objects.get(username="caller")
    paused = games.pause_draw(game=Game.objects.get(pk=game_id), actor=caller)
    return {"game": paused.pk, "balls": paused.balls_drawn}


def run(command: str, args: list[str]) -> dict[str, int]:
    if command == "setup":
        return setup()
    if command == "pause":
        return pause(int(args[0]))
    if command == "game":
        return game(int(args[0]), args[1], int(args[2]), *(int(a) for a in args[3:4]))
    raise SystemExit(f"unknown command {command!r}")


def serve() -> None:
    from django.db import close_old_connections

    for line in sys.stdin:
        command, *args = line.split()
        close_old_connections()
        try:
            answer = "RESULT " + json.dumps(run(command, args))
        except Exception:  # the test reads what failed
            answer = "ERROR " + json.dumps(traceback.format_exc())
        print(answer, flush=True)


def main(argv: list[str]) -> None:
    django.setup()
    from django.test.utils import override_settings

    # The staff's passwords at a test's cost (tests/hashers.py): 1-2 s of CPU each at production's.
    override_settings(PASSWORD_HASHERS=["tests.hashers.FastPBKDF2PasswordHasher"]).enable()
    command, *args = argv
    if command == "serve":
        serve()
    else:
        print(json.dumps(run(command, args)))


if __name__ == "__main__":
    main(sys.argv[1:])
