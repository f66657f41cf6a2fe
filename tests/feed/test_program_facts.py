"""A traditional room's prize program on the authority's feed (issue 29): won with the Bingo, it is a prize
of the game paid from its pool (game.prize naming the pool, after the Bingo's own), and the pool's award."""

# ruff: noqa: F811 - the shared fixtures are imported by name (tests/bingo/traditional/program_flow.py)
from __future__ import annotations

from typing import Any

import pytest

from bingo.traditional.models import Claim
from bingo.traditional.services import programs as svc
from tests.bingo.traditional.program_flow import SALES, Hall, clock, game_program, hall  # noqa: F401
from tests.feed.conftest import Feed

pytestmark = pytest.mark.django_db


def test_a_program_won_with_the_bingo_is_a_prize_from_its_pool(feed: Feed, hall: Hall, clock: Any) -> None:
    acumulado = svc.activate_program(
        room=hall.room, code="acumulado", program_type="BA-3", params=SALES, actor=hall.operator
    )
    game = feed.run(hall.play, 50, at=44)  # its pool 10.00 from the sales; the Bingo at ball 44: won (8.00)
    gp = game_program(game, acumulado)
    assert gp.won is True
    (claim,) = Claim.objects.filter(game=game, kind="bingo").select_related("series")
    card = f"{claim.series.code}-{claim.serial:04d}"
    bingo, program = feed.messages("game.prize")
    assert (bingo["prize"], bingo["pool"], bingo["cards"]) == ("bingo", None, [card])
    assert program == {
        "venue": "ML-B-0001",
        "room": "Sala 1",
        "game": f"traditional-{game.pk}",
        "prize": "acumulado",
        "name": acumulado.name,
        "amount": "8.00",
        "ordinal": 44,
        "cards": [card],
        "pool": acumulado.pool.code,
        "where": "ML-B-0001",
    }
    (award,) = feed.messages("pool.award")
    assert (award["pool"], award["amount"], award["before"], award["where"]) == (
        acumulado.pool.code,
        "8.00",
        "10.00",
        "ML-B-0001",
    )
    kinds = feed.kinds()
    assert kinds.index("pool.award") < kinds.index("game.ended")
    assert kinds[kinds.index("game.ended") - 1] == "game.prize"  # the program's, after the Bingo's
