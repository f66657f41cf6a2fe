"""Scheduled Bingo Extras (BA-4 … BA-13) through the real game flow, on a clock the tests set: the game's
start is its close of sales, compared with the scheduled hour in the venue's zone (Africa/Ceuta, which
keeps Spain's clock and its daylight-saving changes). The beat only announces; it never decides."""

# The shared fixtures are imported by name (tests/bingo/traditional/program_flow.py): pytest injects them as
# arguments, which ruff reads as redefinitions.
# ruff: noqa: F811

from __future__ import annotations

from datetime import date, datetime, time
from decimal import Decimal

import pytest

from bingo.traditional.models import PrizeProgram, ScheduledNotice
from bingo.traditional.programs.regulation import BA_8_TABLE, BA_10_TABLE, Extrapolation, HallCategory
from bingo.traditional.services import programs as svc
from halls.models import AuditEntry, StreamCursor
from tests.bingo.traditional.program_flow import (  # noqa: F401 - fixtures
    SALES,
    UTC,
    Hall,
    clock,
    game_program,
    hall,
    local,
    state_after,
)

# The pool is set to reach its amount in the first game: 10 % of 120.00 € is 12.00 € (>= 10 €).
PARAMS = {**SALES, "amount": "10"}
FIRST = HallCategory.FIRST  # the test venue's category (tables' 1ª column)


def ba8_row(k: int) -> int:
    return BA_8_TABLE.by_game(k, FIRST, Extrapolation.FROM_LAST_ROW)


def program(hall: Hall, program_type: str = "BA-8") -> PrizeProgram:
    return svc.activate_program(
        room=hall.room, code="extra-12/2", program_type=program_type, params=PARAMS, actor=hall.operator
    )


def game_at(hall: Hall, clock, at: datetime, *, bingo_at: int | None = 55):
    """A game whose sales close at `at` (its start for scheduling); played out unless `bingo_at` is None."""
    clock.set(at)
    game = hall.sell_and_close(60)
    if bingo_at is not None:
        hall.bingo(game, at=bingo_at)
    return game


def test_a_game_starting_at_19_59_does_not_serve_20_00_and_one_at_20_01_does(hall: Hall, clock) -> None:
    extra = program(hall)
    before = game_at(hall, clock, local(2025, 3, 10, 19, 50))  # funds the pool: 12 >= 10
    assert game_program(before, extra).in_play is False
    almost = game_at(hall, clock, local(2025, 3, 10, 19, 59, 59))
    assert game_program(almost, extra).in_play is False
    scheduled = game_at(hall, clock, local(2025, 3, 10, 20, 1))
    gp = game_program(scheduled, extra)
    assert (gp.in_play, gp.slot, gp.row, gp.max_ball) == (True, time(20), 1, ba8_row(1))
    assert gp.max_ball == 50  # BA-8 row 1, 1ª category
    (announced,) = scheduled.announcement["programs"]
    assert (announced["slot"], announced["row"], announced["max_ball"], announced["amount"]) == (
        "20:00",
        1,
        50,
        "36.00",  # the whole pool (Pays.POOL): three games of 12.00 €
    )
    # Not won at ball 55: the next game is not a scheduled one (20:00 is served).
    after = game_at(hall, clock, local(2025, 3, 10, 20, 30))
    assert game_program(after, extra).in_play is False


def test_a_game_starting_exactly_at_20_00_serves_it(hall: Hall, clock) -> None:
    extra = program(hall)
    game_at(hall, clock, local(2025, 3, 10, 19, 30))
    on_the_hour = game_at(hall, clock, local(2025, 3, 10, 20, 0), bingo_at=None)
    assert game_program(on_the_hour, extra).slot == time(20)


def test_a_session_past_midnight_serves_00_00_on_the_same_operating_day(hall: Hall, clock) -> None:
    extra = program(hall)
    game_at(hall, clock, local(2025, 3, 10, 19, 30))
    evening = game_at(hall, clock, local(2025, 3, 10, 20, 5))  # row 1, not won
    assert game_program(evening, extra).row == 1
    late = game_at(hall, clock, local(2025, 3, 10, 23, 55))
    assert game_program(late, extra).in_play is False
    midnight = game_at(hall, clock, local(2025, 3, 11, 0, 2), bingo_at=None)
    gp = game_program(midnight, extra)
    assert (gp.in_play, gp.slot, gp.operating_day, gp.row, gp.max_ball) == (
        True,
        time(0),
        date(2025, 3, 10),  # 00:00 belongs to the operating day that began the evening before (OP-07)
        2,
        ba8_row(2),
    )
    assert gp.max_ball == 51
    hall.bingo(midnight, at=gp.max_ball)  # won at its max ball: the whole pool, the table starts over
    gp = game_program(midnight, extra)
    assert gp.won is True and gp.prize == gp.pool_amount
    assert state_after(gp)["steps"] == 0
    next_evening = game_at(hall, clock, local(2025, 3, 11, 20, 10), bingo_at=None)
    assert (game_program(next_evening, extra).row, game_program(next_evening, extra).max_ball) == (1, 50)


