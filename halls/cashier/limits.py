"""A player's loss and spend limits and the terminals' reality checks, pure (no Django).

A limit is an amount per period (the venue's local day, ISO week or calendar month) on what a player stakes
(spend) or stakes less what they win (loss). Lowering a limit, or setting a first one, takes effect at once;
raising or removing one waits a cooling-off period, recorded as a pending change on the limit. A raise
asked while another is pending: the same raise again is that change (a retry); another raise is refused
until the pending one applies (lowering is always allowed, and cancels the pending raise).

A reality check is due every `every` of a terminal session: check n at started + n * every. The player
acknowledges it (all the checks due so far) before playing on.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import StrEnum

from halls.money import ZERO


class LimitKind(StrEnum):
    LOSS = "loss"  # staked less won
    SPEND = "spend"  # staked


class Period(StrEnum):
    DAY = "day"
    WEEK = "week"  # ISO week: Monday to Sunday
    MONTH = "month"


def period_bounds(period: Period, local: datetime) -> tuple[datetime, datetime]:
    """The period holding `local` (an aware time in the venue's zone): its start and its end (the next
    period's start), local midnights in that zone."""
    if local.tzinfo is None:
        raise ValueError("period_bounds needs an aware local time")
    day = local.date()
    if period == Period.DAY:
        first, after = day, day + timedelta(days=1)
    elif period == Period.WEEK:
        first = day - timedelta(days=day.weekday())
        after = first + timedelta(days=7)
    else:
        first = day.replace(day=1)
        after = date(first.year + 1, 1, 1) if first.month == 12 else first.replace(month=first.month + 1)
    return _midnight(first, local), _midnight(after, local)


def _midnight(day: date, like: datetime) -> datetime:
    return datetime.combine(day, time(0), tzinfo=like.tzinfo)


# --- setting a limit ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """A limit as stored: the amount in force (None: no limit) and a pending raise, if any (its amount,
    None for a removal, and when it applies)."""

    amount: Decimal | None
    pending: bool = False
    pending_amount: Decimal | None = None
    pending_from: datetime | None = None


NONE = Setting(None)


def settled(setting: Setting, at: datetime) -> Setting:
    """The setting at `at`: a pending raise whose cooling-off has run applied."""
    if setting.pending and setting.pending_from is not None and at >= setting.pending_from:
        return Setting(setting.pending_amount)
    return setting


def in_force(setting: Setting, at: datetime) -> Decimal | None:
    """The limit that applies at `at` (None: none)."""
    return settled(setting, at).amount


def _lower(wanted: Decimal | None, current: Decimal | None) -> bool:
    """A tighter limit: a first one, or a smaller amount."""
    if wanted is None:
        return False
    return current is None or wanted < current


class Outcome(StrEnum):
    AT_ONCE = "at_once"  # lowered, set for the first time, or a pending raise cancelled: in force now
    PENDING = "pending"  # a raise or a removal: in force after the cooling-off
    UNCHANGED = "unchanged"  # the same as in force (or the same raise as pending): nothing to write
    REFUSED = "refused"  # another raise is pending, its cooling-off not run yet


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    before: Setting  # as it stood (a due pending raise applied)
    after: Setting  # what to store (the same as before when unchanged or refused)


def decide(current: Setting, wanted: Decimal | None, at: datetime, cooling_off: timedelta) -> Decision:
    """What asking for the limit `wanted` (None: no limit) at `at` does to `current`."""
    before = settled(current, at)
    now_amount = before.amount
    if _lower(wanted, now_amount):
        return Decision(Outcome.AT_ONCE, before, Setting(wanted))
    if wanted == now_amount:
        if before.pending:  # asking for the limit in force cancels the raise waiting
            return Decision(Outcome.AT_ONCE, before, Setting(now_amount))
        return Decision(Outcome.UNCHANGED, before, before)
    # A raise, or a removal.
    if before.pending:
        same = before.pending_amount == wanted
        return Decision(Outcome.UNCHANGED if same else Outcome.REFUSED, before, before)
    after = replace(before, pending=True, pending_amount=wanted, pending_from=at + cooling_off)
    return Decision(Outcome.PENDING, before, after)


# --- staking against a limit ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Used:
    """A period's play: staked, and won (prizes credited to the cards)."""

    staked: Decimal = ZERO
    won: Decimal = ZERO

    def of(self, kind: LimitKind) -> Decimal:
        return self.staked if kind == LimitKind.SPEND else self.staked - self.won

    def plus(self, stake: Decimal) -> Used:
        return Used(self.staked + stake, self.won)


def left(kind: LimitKind, limit: Decimal, used: Used) -> Decimal:
    """What may still be staked in the period under `limit` (never below zero)."""
    return max(ZERO, limit - used.of(kind))


def allows(kind: LimitKind, limit: Decimal, used: Used, stake: Decimal) -> bool:
    """Whether staking `stake` keeps the period within `limit` (a stake adds to both spend and loss)."""
    return used.of(kind) + stake <= limit


# --- reality checks -------------------------------------------------------------------------------------


def checks_due(started: datetime, at: datetime, every: timedelta) -> int:
    """How many reality checks have come due in a session started at `started`, by `at`."""
    if every <= timedelta(0):
        raise ValueError("a reality check interval is positive")
    if at <= started:
        return 0
    return (at - started) // every


def due_check(started: datetime, acknowledged: int, at: datetime, every: timedelta) -> int | None:
    """The number of the reality check waiting for the player's acknowledgement at `at`, or None."""
    due = checks_due(started, at, every)
    return due if due > acknowledged else None


def next_check_at(started: datetime, acknowledged: int, every: timedelta) -> datetime:
    """When the first check not yet acknowledged comes due (in the past when one is due now)."""
    return started + every * (acknowledged + 1)
