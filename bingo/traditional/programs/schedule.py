"""Scheduled games of the Bingo Extra family (BA-4 … BA-13) in the venue's IANA time zone. Pure.

"La partida más próxima a las veinte horas … una vez traspasada dicha hora" (art. 147.3.c.3º (second
occurrence)–13.º) is read, per spec §9 OP-07, as: the first game whose start is at or after hh:00 local time.
00:00 and 03:00 belong to the operating day that began the evening before: an operating day runs from the
venue's cut-off (06:00 by default, Interpretation) to the next cut-off.

Instants are compared in UTC: two aware datetimes with the same `tzinfo` compare by wall clock in Python,
which is wrong across a daylight-saving change. A scheduled wall time that does not exist (spring forward)
is passed at the transition; one that occurs twice (fall back) is passed at its first occurrence.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bingo.traditional.programs.problems import Problem, problem

# OP-07 (Interpretation): the operating day changes at 06:00 local time.
DEFAULT_DAY_CUTOFF = time(6, 0)
_DAY = timedelta(days=1)


class MissedSlot(StrEnum):
    """What a game does when it is the first game after two scheduled hours (session opened late)."""

    LAPSE = "lapse"  # default: it serves the later hour; the earlier one is not played that day
    CATCH_UP = "catch_up"  # it serves the earlier hour; the next game serves the later one


@dataclass(frozen=True)
class Slot:
    """A scheduled hour of an operating day and the instant it passes (UTC)."""

    operating_day: date
    hour: time
    instant: datetime
    # Other scheduled hours this game also followed and that lapse (MissedSlot.LAPSE), for the record.
    lapsed: tuple[time, ...] = ()


def zone(name: str | ZoneInfo) -> ZoneInfo:
    """The venue's IANA zone; an unknown name is refused with a clear message."""
    if isinstance(name, ZoneInfo):
        return name
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(problem("unknown_zone", value=name)) from exc


def to_utc(instant: datetime, what: str = "game start") -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(problem("naive_instant", what=what, value=instant.isoformat()))
    return instant.astimezone(UTC)


def parse_hour(value: object) -> time:
    """A scheduled hour from a `time` or "HH:MM"; seconds and time zones are refused."""
    if isinstance(value, time):
        hour = value
    elif isinstance(value, str):
        try:
            hour = time.fromisoformat(value.strip())
        except ValueError as exc:
            raise ValueError(problem("hour_not_hhmm", value=value)) from exc
    else:
        raise ValueError(problem("hour_kind", kind=type(value).__name__))
    if hour.tzinfo is not None or hour.second or hour.microsecond:
        raise ValueError(problem("hour_not_plain", value=value))
    return hour


def operating_day(instant: datetime, tz: str | ZoneInfo, cutoff: time = DEFAULT_DAY_CUTOFF) -> date:
    """The operating day of an instant: local date, minus one day before the cut-off (OP-07)."""
    local = to_utc(instant).astimezone(zone(tz))
    day = local.date()
    return day - _DAY if local.time().replace(fold=0) < cutoff else day


def _wall(instant: datetime, tz: ZoneInfo) -> datetime:
    return instant.astimezone(tz).replace(tzinfo=None, fold=0)


def first_instant_at(local: datetime, tz: str | ZoneInfo) -> datetime:
    """The first instant (UTC) at which the local wall clock shows `local` or later.

    Normal time: that instant. Repeated hour (fall back): its first occurrence. Skipped hour (spring
    forward): the transition, when the clock jumps past it.
    """
    if local.tzinfo is not None:
        raise ValueError("pass a naive local wall time")
    z = zone(tz)
    candidates = sorted(local.replace(tzinfo=z, fold=f).astimezone(UTC) for f in (0, 1))
    exact = [u for u in candidates if _wall(u, z) == local]
    if exact:
        return exact[0]
    # In the gap: the wall clock is before `local` at lo and after it at hi; find the jump to the second.
    lo, hi = candidates
    while hi - lo > timedelta(seconds=1):
        mid = lo + (hi - lo) / 2
        mid = mid.replace(microsecond=0)
        if _wall(mid, z) >= local:
            hi = mid
        else:
            lo = mid
    return hi


def slot_instant(day: date, hour: time, tz: str | ZoneInfo, cutoff: time = DEFAULT_DAY_CUTOFF) -> datetime:
    """When `hour` of operating day `day` passes: hours before the cut-off fall on the next calendar date."""
    calendar_day = day + _DAY if hour < cutoff else day
    return first_instant_at(datetime.combine(calendar_day, hour), tz)


