"""Scheduled hours in the venue's time zone (BX-2, OP-07): 19:59 vs 20:01, past midnight, DST, session end."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import translation
from django.utils.translation import gettext

from bingo.traditional.programs.problems import Problem, of_error
from bingo.traditional.programs.schedule import (
    MissedSlot,
    Schedule,
    first_instant_at,
    operating_day,
    overlapping,
    parse_hour,
    scheduled_slot,
    slot_instant,
    slots_of_day,
    zone,
)
from halls import i18n

MADRID = ZoneInfo("Europe/Madrid")
ZONES = ["Europe/Madrid", "Africa/Ceuta"]  # Melilla uses Africa/Ceuta: same rules as Madrid (OP-07)
TWO = (time(20), time(0))
FOUR = (time(16), time(20), time(0), time(3))


def local(tz: str, y: int, m: int, d: int, hh: int = 0, mm: int = 0, fold: int = 0) -> datetime:
    return datetime(y, m, d, hh, mm, tzinfo=ZoneInfo(tz), fold=fold)


def utc(y: int, m: int, d: int, hh: int = 0, mm: int = 0) -> datetime:
    return datetime(y, m, d, hh, mm, tzinfo=UTC)


def slot_hour(start: datetime, previous: datetime | None, hours: tuple[time, ...] = TWO) -> time | None:
    slot = scheduled_slot(start, "Europe/Madrid", hours, previous_start=previous)
    return slot.hour if slot else None


# --- operating day (OP-07) ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hh", "mm", "day_after", "expected"),
    [
        (16, 0, False, date(2025, 3, 1)),
        (19, 59, False, date(2025, 3, 1)),
        (23, 59, False, date(2025, 3, 1)),
        (0, 0, True, date(2025, 3, 1)),  # 00:00 belongs to the evening before
        (3, 0, True, date(2025, 3, 1)),
        (5, 59, True, date(2025, 3, 1)),
        (6, 0, True, date(2025, 3, 2)),  # the default cut-off
    ],
)
def test_operating_day(hh: int, mm: int, day_after: bool, expected: date) -> None:
    when = local("Europe/Madrid", 2025, 3, 2 if day_after else 1, hh, mm)
    assert operating_day(when, "Europe/Madrid") == expected
    assert operating_day(when.astimezone(UTC), "Europe/Madrid") == expected  # any offset, same instant


def test_operating_day_cutoff_is_a_parameter() -> None:
    when = local("Europe/Madrid", 2025, 3, 2, 5, 0)
    assert operating_day(when, MADRID, cutoff=time(4)) == date(2025, 3, 2)
    assert operating_day(when, MADRID, cutoff=time(12)) == date(2025, 3, 1)


def test_slots_of_day_run_in_the_order_they_pass() -> None:
    slots = slots_of_day(date(2025, 3, 1), FOUR, MADRID)
    assert [s.hour for s in slots] == [time(16), time(20), time(0), time(3)]
    assert [s.instant for s in slots] == [
        utc(2025, 3, 1, 15),
        utc(2025, 3, 1, 19),
        utc(2025, 3, 1, 23),
        utc(2025, 3, 2, 2),
    ]


# --- the game nearest after hh:00, once passed --------------------------------------------------------------


def test_1959_is_not_the_20_game_but_2001_is() -> None:
    g1959 = local("Europe/Madrid", 2025, 3, 1, 19, 59)
    g2001 = local("Europe/Madrid", 2025, 3, 1, 20, 1)
    g2030 = local("Europe/Madrid", 2025, 3, 1, 20, 30)
    assert slot_hour(g1959, local("Europe/Madrid", 2025, 3, 1, 19, 40)) is None
    assert slot_hour(g2001, g1959) == time(20)
    assert slot_hour(g2030, g2001) is None  # 20:00 already had its game


def test_a_game_starting_exactly_on_the_hour_has_passed_it() -> None:
    # OP-07: start >= the hour.
    start = local("Europe/Madrid", 2025, 3, 1, 20, 0)
    assert slot_hour(start, local("Europe/Madrid", 2025, 3, 1, 19, 50)) == time(20)
    assert slot_hour(start + timedelta(minutes=20), start) is None


def test_past_midnight_the_00_game_belongs_to_the_evening_before() -> None:
    g2359 = local("Europe/Madrid", 2025, 3, 1, 23, 59)
    g0003 = local("Europe/Madrid", 2025, 3, 2, 0, 3)
    assert slot_hour(g2359, local("Europe/Madrid", 2025, 3, 1, 23, 40)) is None
    slot = scheduled_slot(g0003, "Europe/Madrid", TWO, previous_start=g2359)
    assert slot is not None
    assert (slot.hour, slot.operating_day) == (time(0), date(2025, 3, 1))
    later = scheduled_slot(g0003 + timedelta(minutes=15), "Europe/Madrid", TWO, previous_start=g0003)
    assert later is None


def test_03_game_of_a_long_session() -> None:
    g0250 = local("Europe/Madrid", 2025, 3, 2, 2, 50)
    g0305 = local("Europe/Madrid", 2025, 3, 2, 3, 5)
    assert slot_hour(g0250, local("Europe/Madrid", 2025, 3, 2, 2, 30), FOUR) is None
    slot = scheduled_slot(g0305, "Europe/Madrid", FOUR, previous_start=g0250)
    assert slot is not None
    assert (slot.hour, slot.operating_day) == (time(3), date(2025, 3, 1))


def test_last_game_of_the_session_before_midnight_misses_the_00_game() -> None:
    # The session ends with a game at 23:50; the next session starts the next afternoon.
    last = local("Europe/Madrid", 2025, 3, 1, 23, 50)
    first_next = local("Europe/Madrid", 2025, 3, 2, 17, 0)
    assert slot_hour(last, local("Europe/Madrid", 2025, 3, 1, 23, 30)) is None
    assert slot_hour(first_next, last) is None  # the 00:00 of 1 March is gone, 20:00 not yet passed
    assert slot_hour(first_next, last, FOUR) == time(16)
    g2005 = local("Europe/Madrid", 2025, 3, 2, 20, 5)
    assert slot_hour(g2005, first_next) == time(20)


def test_a_session_opening_late_lapses_or_catches_up() -> None:
    previous = local("Europe/Madrid", 2025, 3, 2, 3, 30)  # last game of the previous operating day
    g2030 = local("Europe/Madrid", 2025, 3, 2, 20, 30)
    lapse = scheduled_slot(g2030, MADRID, FOUR, previous_start=previous)
    assert lapse is not None
    assert (lapse.hour, lapse.lapsed) == (time(20), (time(16),))
    catch = scheduled_slot(g2030, MADRID, FOUR, previous_start=previous, mode=MissedSlot.CATCH_UP)
    assert catch is not None
    assert catch.hour == time(16)
    g2040 = g2030 + timedelta(minutes=10)
    then = scheduled_slot(
        g2040, MADRID, FOUR, previous_start=g2030, served={time(16)}, mode=MissedSlot.CATCH_UP
    )
    assert then is not None
    assert then.hour == time(20)
    assert scheduled_slot(g2040, MADRID, FOUR, previous_start=g2030) is None


def test_bad_inputs_are_refused() -> None:
    naive = datetime(2025, 3, 1, 20, 1)  # noqa: DTZ001 - the point of the test
    with pytest.raises(ValueError, match="aware datetime"):
        scheduled_slot(naive, MADRID, TWO, previous_start=None)
    with pytest.raises(ValueError, match="unknown IANA time zone 'Europe/Melilla'"):
        zone("Europe/Melilla")
    g = local("Europe/Madrid", 2025, 3, 1, 20, 1)
    with pytest.raises(ValueError, match="is after this game's"):
        scheduled_slot(g, MADRID, TWO, previous_start=g + timedelta(minutes=1))
    with pytest.raises(ValueError, match="not HH:MM"):
        parse_hour("25:00")
    with pytest.raises(ValueError, match="plain local HH:MM"):
        parse_hour("20:00:30")
    with pytest.raises(ValueError, match="must be 'HH:MM'"):
        parse_hour(20)
    assert parse_hour(" 03:00 ") == time(3)


# --- daylight-saving changes --------------------------------------------------------------------------------


@pytest.mark.parametrize("tz", ZONES)
def test_spring_forward_night(tz: str) -> None:
    # Sunday 30 March 2025: 02:00 CET jumps to 03:00 CEST.
    day = date(2025, 3, 29)
    assert slot_instant(day, time(0), tz) == utc(2025, 3, 29, 23)
    assert slot_instant(day, time(3), tz) == utc(2025, 3, 30, 1)  # only two real hours after midnight
    # A wall time that never shows is passed when the clock jumps over it.
    assert slot_instant(day, time(2, 30), tz) == utc(2025, 3, 30, 1)
    assert first_instant_at(datetime(2025, 3, 30, 2, 0), tz) == utc(2025, 3, 30, 1)  # noqa: DTZ001

    g0159 = local(tz, 2025, 3, 30, 1, 59)
    g0300 = local(tz, 2025, 3, 30, 3, 0)  # one real minute later
    assert scheduled_slot(g0159, tz, FOUR, previous_start=local(tz, 2025, 3, 30, 1, 30)) is None
    slot = scheduled_slot(g0300, tz, FOUR, previous_start=g0159)
    assert slot is not None
    assert (slot.hour, slot.operating_day) == (time(3), day)
    assert operating_day(g0300, tz) == day


@pytest.mark.parametrize("tz", ZONES)
def test_fall_back_night(tz: str) -> None:
    # Sunday 26 October 2025: 03:00 CEST goes back to 02:00 CET; 02:00–02:59 happens twice.
    day = date(2025, 10, 25)
    assert slot_instant(day, time(0), tz) == utc(2025, 10, 25, 22)
    assert slot_instant(day, time(3), tz) == utc(2025, 10, 26, 2)  # four real hours after midnight
    assert slot_instant(day, time(2, 30), tz) == utc(2025, 10, 26, 0, 30)  # first occurrence

    first_0210 = local(tz, 2025, 10, 26, 2, 10)
    second_0210 = local(tz, 2025, 10, 26, 2, 10, fold=1)
    assert second_0210.astimezone(UTC) == utc(2025, 10, 26, 1, 10)
    # 3 h 10 min of real time after midnight, yet the wall clock has not reached 03:00.
    assert scheduled_slot(first_0210, tz, FOUR, previous_start=local(tz, 2025, 10, 26, 1, 50)) is None
    assert scheduled_slot(second_0210, tz, FOUR, previous_start=first_0210) is None
    g0301 = local(tz, 2025, 10, 26, 3, 1)
    slot = scheduled_slot(g0301, tz, FOUR, previous_start=second_0210)
    assert slot is not None
    assert (slot.hour, slot.operating_day) == (time(3), day)
    # The hour that happens twice is served once, by the first game after its first occurrence.
    custom = (time(2, 30),)
    g_first_0240 = local(tz, 2025, 10, 26, 2, 40)
    assert scheduled_slot(g_first_0240, tz, custom, previous_start=first_0210) is not None
    g_second_0240 = local(tz, 2025, 10, 26, 2, 40, fold=1)
    assert scheduled_slot(g_second_0240, tz, custom, previous_start=g_first_0240) is None


@pytest.mark.parametrize("tz", ZONES)
def test_the_20_game_on_dst_sundays(tz: str) -> None:
    for d in (date(2025, 3, 30), date(2025, 10, 26)):
        g1959 = local(tz, d.year, d.month, d.day, 19, 59)
        g2001 = local(tz, d.year, d.month, d.day, 20, 1)
        assert scheduled_slot(g1959, tz, TWO, previous_start=None) is None
        slot = scheduled_slot(g2001, tz, TWO, previous_start=g1959)
        assert slot is not None
        assert slot.hour == time(20)


# --- overlapping schedules ----------------------------------------------------------------------------------


def test_overlapping_schedules() -> None:
    a = Schedule("6/2 Escalonado", TWO, kind="BA-4", room="sala 1")
    b = Schedule("6/2 Escalonado bis", TWO, kind="BA-4", room="sala 1")
    c = Schedule("30/1", (time(20),), kind="BA-12", room="sala 1")
    assert overlapping([a, b]) == [
        "two BA-4 programs (6/2 Escalonado, 6/2 Escalonado bis) in room 'sala 1' "
        "both claim the game after 00:00, 20:00"
    ]
    assert overlapping([a, c]) == []  # different prizes may share a game (OP-35)
    assert overlapping([a, c], exclusive_slots=True) == [
        "two programs (6/2 Escalonado, 30/1) in room 'sala 1' both claim the game after 20:00"
    ]
    assert overlapping([a, Schedule("other room", TWO, kind="BA-4", room="sala 2")]) == []
    assert overlapping([Schedule("x", (time(20), time(20)))]) == ["x: the hour 20:00 is listed twice"]


def test_overlapping_versions() -> None:
    jan = local("Europe/Madrid", 2025, 1, 1, 6, 0)
    feb = local("Europe/Madrid", 2025, 2, 1, 6, 0)
    v1 = Schedule("p", TWO, kind="BA-4", effective_from=jan, effective_to=feb)
    v2 = Schedule("p", TWO, kind="BA-4", effective_from=feb)
    assert overlapping([v1, v2]) == []  # one after the other
    v2_early = Schedule("p", TWO, kind="BA-4", effective_from=jan + timedelta(days=3))
    assert overlapping([v1, v2_early]) == ["p: two versions are in force at the same time"]
    backwards = Schedule("q", TWO, effective_from=feb, effective_to=jan)
    assert overlapping([backwards])[0].startswith("q: effective_to")
    # Versions of different programs that never coexist do not clash.
    other = Schedule("r", TWO, kind="BA-4", effective_from=feb)
    assert overlapping([v1, other]) == []


def test_the_schedules_problems_are_structured_and_said_in_spanish_at_the_edge() -> None:
    """Issue 26: overlapping() and parse_hour() give rules.Problems (code, parameters, label): their English
    is unchanged, and the Django edge says them in the reader's language with the catalogue."""
    a = Schedule("6/2 Escalonado", TWO, kind="BA-4", room="sala 1")
    b = Schedule("6/2 Escalonado bis", TWO, kind="BA-4", room="sala 1")
    (clash,) = overlapping([a, b])
    (twice,) = overlapping([Schedule("x", (time(20), time(20)))])
    assert isinstance(clash, Problem) and clash.code == "hours_shared_kind_room"
    assert twice.code == "hour_twice" and twice.label == "x" and twice == "x: the hour 20:00 is listed twice"
    with pytest.raises(ValueError, match="not HH:MM") as bad:
        parse_hour("25:00")
    hour = of_error(bad.value)
    assert isinstance(hour, Problem) and hour.code == "hour_not_hhmm"
    assert str(bad.value) == "scheduled hour '25:00' is not HH:MM"
    with translation.override("es"):
        said = [p.said(gettext, i18n.amount) for p in (clash, twice, hour)]
    assert said == [
        "dos programas BA-4 (6/2 Escalonado, 6/2 Escalonado bis) de la sala 'sala 1' reclaman los dos la "
        "partida posterior a las 00:00, 20:00",
        "x: la hora 20:00 aparece dos veces",
        "la hora programada '25:00' no tiene el formato HH:MM",
    ]
