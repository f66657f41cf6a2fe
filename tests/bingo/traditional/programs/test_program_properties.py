"""Properties: payouts add up to the pool exactly; no program pays outside its condition; scheduled hours are
served once, by the first game after them; operating days and DST instants are what they say."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.balls import DEFAULT_PALETTE
from bingo.traditional.programs.regulation import BA_3_SCALE, HallCategory, ProgramType
from bingo.traditional.programs.rules import (
    Family,
    GameContext,
    ManagerPick,
    Pays,
    Program,
    ProgramError,
    evaluate,
    in_play,
    initial_state,
    make_program,
    next_state,
    payout,
)
from bingo.traditional.programs.schedule import first_instant_at, operating_day, slots_of_day

D = Decimal
ZONES = ["Europe/Madrid", "Africa/Ceuta"]
JAN = datetime(2025, 1, 1, 6, tzinfo=ZoneInfo("Europe/Madrid"))
SALES: dict[str, object] = {"funding_percent": "1.5", "authorisation_ref": "ML-DGJ-2025/017"}
PARAMS: dict[ProgramType, dict[str, object]] = {
    ProgramType.BA_1: {**SALES, "amount": "50"},
    ProgramType.BA_2: {**SALES, "amount": "500", "extraction_order": 52},
    ProgramType.BA_3: SALES,
    **{ProgramType(f"BA-{n}"): SALES for n in range(4, 14)},
    ProgramType.BA_14: {**SALES, "amount": "1000"},
    ProgramType.BA_15: {**SALES, "amount": "1500", "ball_limit": 55},
    ProgramType.BA_16: {**SALES, "amount": "2000"},
    ProgramType.BA_17: {**SALES, "amount": "2500"},
    ProgramType.BA_18: {**SALES, "amount": "3000"},
    ProgramType.BA_19: {},
    ProgramType.BA_20: {},
}
PROGRAMS = {pt: make_program(pt, PARAMS[pt], program_id=pt.value, effective_from=JAN) for pt in ProgramType}
# Interpretation alternatives exercised too.
VARIANTS = [
    make_program("BA-7", {**SALES, "missed_slot": "catch_up"}, program_id="catch", effective_from=JAN),
    make_program("BA-5", {**SALES, "fixed_step": "scheduled_game"}, program_id="k", effective_from=JAN),
    make_program("BA-6", {**SALES, "ba6_profile": "printed"}, program_id="printed", effective_from=JAN),
]

money = st.decimals(min_value=0, max_value=10**6, places=4, allow_nan=False, allow_infinity=False)
all_programs = st.sampled_from([*PROGRAMS.values(), *VARIANTS])


@given(program=all_programs, extra=money, winners=st.integers(min_value=1, max_value=40), amount=money)
def test_shares_remainder_and_carry_add_up_to_the_pool(
    program: Program, extra: Decimal, winners: int, amount: Decimal
) -> None:
    announced: Decimal | None = None
    if program.family in (Family.SUPER_PRIMA, Family.COLOUR_PRIMA):
        cap = program.max_amount or D(10**6)
        announced = max(D("0.01"), min(amount.quantize(D("0.01")), cap))
        pool = announced + extra
    elif program.pays is Pays.AMOUNT:
        assert program.amount is not None
        pool = program.amount + extra
    else:
        pool = extra
    result = payout(program, pool, [f"card-{i}" for i in range(winners)], amount=announced)
    assert sum(result.shares.values()) + result.remainder + result.carry == pool
    assert set(result.shares.values()) == {result.share}
    assert result.share == result.share.quantize(D("0.01"))
    assert D(0) <= result.remainder < D("0.01") * winners
    assert result.carry >= 0
    assert result.next_pool == result.carry + result.remainder
    if program.program_type is ProgramType.BA_3:
        assert result.carry == pool * D(20) / D(100)  # the 20 % seed, exactly
    if program.program_type is ProgramType.BA_20:
        assert result.prize <= D(500)
    if program.pays is Pays.AMOUNT and announced is None:
        assert result.prize == program.amount


game = st.tuples(
    st.integers(min_value=3, max_value=400),  # minutes since the previous game
    st.decimals(min_value=0, max_value=70000, places=2, allow_nan=False, allow_infinity=False),  # pool
    st.integers(min_value=0, max_value=400),  # cards sold
    st.integers(min_value=15, max_value=90),  # ball that gave the Bingo
    st.sampled_from(DEFAULT_PALETTE),  # its colour
    st.booleans(),  # last game of the session
    st.one_of(st.none(), st.tuples(st.integers(15, 90), st.sampled_from(DEFAULT_PALETTE))),  # a manager pick
)


@settings(max_examples=300, deadline=None)
@given(
    program=all_programs,
    category=st.sampled_from(list(HallCategory)),
    zone=st.sampled_from(ZONES),
    first=st.datetimes(min_value=datetime(2025, 1, 1), max_value=datetime(2026, 12, 31)),  # noqa: DTZ001
    games=st.lists(game, min_size=1, max_size=25),
)
def test_a_program_never_pays_outside_its_condition(
    program: Program,
    category: HallCategory,
    zone: str,
    first: datetime,
    games: list[tuple[int, Decimal, int, int, str, bool, tuple[int, str] | None]],
) -> None:
    state = initial_state(program)
    start = first.replace(tzinfo=UTC)
    served: set[tuple[date, time]] = set()
    for minutes, pool, cards, ball, colour, last, pick in games:
        start += timedelta(minutes=minutes)
        picks: tuple[ManagerPick, ...] = ()
        if (
            pick is not None
            and state.pick is None
            and program.family in (Family.SUPER_PRIMA, Family.COLOUR_PRIMA)
        ):
            order, pick_colour = pick
            if program.family is Family.SUPER_PRIMA:
                picks = (ManagerPick(program.program_id, amount=D(100), max_ball=order),)
            else:
                picks = (ManagerPick(program.program_id, amount=D(100), colour=pick_colour),)
            pool = max(pool, D(100))
        if state.pick is not None:
            pool = max(pool, D(100))  # the Bolsa can still fund the prize rolling over
        ctx = GameContext(start, zone, category, cards, pool, last_game_of_session=last, manager_picks=picks)
        play = in_play(program, state, ctx)
        won = play is not None and evaluate(play, ball, colour)
        if play is None:
            try:
                next_state(program, state, True, ctx)
            except ProgramError:
                pass
            else:
                raise AssertionError("a program not in play was accepted as won")
        else:
            assert play.max_ball is None or 15 <= play.max_ball <= 90 or program.family is Family.ACUMULADO
            if won:
                assert play.max_ball is None or ball <= play.max_ball
                assert play.colour is None or play.colour == colour
            if program.family is Family.PRIMA:
                assert play.max_ball == 48
            if program.family is Family.ACUMULADO:
                assert play.max_ball == BA_3_SCALE.max_ball(cards)
            if program.family is Family.COLOUR_PRIMA:
                assert play.colour is not None
                assert play.amount <= D(500)
            if program.family is Family.SCHEDULED:
                assert play.slot is not None
                assert play.operating_day is not None
                key = (play.operating_day, play.slot)
                assert key not in served, "a scheduled hour was given two games"
                served.add(key)
                assert pool >= (program.amount or 0)
        state = next_state(program, state, won, ctx)


@settings(max_examples=200, deadline=None)
@given(
    zone=st.sampled_from(ZONES),
    first=st.datetimes(min_value=datetime(2025, 1, 1), max_value=datetime(2026, 12, 31)),  # noqa: DTZ001
    gaps=st.lists(st.integers(min_value=1, max_value=300), min_size=1, max_size=40),
)
def test_each_scheduled_hour_goes_to_the_first_game_after_it(
    zone: str, first: datetime, gaps: list[int]
) -> None:
    program = PROGRAMS[ProgramType.BA_10]  # 16, 20, 00, 03
    state = initial_state(program)
    start = first.replace(tzinfo=UTC)
    starts: list[datetime] = []
    got: dict[datetime, datetime] = {}  # slot instant -> game start
    for gap in gaps:
        start += timedelta(minutes=gap)
        ctx = GameContext(start, zone, HallCategory.FIRST, 100, D(20000))
        play = in_play(program, state, ctx)
        if play is not None:
            assert play.operating_day is not None
            assert play.slot is not None
            (slot,) = [s for s in slots_of_day(play.operating_day, [play.slot], zone)]
            got[slot.instant] = start
        starts.append(start)
        state = next_state(program, state, False, ctx)
    for slot_instant, game_start in got.items():
        assert game_start >= slot_instant
        earlier = [s for s in starts if slot_instant <= s < game_start]
        assert earlier == [], "an earlier game already followed this hour"


@given(
    zone=st.sampled_from(ZONES),
    when=st.datetimes(min_value=datetime(2024, 1, 1), max_value=datetime(2027, 12, 31)),  # noqa: DTZ001
)
def test_operating_day_is_the_local_date_or_the_day_before(zone: str, when: datetime) -> None:
    instant = when.replace(tzinfo=UTC)
    local = instant.astimezone(ZoneInfo(zone))
    expected = local.date() if local.time() >= time(6) else local.date() - timedelta(days=1)
    assert operating_day(instant, zone) == expected


@given(
    zone=st.sampled_from(ZONES),
    when=st.datetimes(min_value=datetime(2024, 1, 1), max_value=datetime(2027, 12, 31)),  # noqa: DTZ001
)
def test_first_instant_at_is_the_first_with_that_wall_time(zone: str, when: datetime) -> None:
    wall = when.replace(second=0, microsecond=0)
    z = ZoneInfo(zone)
    instant = first_instant_at(wall, zone)
    assert instant.astimezone(z).replace(tzinfo=None) >= wall
    assert (instant - timedelta(seconds=1)).astimezone(z).replace(tzinfo=None) < wall