@pytest.mark.parametrize(
    ("utc", "in_play"),
    [
        # 30 March 2025, spring forward: 20:00 local is 18:00 UTC (the day before it was 19:00 UTC).
        (datetime(2025, 3, 30, 17, 59, tzinfo=UTC), False),
        (datetime(2025, 3, 30, 18, 1, tzinfo=UTC), True),
        # 26 October 2025, fall back: 20:00 local is 19:00 UTC again.
        (datetime(2025, 10, 26, 18, 59, tzinfo=UTC), False),
        (datetime(2025, 10, 26, 19, 1, tzinfo=UTC), True),
    ],
)
def test_the_scheduled_hour_is_the_venues_wall_clock_on_dst_change_days(
    hall: Hall, clock, utc: datetime, in_play: bool
) -> None:
    extra = program(hall)
    game_at(hall, clock, utc.replace(hour=12))
    game = game_at(hall, clock, utc, bingo_at=None)
    assert game_program(game, extra).in_play is in_play


def test_the_03_00_game_on_the_night_the_clock_skips_02_00(hall: Hall, clock) -> None:
    """BA-10 (16/20/00/03): on 30 March 2025 02:00 CET jumps to 03:00 CEST (01:00 UTC)."""
    extra = program(hall, "BA-10")
    game_at(hall, clock, datetime(2025, 3, 29, 14, 30, tzinfo=UTC))  # 15:30 CET: funds the pool
    # 00:10 CET, the first game after 16:00, 20:00 and 00:00: it serves 00:00, the earlier hours lapse.
    midnight = game_at(hall, clock, datetime(2025, 3, 29, 23, 10, tzinfo=UTC))
    assert (game_program(midnight, extra).slot, game_program(midnight, extra).row) == (time(0), 1)
    early = game_at(hall, clock, datetime(2025, 3, 30, 0, 59, tzinfo=UTC))  # 01:59 CET
    assert game_program(early, extra).in_play is False
    three = game_at(hall, clock, datetime(2025, 3, 30, 1, 0, 30, tzinfo=UTC), bingo_at=None)  # 03:00:30 CEST
    gp = game_program(three, extra)
    assert (gp.slot, gp.operating_day, gp.row) == (time(3), date(2025, 3, 29), 2)
    assert gp.max_ball == BA_10_TABLE.by_game(2, FIRST, Extrapolation.FROM_LAST_ROW) == 51


def test_the_beat_announces_the_next_scheduled_game_once(hall: Hall, clock) -> None:
    extra = program(hall)
    game_at(hall, clock, local(2025, 3, 10, 19, 50))
    clock.set(local(2025, 3, 10, 19, 59, 30))
    assert svc.announce_scheduled() == 0
    clock.set(local(2025, 3, 10, 20, 0, 30))
    seq = StreamCursor.objects.get(stream=hall.room.stream).seq
    assert svc.announce_scheduled() == 1
    notice = ScheduledNotice.objects.get(program=extra)
    assert (notice.operating_day, notice.hour) == (date(2025, 3, 10), time(20))
    assert StreamCursor.objects.get(stream=hall.room.stream).seq == seq + 1
    due = AuditEntry.objects.get(action="programs.due").data["programs"]
    assert due == [
        {
            "code": "extra-12/2",
            "name": extra.name,
            "type": "BA-8",
            "slot": "20:00",
            "operating_day": "2025-03-10",
            "amount": "12.00",
            "reached": True,
        }
    ]
    clock.advance(seconds=30)
    assert svc.announce_scheduled() == 0  # once per program, day and hour
    # The game that serves it closes its sales: nothing is due until 00:00.
    game_at(hall, clock, local(2025, 3, 10, 20, 2), bingo_at=None)
    clock.set(local(2025, 3, 10, 20, 5))
    assert svc.announce_scheduled() == 0
    assert ScheduledNotice.objects.count() == 1


def test_the_in_play_decision_does_not_need_the_beat(hall: Hall, clock) -> None:
    extra = program(hall)
    game_at(hall, clock, local(2025, 3, 10, 19, 50))
    game = game_at(hall, clock, local(2025, 3, 10, 20, 1), bingo_at=None)
    assert not ScheduledNotice.objects.exists()
    assert game_program(game, extra).in_play is True
    assert Decimal(game.announcement["programs"][0]["amount"]) == Decimal("24.00")
