"""The demo's prize programs: activated once in the self-playing room through the services, and in play
in its games from the first one (the Bingo Acumulado), so `make demo` shows them on the screens."""

from __future__ import annotations

from decimal import Decimal

from bingo.traditional.models import Game, GameProgram, PrizeProgram, PrizeProgramVersion
from demo import autoplay
from demo import hall as demo
from demo.hall import AUTOPLAY_ROOM
from demo.seed import seed_demo
from jackpots.models import Pool, PoolLevel


def test_the_demo_room_runs_a_prima_an_acumulado_and_a_scheduled_bingo_extra(db: None) -> None:
    hall = seed_demo()
    room = hall.rooms[AUTOPLAY_ROOM]
    found = list(PrizeProgram.objects.filter(room=room).order_by("pk"))
    assert [(p.code, p.program_type, p.name, p.active) for p in found] == [
        ("PRIMA", "BA-1", "Prima", True),
        ("ACUMULADO", "BA-3", "Bingo Acumulado", True),
        ("EXTRA-12-2", "BA-8", "Bingo Extra 12/2", True),
    ]
    for program in found:
        (version,) = PrizeProgramVersion.objects.filter(program=program)
        assert version.authorisation_ref == "DEMO"
        level = PoolLevel.objects.get(pool=program.pool)
        assert level.contribution_rate * 100 == Decimal(version.params["funding_percent"])
        assert program.pool.venue_id == hall.venue.pk
    assert PrizeProgramVersion.objects.get(program=found[0]).params["amount"] == "30"
    assert sum("prize programs in Sala Principal" in note for note in hall.notes) == 1

    # A restart keeps them: nothing is activated twice.
    counts = (PrizeProgram.objects.count(), PrizeProgramVersion.objects.count(), Pool.objects.count())
    again = seed_demo()
    assert (PrizeProgram.objects.count(), PrizeProgramVersion.objects.count(), Pool.objects.count()) == counts
    assert sum("Bingo Acumulado (BA-3)" in note for note in again.notes) == 1


def test_the_first_self_played_game_announces_the_bingo_acumulado(db: None) -> None:
    hall = seed_demo()
    room = hall.rooms[AUTOPLAY_ROOM]
    assert autoplay.tick(room) == "started game 1"
    game = Game.objects.get(room=room, number=1)
    (announced,) = game.announcement["programs"]
    assert (announced["code"], announced["name"]) == ("ACUMULADO", "Bingo Acumulado")
    # 40–180 cards sold: the cards-sold scale gives 44 down to 40 balls.
    assert 40 <= announced["max_ball"] <= 44
    # Every active program is recorded for the game and funded from its sales.
    assert GameProgram.objects.filter(game=game).count() == len(demo.PROGRAMS)
