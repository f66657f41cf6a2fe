"""Program pools are shown by the game panel (announcement, award), not in the hall screens' pools ribbon."""

from __future__ import annotations

from decimal import Decimal

from bingo.traditional.services import programs as svc
from jackpots.services.pools import LevelSpec
from jackpots.services.readmodels import screens
from tests.bingo.traditional.program_flow import (  # noqa: F401 - fixtures
    SALES,
    Hall,
    clock,
    hall,
)
from tests.jackpots.pool_fixtures import make_pool


def test_the_pools_ribbon_leaves_out_program_pools_but_keeps_other_pools(
    hall: Hall,  # noqa: F811
    clock: object,  # noqa: F811
) -> None:
    program = svc.activate_program(
        room=hall.room,
        code="prima-30",
        program_type="BA-1",
        params={**SALES, "amount": "30"},
        actor=hall.operator,
    )
    other = make_pool(
        hall.room.venue,
        hall.operator,
        code="LINK-1",
        pack="",
        bet=None,
        levels=[LevelSpec(name="Mayor", seed=Decimal("100"), contribution_rate=Decimal("0.01"))],
        members=("7",),
        source_type="machine",
    )
    hall.play(cards=40, at=60)  # funds the program's pool: it now has a meter a ribbon could show

    shown = {p["id"] for p in screens.screen_snapshot(hall.room)["pools"]}
    assert other.pk in shown
    assert program.pool_id not in shown
    rooms = screens.rooms_showing([program.pool, other])
    assert rooms.get(program.pool_id, []) == []  # no meter or hit events for it on any room stream
