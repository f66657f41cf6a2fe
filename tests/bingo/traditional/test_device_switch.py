"""The reserve device (TB-31, TB-46): a game whose blower fails goes on with the reserve blower or the
RNG; the switch is logged (who, when, after which ball, why), no ball is lost or repeated, and the recall
lists it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from bingo.traditional.models import (
    Ball,
    BallSet,
    CardSeries,
    DeviceSwitch,
    DrawDevice,
    DrawSource,
    Game,
    GameState,
)
from bingo.traditional.services import devices, draw, games, readmodels, sales
from halls.errors import Conflict, InvalidInput
from halls.models import AuditEntry, GameSession, Room
from tests.bingo.traditional.game_support import (  # noqa: F401 (autouse fixtures)
    assert_no_ball_lost_or_repeated,
    drawn,
    fresh_process,
    no_celery,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def room_devices(room: Room, operator: User) -> dict[str, DrawDevice]:
    return {
        "main": devices.register_device(room=room, name="Bombo 1", kind="pneumatic", actor=operator),
        "reserve": devices.register_device(
            room=room, name="Turbina de reserva", kind="turbine", reserve=True, actor=operator
        ),
        "rng": devices.register_device(room=room, name="RNG", kind="rng", reserve=True, actor=operator),
    }


def _drawing(room: Room, caller: User, cashier: User, series: CardSeries) -> Game:
    game = games.create_game(room=room, actor=caller, draw_source=DrawSource.MANUAL)
    games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=series, first=1, last=12, actor=cashier)
    games.close_sales(game=game, actor=caller)
    return games.start_draw(game=game, actor=caller)


def test_a_game_goes_on_with_the_reserve_blower_then_the_rng_keeping_its_balls(
    room: Room,
    session: GameSession,
    caller: User,
    cashier: User,
    card_series: CardSeries,
    ball_set: BallSet,
    room_devices: dict[str, DrawDevice],
) -> None:
    game = _drawing(room, caller, cashier, card_series)
    assert game.draw_device == room_devices["main"]
    for ordinal, number in enumerate([7, 21, 45], start=1):
        draw.enter_ball(game=game, number=number, actor=caller, ordinal=ordinal)
    games.pause_draw(game=game, actor=caller)
    switch = devices.switch_device(
        game=game, device=room_devices["reserve"], reason="El bombo 1 no sopla", actor=caller
    )
    assert (switch.at_ordinal, switch.from_device, switch.to_device) == (
        3,
        room_devices["main"],
        room_devices["reserve"],
    )
    game = games.resume_draw(game=game, actor=caller)
    draw.enter_ball(game=game, number=60, actor=caller, ordinal=4)
    with pytest.raises(Conflict) as again:
        draw.enter_ball(game=game, number=21, actor=caller)
    assert again.value.code == "ball_already_drawn"

    # The reserve blower fails too: the RNG finishes the game, from ordinal 5, while drawing.
    devices.switch_device(
        game=game, device=room_devices["rng"], reason="La turbina también falla", actor=caller
    )
    game = Game.objects.get(pk=game.pk)
    assert (game.draw_source, game.draw_device) == (DrawSource.RNG, room_devices["rng"])
    assert draw.draw_rng_ball(game_id=game.pk, ordinal=4) is None  # a stale step is a no-op
    for ordinal in range(5, 91):
        assert draw.draw_rng_ball(game_id=game.pk, ordinal=ordinal) is not None
    balls = drawn(game)
    assert len(balls) == 90 and balls[:4] == [(1, 7), (2, 21), (3, 45), (4, 60)]
    assert_no_ball_lost_or_repeated(balls)
    assert set(Ball.objects.filter(game=game, ordinal__gt=4).values_list("source", flat=True)) == {"rng"}

    recall = readmodels.game_recall(Game.objects.get(pk=game.pk))
    switches = recall["device_switches"]
    assert [(s["at_ordinal"], s["from_device"], s["to_device"], s["to_source"]) for s in switches] == [
        (3, "Bombo 1", "Turbina de reserva", "manual"),
        (4, "Turbina de reserva", "RNG", "rng"),
    ]
    assert switches[0]["reason"] == "El bombo 1 no sopla" and switches[0]["switched_by"] == "caller"
    assert recall["draw_device"] == {"id": room_devices["rng"].pk, "name": "RNG", "kind": "rng"}
    audited = AuditEntry.objects.filter(action="game.device_switched").order_by("pk")
    assert [e.data["at_ordinal"] for e in audited] == [3, 4]


def test_a_switch_needs_a_reason_a_device_of_the_room_and_a_game_drawing(
    room: Room,
    session: GameSession,
    caller: User,
    operator: User,
    cashier: User,
    card_series: CardSeries,
    ball_set: BallSet,
    room_devices: dict[str, DrawDevice],
) -> None:
    scheduled = games.create_game(room=room, actor=caller, draw_source=DrawSource.MANUAL)
    with pytest.raises(Conflict) as early:
        devices.switch_device(game=scheduled, device=room_devices["reserve"], reason="x", actor=caller)
    assert early.value.code == "wrong_state"
    games.void_game(game=scheduled, actor=caller, reason="test")
    game = _drawing(room, caller, cashier, card_series)
    with pytest.raises(InvalidInput) as no_reason:
        devices.switch_device(game=game, device=room_devices["reserve"], reason="  ", actor=caller)
    assert no_reason.value.code == "reason_required"
    with pytest.raises(Conflict) as same:
        devices.switch_device(game=game, device=room_devices["main"], reason="x", actor=caller)
    assert same.value.code == "same_device"
    other_room = Room.objects.create(venue=room.venue, name="Sala 2")
    elsewhere = devices.register_device(room=other_room, name="Bombo 2", kind="pneumatic", actor=operator)
    with pytest.raises(InvalidInput) as foreign:
        devices.switch_device(game=game, device=elsewhere, reason="x", actor=caller)
    assert foreign.value.code == "bad_device"
    assert not DeviceSwitch.objects.exists()
    with pytest.raises(InvalidInput):
        devices.register_device(room=room, name="Bombo 3", kind="vacuum", actor=operator)
    with pytest.raises(Conflict):
        devices.register_device(room=room, name="Bombo 1", kind="turbine", actor=operator)
    assert Game.objects.get(pk=game.pk).state == GameState.DRAWING