def slots_of_day(
    day: date, hours: Iterable[time], tz: str | ZoneInfo, cutoff: time = DEFAULT_DAY_CUTOFF
) -> tuple[Slot, ...]:
    """The scheduled hours of an operating day in the order they pass (16, 20, 00, 03)."""
    slots = [Slot(day, h, slot_instant(day, h, tz, cutoff)) for h in set(hours)]
    return tuple(sorted(slots, key=lambda s: s.instant))


def scheduled_slot(
    start: datetime,
    tz: str | ZoneInfo,
    hours: Sequence[time],
    *,
    previous_start: datetime | None,
    cutoff: time = DEFAULT_DAY_CUTOFF,
    served: Iterable[time] = (),
    mode: MissedSlot = MissedSlot.LAPSE,
) -> Slot | None:
    """The scheduled hour this game is "the game closest to, once passed" for, or None (BX-2, OP-07).

    `previous_start` is the start of the previous game of the room (None if there was none that the
    program saw); `served` are the hours of this game's operating day already given a game (CATCH_UP).
    A game starting exactly at hh:00 has passed it (OP-07: start >= the hour).
    """
    begins = to_utc(start)
    before = to_utc(previous_start, "previous game start") if previous_start is not None else None
    if before is not None and before > begins:
        raise ValueError(problem("previous_after", before=before.isoformat(), begins=begins.isoformat()))
    day = operating_day(begins, tz, cutoff)
    passed = [s for s in slots_of_day(day, hours, tz, cutoff) if s.instant <= begins]
    if mode is MissedSlot.CATCH_UP:
        done = set(served)
        due = [s for s in passed if s.hour not in done]
        return due[0] if due else None
    due = [s for s in passed if before is None or before < s.instant]
    if not due:
        return None
    latest = due[-1]
    return Slot(latest.operating_day, latest.hour, latest.instant, tuple(s.hour for s in due[:-1]))


# --- configuration checks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Schedule:
    """The scheduled hours of one program in one room, for the overlap check."""

    name: str
    hours: tuple[time, ...]
    kind: str = ""
    room: str = ""
    effective_from: datetime | None = None
    effective_to: datetime | None = None

    def _period(self) -> tuple[datetime, datetime]:
        lo = (
            to_utc(self.effective_from, "effective_from")
            if self.effective_from
            else datetime.min.replace(tzinfo=UTC)
        )
        hi = (
            to_utc(self.effective_to, "effective_to")
            if self.effective_to
            else datetime.max.replace(tzinfo=UTC)
        )
        return lo, hi


def _fmt(hours: Iterable[time]) -> str:
    return ", ".join(h.strftime("%H:%M") for h in sorted(hours))


def overlapping(schedules: Sequence[Schedule], *, exclusive_slots: bool = False) -> list[Problem]:
    """Why a set of schedules cannot all be in force (empty when they can).

    * one schedule lists the same hour twice;
    * a schedule's period ends before it starts;
    * two versions of the same program (same name and room) are in force at the same time (BA-G3);
    * two programs of the same kind in a room claim the game after the same hour (a duplicated
      activation); with `exclusive_slots`, any two programs sharing an hour in a room. Different kinds may
      share a game by default: each prize in play is evaluated independently (OP-35).
    """
    problems: list[Problem] = []
    for s in schedules:
        seen: set[time] = set()
        for h in s.hours:
            if h in seen:
                problems.append(problem("hour_twice", label=s.name, hour=h.strftime("%H:%M")))
            seen.add(h)
        lo, hi = s._period()
        if hi <= lo:
            problems.append(problem("period_empty", label=s.name, to=hi.isoformat(), since=lo.isoformat()))
    for i, a in enumerate(schedules):
        for b in schedules[i + 1 :]:
            if a.room != b.room:
                continue
            a_lo, a_hi = a._period()
            b_lo, b_hi = b._period()
            if not (a_lo < b_hi and b_lo < a_hi):
                continue
            room = {"room": a.room} if a.room else {}
            in_room = "_room" if a.room else ""
            if a.name == b.name:
                problems.append(problem(f"two_versions{in_room}", label=a.name, **room))
                continue
            shared = set(a.hours) & set(b.hours)
            if shared and (exclusive_slots or (a.kind and a.kind == b.kind)):
                kind = {"kind": a.kind} if a.kind == b.kind and a.kind else {}
                code = f"hours_shared{'_kind' if kind else ''}{in_room}"
                problems.append(
                    problem(code, first=a.name, second=b.name, hours=_fmt(shared), **kind, **room)
                )
    return problems
