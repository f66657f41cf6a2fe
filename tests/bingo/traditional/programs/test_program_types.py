"""Worked examples for every program type BA-1 … BA-20 (spec §2.4): in play, won, paid, escalated, reset."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from bingo.traditional.programs.regulation import SCHEDULED_VARIANTS, ExtractionRow, HallCategory, ProgramType
from bingo.traditional.programs.rules import (
    GameContext,
    InPlay,
    ManagerPick,
    Program,
    ProgramError,
    ProgramState,
    evaluate,
    in_play,
    initial_state,
    make_program,
    next_state,
    payout,
)
from bingo.traditional.programs.schedule import slots_of_day

D = Decimal
MADRID = ZoneInfo("Europe/Madrid")
FIRST, SECOND, THIRD = HallCategory.FIRST, HallCategory.SECOND, HallCategory.THIRD
JAN = datetime(2025, 1, 1, 6, tzinfo=MADRID)
DAY_N = date(2025, 3, 3)  # a Monday, no DST change for the next weeks
SALES: dict[str, object] = {"funding_percent": "1.5", "authorisation_ref": "ML-DGJ-2025/017"}


def at(y: int, m: int, d: int, hh: int, mm: int, tz: str = "Europe/Madrid", fold: int = 0) -> datetime:
    return datetime(y, m, d, hh, mm, tzinfo=ZoneInfo(tz), fold=fold)


def ctx(
    start: datetime,
    pool: Decimal | str | int,
    *,
    cards: int = 120,
    cat: HallCategory = FIRST,
    last: bool = False,
    picks: Sequence[ManagerPick] = (),
    tz: str = "Europe/Madrid",
) -> GameContext:
    return GameContext(
        start=start,
        time_zone=tz,
        hall_category=cat,
        cards_sold=cards,
        pool_amount=D(pool),
        last_game_of_session=last,
        manager_picks=tuple(picks),
    )


def program(program_type: str, params: dict[str, object] | None = None, pid: str = "p") -> Program:
    return make_program(program_type, {**SALES, **(params or {})}, program_id=pid, effective_from=JAN)


def bolsa_program(program_type: str, params: dict[str, object] | None = None, pid: str = "p") -> Program:
    return make_program(program_type, params or {}, program_id=pid, effective_from=JAN)


def step(
    p: Program, state: ProgramState, game: GameContext, won: bool = False
) -> tuple[InPlay | None, ProgramState]:
    return in_play(p, state, game), next_state(p, state, won, game)


def ten_minutes_apart(first: datetime, n: int) -> list[datetime]:
    return [first + timedelta(minutes=10 * i) for i in range(n)]


# --- BA-1 Prima ---------------------------------------------------------------------------------------------


def test_ba1_prima_in_play_the_game_after_the_pool_reaches_its_level() -> None:
    prima = program("BA-1", {"amount": "100"})
    g = ten_minutes_apart(at(2025, 3, 3, 17, 0), 6)
    state = initial_state(prima)

    play, state = step(prima, state, ctx(g[0], "99.50"))
    assert play is None
    # The pool reaches 100 € in this game: not in play yet ("primera partida posterior").
    play, state = step(prima, state, ctx(g[1], "100.40"))
    assert play is None
    assert state.reached

    play, state = step(prima, state, ctx(g[2], "101.30"))
    assert play is not None
    assert (play.max_ball, play.amount, play.colour) == (48, D(100), None)
    assert evaluate(play, 48, None)  # "no supere 48"
    assert not evaluate(play, 49, None)

    # OP-03: the Bingo came at ball 49; the Prima stays in play, same 48-ball limit.
    play = in_play(prima, state, ctx(g[3], "102.20"))
    assert play is not None
    assert play.max_ball == 48
    assert evaluate(play, 40, "red")
    split = payout(prima, D("102.20"), ["card-7", "card-19", "card-311"])
    assert split.shares == {"card-7": D("33.33"), "card-19": D("33.33"), "card-311": D("33.33")}
    assert (split.prize, split.remainder, split.carry, split.next_pool) == (
        D(100),
        D("0.01"),
        D("2.20"),
        D("2.21"),
    )
    state = next_state(prima, state, True, ctx(g[3], "102.20"))
    assert not state.reached
    assert in_play(prima, state, ctx(g[4], "3.10")) is None


def test_ba1_prima_pool_far_above_its_level_stays_reached_after_the_award() -> None:
    prima = program("BA-1", {"amount": "30"})
    state = initial_state(prima, pool_amount=D(75))  # already reached: in play in the next game
    game = ctx(at(2025, 3, 3, 17, 0), 75)
    assert in_play(prima, state, game) is not None
    assert payout(prima, D(75), ["a"]).carry == D(45)
    state = next_state(prima, state, True, game)
    assert state.reached  # 45 € left, still at least 30 €


# --- BA-2 Bingo Extra ---------------------------------------------------------------------------------------


def test_ba2_bingo_extra_escalates_per_game_until_the_last_game_of_the_session() -> None:
    extra = program("BA-2", {"amount": "500", "extraction_order": 52})
    g = ten_minutes_apart(at(2025, 3, 3, 17, 0), 6)
    state = initial_state(extra)
    _, state = step(extra, state, ctx(g[0], 480))
    play, state = step(extra, state, ctx(g[1], 505))  # reached in this game
    assert play is None
    orders = []
    for i, start in enumerate(g[2:5]):
        play, state = step(extra, state, ctx(start, 510 + i, last=(i == 2)))
        assert play is not None
        assert play.max_ball is not None
        orders.append(play.max_ball)
        assert not evaluate(play, play.max_ball + 1, None)
        assert evaluate(play, play.max_ball, None)
    assert orders == [52, 53, 54]  # +1 extraction per game played afterwards
    # After the last game of the session the order restarts (OP-04); the pool carried over.
    assert (state.steps, state.reached) == (0, True)
    next_session = ctx(at(2025, 3, 4, 17, 0), 515)
    play = in_play(extra, state, next_session)
    assert play is not None
    assert play.max_ball == 52
    assert payout(extra, D(515), ["a", "b"]).shares == {"a": D(250), "b": D(250)}
    state = next_state(extra, state, True, next_session)
    assert (state.reached, state.steps) == (False, 0)


def test_ba2_hall_manager_fixes_the_order_for_the_trigger_game() -> None:
    extra = program("BA-2", {"amount": "500", "extraction_order": 52}, pid="extra")
    state = initial_state(extra, pool_amount=D(600))
    g = ten_minutes_apart(at(2025, 3, 3, 17, 0), 3)
    first = ctx(g[0], 600, picks=[ManagerPick("extra", max_ball=56)])
    play, state = step(extra, state, first)
    assert play is not None
    assert play.max_ball == 56
    play = in_play(extra, state, ctx(g[1], 601))
    assert play is not None
    assert play.max_ball == 57  # the picked order keeps rising
    with pytest.raises(ProgramError, match="rises by one per game"):
        in_play(extra, state, ctx(g[1], 601, picks=[ManagerPick("extra", max_ball=60)]))
    with pytest.raises(ProgramError, match="below the floor of 50"):
        in_play(
            extra,
            initial_state(extra, pool_amount=D(600)),
            ctx(g[2], 600, picks=[ManagerPick("extra", max_ball=45)]),
        )
    with pytest.raises(ProgramError, match="its amount is not reached"):
        in_play(extra, initial_state(extra), ctx(g[2], 10, picks=[ManagerPick("extra", max_ball=55)]))


def test_ba2_order_never_exceeds_90_balls() -> None:
    extra = program("BA-2", {"amount": "500", "extraction_order": 89})
    state = ProgramState(reached=True, steps=5)
    play = in_play(extra, state, ctx(at(2025, 3, 3, 17, 0), 600))
    assert play is not None
    assert play.max_ball == 90


# --- BA-3 Bingo Acumulado -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "max_ball"),
    [
        (1, 44),
        (50, 44),
        (51, 43),
        (100, 43),
        (101, 42),
        (150, 42),
        (151, 41),
        (200, 41),
        (201, 40),
        (900, 40),
    ],
)
def test_ba3_max_ball_from_the_cards_sold(cards: int, max_ball: int) -> None:
    acum = program("BA-3")
    play = in_play(acum, initial_state(acum), ctx(at(2025, 3, 3, 17, 0), "812.40", cards=cards))
    assert play is not None
    assert play.max_ball == max_ball
    assert evaluate(play, max_ball, None)
    assert not evaluate(play, max_ball + 1, None)


def test_ba3_scale_boundaries_decide_the_same_bingo() -> None:
    acum = program("BA-3")
    state = initial_state(acum)
    start = at(2025, 3, 3, 17, 0)
    for low, high, ball in [(50, 51, 44), (100, 101, 43), (150, 151, 42), (200, 201, 41)]:
        low_play = in_play(acum, state, ctx(start, 100, cards=low))
        high_play = in_play(acum, state, ctx(start, 100, cards=high))
        assert low_play is not None
        assert high_play is not None
        assert evaluate(low_play, ball, None)
        assert not evaluate(high_play, ball, None)
    assert in_play(acum, state, ctx(start, 100, cards=0)) is None


def test_ba3_pays_80_percent_and_keeps_20_percent_as_the_next_seed() -> None:
    acum = program("BA-3")
    split = payout(acum, D("1234.57"), ["x", "y"])
    assert split.prize == D("987.656")
    assert split.carry == D("246.914")  # "se detraerá el 20 por ciento … primera dotación del próximo"
    assert split.shares == {"x": D("493.82"), "y": D("493.82")}
    assert split.remainder == D("0.016")
    assert sum(split.shares.values()) + split.remainder + split.carry == D("1234.57")
    one = payout(acum, D("1000.00"), ["solo"])
    assert (one.shares["solo"], one.carry) == (D("800.00"), D("200.00"))
    # Every game: in play again right after an award, on the 20 % seed.
    state = next_state(acum, initial_state(acum), True, ctx(at(2025, 3, 3, 17, 0), "1000.00"))
    assert in_play(acum, state, ctx(at(2025, 3, 3, 17, 10), "203.10")) is not None


# --- BA-4 … BA-13 scheduled Bingo Extras --------------------------------------------------------------------


def scheduled_games(
    p: Program, days: int, first_day: date = DAY_N, tz: str = "Europe/Madrid"
) -> list[datetime]:
    """A game one minute after each scheduled hour and a filler game 25 minutes later, day after day."""
    games: list[datetime] = []
    for d in range(days):
        for slot in slots_of_day(first_day + timedelta(days=d), p.hours, tz):
            games.append(slot.instant.astimezone(ZoneInfo(tz)) + timedelta(minutes=1))
            games.append(slot.instant.astimezone(ZoneInfo(tz)) + timedelta(minutes=26))
    return games


def run_scheduled(p: Program, cat: HallCategory, games: list[datetime], pool: Decimal) -> list[InPlay]:
    state = initial_state(p)
    plays: list[InPlay] = []
    for start in games:
        game = ctx(start, pool, cat=cat)
        play = in_play(p, state, game)
        if play is not None:
            plays.append(play)
        state = next_state(p, state, False, game)
    return plays


def _table_cases() -> list[object]:
    cases: list[object] = []
    for pt, variant in SCHEDULED_VARIANTS.items():
        profiles: list[tuple[dict[str, object], tuple[ExtractionRow, ...]]] = [({}, variant.table.rows)]
        if variant.printed_table is not None:
            profiles.append(({"ba6_profile": "printed"}, variant.printed_table.rows))
        for params, rows in profiles:
            for cat in HallCategory:
                for row in rows:
                    name = f"{pt.value}{'-printed' if params else ''}-cat{cat.value}-row{row.game}"
                    cases.append(pytest.param(pt.value, params, cat, row, id=name))
    return cases


@pytest.mark.parametrize(("program_type", "params", "cat", "row"), _table_cases())
def test_every_table_row_for_every_category(
    program_type: str, params: dict[str, object], cat: HallCategory, row: ExtractionRow
) -> None:
    p = program(program_type, params)
    assert p.amount is not None
    plays = run_scheduled(p, cat, scheduled_games(p, days=row.day + 2), p.amount)
    play = plays[row.game - 1]  # the row-th scheduled game since the amount was reached
    assert play.max_ball == row.max_ball(cat)
    assert play.slot == row.hour
    assert play.operating_day == DAY_N + timedelta(days=row.day)
    assert play.amount == p.amount


@pytest.mark.parametrize(
    ("program_type", "cat", "expected"),
    [
        # Typed from the spec tables, not from the data under test.
        ("BA-4", FIRST, [50, 51, 52, 53, 54, 55]),
        ("BA-5", SECOND, [52, 52, 54, 54, 55, 55]),  # OP-05 printed +2, then +1 a day
        ("BA-5", THIRD, [54, 54, 56, 56, 57, 57]),
        ("BA-6", THIRD, [54, 55, 56, 57, 58, 59, 60, 61]),  # OP-06: four games a day, +1 each
        ("BA-7", FIRST, [50, 50, 50, 50, 51, 51, 51, 51, 52]),
        ("BA-8", SECOND, [52, 53, 54, 55, 56]),
        ("BA-9", THIRD, [54, 54, 55, 55, 56, 56]),
        ("BA-10", FIRST, [50, 51, 52, 53, 54, 55, 56, 57]),
        ("BA-11", SECOND, [52, 52, 52, 52, 53, 53, 53, 53, 54]),
        ("BA-12", FIRST, [48, 49, 50, 51, 52]),
        ("BA-13", THIRD, [50, 51, 52, 53, 54]),
    ],
)
def test_escalation_across_games_and_days(program_type: str, cat: HallCategory, expected: list[int]) -> None:
    p = program(program_type)
    assert p.amount is not None
    plays = run_scheduled(p, cat, scheduled_games(p, days=5), p.amount)
    assert [pl.max_ball for pl in plays[: len(expected)]] == expected


def test_scheduled_prize_needs_its_amount() -> None:
    p = program("BA-8")  # 12/2 Escalado, 12.000 €
    state = initial_state(p)
    g2001 = at(2025, 3, 3, 20, 1)
    assert in_play(p, state, ctx(g2001, "11999.99")) is None
    # The pool reached 12.000 € during the 20:01 game: the 20:30 game is not the 20:00 game ...
    state = next_state(p, state, False, ctx(g2001, "11999.99"))
    g2030 = at(2025, 3, 3, 20, 30)
    assert in_play(p, state, ctx(g2030, "12000.40")) is None
    state = next_state(p, state, False, ctx(g2030, "12000.40"))
    # ... the next scheduled game is the one after midnight, row 1.
    play = in_play(p, state, ctx(at(2025, 3, 4, 0, 2), "12001.00"))
    assert play is not None
    assert (play.max_ball, play.row, play.slot, play.operating_day) == (50, 1, time(0), DAY_N)


def test_1959_versus_2001() -> None:
    p = program("BA-4")
    state = initial_state(p)
    g1959, g2001 = at(2025, 3, 3, 19, 59), at(2025, 3, 3, 20, 1)
    play, state = step(p, state, ctx(g1959, 7000, cat=SECOND))
    assert play is None
    play, state = step(p, state, ctx(g2001, 7000, cat=SECOND))
    assert play is not None
    assert (play.max_ball, play.slot) == (52, time(20))


def test_award_resets_to_row_one() -> None:
    p = program("BA-8")
    state = initial_state(p)
    games = [at(2025, 3, 3, 20, 1), at(2025, 3, 4, 0, 1), at(2025, 3, 4, 20, 1)]
    for start in games[:2]:
        state = next_state(p, state, False, ctx(start, 12500))
    play = in_play(p, state, ctx(games[2], 12600))
    assert play is not None
    assert play.max_ball == 52
    assert evaluate(play, 52, None)
    split = payout(p, D("12600.00"), ["a", "b", "c"])
    assert (split.share, split.remainder, split.carry) == (D("4200.00"), D("0.00"), D(0))  # pays the pool
    state = next_state(p, state, True, ctx(games[2], 12600))
    assert (state.steps, state.day_steps, state.last_play_day) == (0, 0, None)
    assert in_play(p, state, ctx(at(2025, 3, 5, 0, 1), "35.00")) is None  # pool emptied
    play = in_play(p, state, ctx(at(2025, 3, 20, 20, 1), "12000.00"))  # reached again, later
    assert play is not None
    assert (play.max_ball, play.row) == (50, 1)


def test_escalado_after_a_session_that_ended_before_midnight() -> None:
    # k counts the scheduled games held (§2.4.4): the missed 00:00 game takes no row.
    p = program("BA-4")
    state = initial_state(p)
    play, state = step(p, state, ctx(at(2025, 3, 3, 20, 1), 6100))
    assert play is not None
    assert play.max_ball == 50
    last = ctx(at(2025, 3, 3, 23, 40), 6110, last=True)
    play, state = step(p, state, last)
    assert play is None
    play, state = step(p, state, ctx(at(2025, 3, 4, 17, 0), 6120))
    assert play is None
    play = in_play(p, state, ctx(at(2025, 3, 4, 20, 1), 6130))
    assert play is not None
    assert (play.max_ball, play.row) == (51, 2)


def test_fijo_after_a_missed_game_counts_days() -> None:
    # Default: the row of day n+1 (+1 the next day); parameter: count scheduled games (§2.4.4 formula).
    for fixed_step, expected in [("operating_day", [50, 51, 51]), ("scheduled_game", [50, 50, 51])]:
        p = program("BA-9", {"fixed_step": fixed_step})
        state = initial_state(p)
        seen = []
        for start in [
            at(2025, 3, 3, 20, 1),
            at(2025, 3, 3, 23, 40),
            at(2025, 3, 4, 20, 1),
            at(2025, 3, 5, 0, 1),
        ]:
            play, state = step(p, state, ctx(start, 13000))
            if play is not None:
                seen.append(play.max_ball)
        assert seen == expected, fixed_step


def test_fijo_first_game_after_midnight_is_day_n() -> None:
    p = program("BA-9")
    state = initial_state(p)
    play, state = step(p, state, ctx(at(2025, 3, 4, 0, 2), 12000, cat=THIRD))
    assert play is not None
    assert (play.max_ball, play.row, play.operating_day) == (54, 2, DAY_N)
    play = in_play(p, state, ctx(at(2025, 3, 4, 20, 2), 12000, cat=THIRD))
    assert play is not None
    assert (play.max_ball, play.row) == (55, 3)


def test_ba5_continuation_parameter() -> None:
    default = program("BA-5")
    formula = program("BA-5", {"extrapolation": "from_base"})
    for p, day3 in [(default, 55), (formula, 54)]:
        plays = run_scheduled(p, SECOND, scheduled_games(p, days=3), D(6000))
        assert [pl.max_ball for pl in plays] == [52, 52, 54, 54, day3, day3]


def test_30_1_skipped_day_moves_one_row() -> None:
    # A day without session has no scheduled game: the next game takes the next row.
    p = program("BA-12")
    state = initial_state(p)
    maxes = []
    for start in [at(2025, 3, 3, 20, 5), at(2025, 3, 5, 20, 5), at(2025, 3, 6, 20, 5)]:
        play, state = step(p, state, ctx(start, 31000, cat=SECOND))
        assert play is not None
        maxes.append(play.max_ball)
    assert maxes == [49, 50, 51]


@pytest.mark.parametrize("tz", ["Europe/Madrid", "Africa/Ceuta"])
def test_four_game_day_across_spring_forward(tz: str) -> None:
    # Saturday 29 March 2025: the 03:00 game is on Sunday 30, after the 02:00 → 03:00 jump.
    p = program("BA-10")
    starts = [
        at(2025, 3, 29, 16, 5, tz),
        at(2025, 3, 29, 20, 5, tz),
        at(2025, 3, 30, 0, 5, tz),
        at(2025, 3, 30, 1, 55, tz),  # five minutes before the jump: not the 03:00 game
        at(2025, 3, 30, 3, 0, tz),  # the jump itself: 03:00 has passed
        at(2025, 3, 30, 16, 5, tz),
    ]
    state = initial_state(p)
    seen = []
    for start in starts:
        play, state = step(p, state, ctx(start, 12000, cat=SECOND, tz=tz))
        seen.append(None if play is None else (play.slot, play.max_ball, play.operating_day))
    d = date(2025, 3, 29)
    assert seen == [
        (time(16), 52, d),
        (time(20), 53, d),
        (time(0), 54, d),
        None,
        (time(3), 55, d),
        (time(16), 56, date(2025, 3, 30)),
    ]


@pytest.mark.parametrize("tz", ["Europe/Madrid", "Africa/Ceuta"])
def test_fijo_across_fall_back(tz: str) -> None:
    # Saturday 25 October 2025: 03:00 CEST goes back to 02:00 CET on Sunday 26.
    p = program("BA-11")
    starts = [
        at(2025, 10, 25, 16, 5, tz),
        at(2025, 10, 25, 20, 5, tz),
        at(2025, 10, 26, 0, 5, tz),
        at(2025, 10, 26, 2, 30, tz),  # first 02:30 (CEST)
        at(2025, 10, 26, 2, 10, tz, fold=1),  # second 02:10 (CET): 3 h 10 after midnight, still before 03:00
        at(2025, 10, 26, 3, 2, tz),
        at(2025, 10, 26, 16, 5, tz),
    ]
    state = initial_state(p)
    seen = []
    for start in starts:
        play, state = step(p, state, ctx(start, 12000, cat=FIRST, tz=tz))
        seen.append(None if play is None else (play.slot, play.max_ball))
    assert seen == [(time(16), 50), (time(20), 50), (time(0), 50), None, None, (time(3), 50), (time(16), 51)]


def test_catch_up_parameter_plays_every_scheduled_hour() -> None:
    lapse = program("BA-10")
    catch = program("BA-10", {"missed_slot": "catch_up"})
    previous = at(2025, 3, 3, 3, 30)  # the previous operating day's last game
    starts = [at(2025, 3, 3, 20, 30), at(2025, 3, 3, 20, 40), at(2025, 3, 4, 0, 5)]
    for p, expected in [(lapse, [time(20), None, time(0)]), (catch, [time(16), time(20), time(0)])]:
        state = initial_state(p, previous_start=previous)
        seen = []
        for start in starts:
            play, state = step(p, state, ctx(start, 12000))
            seen.append(play.slot if play else None)
        assert seen == expected


# --- BA-14 … BA-18 next-game Primas -------------------------------------------------------------------------


@pytest.mark.parametrize("program_type", ["BA-14", "BA-15", "BA-16", "BA-17", "BA-18"])
def test_next_game_primas(program_type: str) -> None:
    p = program(program_type, {"amount": "1000"})
    g = ten_minutes_apart(at(2025, 3, 3, 17, 0), 3)
    state = initial_state(p)
    play, state = step(p, state, ctx(g[0], "1000.75"))  # reached in this game
    assert play is None
    play = in_play(p, state, ctx(g[1], "1001.50"))
    assert play is not None
    assert (play.max_ball, play.amount) == (None, D(1000))  # OP-11: no ball limit
    assert evaluate(play, 90, None)
    split = payout(p, D("1001.50"), ["only"])
    assert (split.shares["only"], split.carry) == (D(1000), D("1.50"))
    state = next_state(p, state, True, ctx(g[1], "1001.50"))
    assert in_play(p, state, ctx(g[2], "2.25")) is None


def test_next_game_prima_with_a_configured_ball_limit() -> None:
    p = program("BA-17", {"amount": "2500", "ball_limit": 60})
    play = in_play(p, initial_state(p, pool_amount=D(2600)), ctx(at(2025, 3, 3, 17, 0), 2600))
    assert play is not None
    assert evaluate(play, 60, None)
    assert not evaluate(play, 61, None)


# --- BA-19 Super Prima --------------------------------------------------------------------------------------


def test_ba19_super_prima_rises_one_ball_per_game_until_awarded() -> None:
    sp = bolsa_program("BA-19", pid="sp")
    g = ten_minutes_apart(at(2025, 3, 3, 22, 0), 4)
    state = initial_state(sp)
    assert in_play(sp, state, ctx(g[0], 1000)) is None  # nothing picked
    pick = ManagerPick("sp", amount=D(300), max_ball=45)
    play, state = step(sp, state, ctx(g[0], 1000, picks=[pick]))
    assert play is not None
    assert (play.max_ball, play.amount) == (45, D(300))
    assert not evaluate(play, 46, None)
    # No session limit: it goes on into the next session.
    play, state = step(sp, state, ctx(g[1], 1000, last=True))
    assert play is not None
    assert play.max_ball == 46
    play = in_play(sp, state, ctx(at(2025, 3, 4, 17, 0), 1000))
    assert play is not None
    assert play.max_ball == 47
    assert evaluate(play, 47, None)
    split = payout(sp, D(1000), ["a", "b"], amount=play.amount)
    assert (split.shares, split.carry) == ({"a": D(150), "b": D(150)}, D(700))  # the Bolsa keeps 700 €
    state = next_state(sp, state, True, ctx(at(2025, 3, 4, 17, 0), 1000))
    assert in_play(sp, state, ctx(at(2025, 3, 4, 17, 10), 700)) is None


def test_ba19_refusals() -> None:
    sp = bolsa_program("BA-19", pid="sp")
    start = at(2025, 3, 3, 22, 0)
    with pytest.raises(ProgramError, match=r"holds €250\.00, less than the prize €300\.00"):
        in_play(sp, initial_state(sp), ctx(start, 250, picks=[ManagerPick("sp", amount=D(300), max_ball=45)]))
    rolling = ProgramState(pick=ManagerPick("sp", amount=D(300), max_ball=45), steps=1)
    with pytest.raises(ProgramError, match="already in play"):
        in_play(sp, rolling, ctx(start, 900, picks=[ManagerPick("sp", amount=D(100), max_ball=50)]))
    with pytest.raises(ProgramError, match="two manager picks"):
        in_play(
            sp,
            initial_state(sp),
            ctx(start, 900, picks=[ManagerPick("sp", D(1), 50), ManagerPick("sp", D(2), 50)]),
        )
    with pytest.raises(ProgramError, match="no amount announced"):
        payout(sp, D(900), ["a"])


def test_ba19_standing_parameters_fill_the_pick() -> None:
    sp = bolsa_program("BA-19", {"amount": "200", "extraction_order": 50}, pid="sp")
    play = in_play(sp, initial_state(sp), ctx(at(2025, 3, 3, 22, 0), 900, picks=[ManagerPick("sp")]))
    assert play is not None
    assert (play.amount, play.max_ball) == (D(200), 50)


# --- BA-20 Colour Prima -------------------------------------------------------------------------------------


def test_ba20_colour_prima_stays_until_a_bingo_ball_of_its_colour() -> None:
    cp = bolsa_program("BA-20", pid="cp")
    g = ten_minutes_apart(at(2025, 3, 3, 18, 0), 3)
    state = initial_state(cp)
    pick = ManagerPick("cp", amount=D(500), colour="Red")
    play, state = step(cp, state, ctx(g[0], 2000, picks=[pick]))
    assert play is not None
    assert (play.colour, play.amount, play.max_ball) == ("red", D(500), None)
    assert not evaluate(play, 40, "blue")
    # Same colour and amount in the following games (OP-12).
    play = in_play(cp, state, ctx(g[1], 2000))
    assert play is not None
    assert (play.colour, play.amount) == ("red", D(500))
    assert evaluate(play, 87, "RED")
    split = payout(cp, D(2000), ["a", "b", "c"], amount=play.amount)
    assert (split.share, split.remainder, split.carry) == (D("166.66"), D("0.02"), D(1500))
    state = next_state(cp, state, True, ctx(g[1], 2000))
    assert in_play(cp, state, ctx(g[2], 1500)) is None


def test_ba20_the_500_cap_and_colours() -> None:
    cp = bolsa_program("BA-20", pid="cp")
    start = at(2025, 3, 3, 18, 0)
    with pytest.raises(ProgramError, match=r"amount €500\.01 is over the maximum of €500\.00"):
        in_play(
            cp,
            initial_state(cp),
            ctx(start, 2000, picks=[ManagerPick("cp", amount=D("500.01"), colour="red")]),
        )
    with pytest.raises(ProgramError, match="unknown colour 'magenta'"):
        in_play(
            cp,
            initial_state(cp),
            ctx(start, 2000, picks=[ManagerPick("cp", amount=D(100), colour="magenta")]),
        )
    with pytest.raises(ProgramError, match=r"over the maximum of €500\.00"):
        payout(cp, D(2000), ["a"], amount=D(501))
    play = in_play(
        cp, initial_state(cp), ctx(start, 2000, picks=[ManagerPick("cp", amount=D(500), colour="red")])
    )
    assert play is not None
    with pytest.raises(ValueError, match="colour of the ball that gave the Bingo is needed"):
        evaluate(play, 50, None)


# --- across programs ----------------------------------------------------------------------------------------


def test_one_bingo_evaluated_against_every_prize_in_play() -> None:
    # OP-35: each prize in play is evaluated on its own; one Bingo may win several.
    acum = program("BA-3", pid="acum")
    extra = program("BA-4", pid="6/2")
    colour = bolsa_program("BA-20", pid="cp")
    start = at(2025, 3, 3, 20, 1)
    game_for = {
        "acum": ctx(start, 800, cards=160),
        "6/2": ctx(start, 6100, cards=160, cat=SECOND),
        "cp": ctx(start, 2000, cards=160, picks=[ManagerPick("cp", amount=D(200), colour="green")]),
    }
    plays = {
        p.program_id: in_play(p, initial_state(p), game_for[p.program_id]) for p in (acum, extra, colour)
    }
    assert {k: (v.max_ball, v.colour) for k, v in plays.items() if v} == {
        "acum": (41, None),
        "6/2": (52, None),
        "cp": (None, "green"),
    }
    won = {k: evaluate(v, 45, "green") for k, v in plays.items() if v}
    assert won == {"acum": False, "6/2": True, "cp": True}


def test_a_program_not_in_play_cannot_be_won() -> None:
    acum = program("BA-3")
    with pytest.raises(ProgramError, match="was not in play in this game, so it cannot have been won"):
        next_state(acum, initial_state(acum), True, ctx(at(2025, 3, 3, 17, 0), 100, cards=0))


def test_evaluate_refuses_impossible_bingos() -> None:
    play = InPlay("p", ProgramType.BA_3, max_ball=44, colour=None, amount=D(1))
    with pytest.raises(ValueError, match="a Bingo comes at extraction 15–90, got 14"):
        evaluate(play, 14, None)
    with pytest.raises(ValueError, match="got 91"):
        evaluate(play, 91, None)
    assert evaluate(play, 15, None)


def test_game_context_is_checked() -> None:
    with pytest.raises(ValueError, match="aware datetime"):
        ctx(datetime(2025, 3, 3, 17, 0), 1)  # noqa: DTZ001
    with pytest.raises(ValueError, match="unknown IANA time zone"):
        ctx(at(2025, 3, 3, 17, 0), 1, tz="Melilla")
    with pytest.raises(ValueError, match="cards_sold"):
        ctx(at(2025, 3, 3, 17, 0), 1, cards=-1)
    with pytest.raises(ValueError, match="pool_amount"):
        ctx(at(2025, 3, 3, 17, 0), -1)
    with pytest.raises(ValueError, match="hall_category must be 1, 2 or 3"):
        ctx(at(2025, 3, 3, 17, 0), 1, cat="4")  # type: ignore[arg-type]
    stored = ctx(at(2025, 3, 3, 17, 0), 1, cat="2")  # type: ignore[arg-type]
    assert stored.hall_category is HallCategory.SECOND
    with pytest.raises(ValueError, match="pool_amount"):
        payout(program("BA-3"), 10.5, ["a"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="among no winners"):
        payout(program("BA-3"), D(10), [])
