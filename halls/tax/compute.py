"""Gaming-tax returns, computed (pure: no Django).

A return is one venue's, for one period (a calendar month or quarter, the jurisdiction's setting). Its
figures come per game type from the apps that keep them (halls.tax.hooks): the amount played (card sales at
face value for bingo, bets for electronic bingo, coin in for machines), the prizes paid, the table drop and
the machines counted in the period. The rate table (data the operator enters, with its legal reference) says
per game type which base the jurisdiction taxes and at which rate:

- ``sales``: the amount played (card sales at face value);
- ``net``: the amount played less the prizes (never below zero: a period whose prizes exceed what was
  played has a base of 0.00);
- ``drop``: the table drop;
- ``machines``: no money base, only the fixed fee per machine and period.

A line's amount due is base × rate % (exact), rounded to the cent as the rate table states (``half_up``:
the nearest cent, half a cent up; ``down``: toward zero), plus the fixed fee × the machines counted (whole
cents, exact). What rounding left is the line's ``remainder`` (exact - rounded), recorded. The total due is
the sum of the lines' amounts due. Same figures and rates give the same return, to the cent, and the same
CSV (so the same SHA-256).
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal

from halls import money

ZERO = money.ZERO
BASES = ("sales", "net", "drop", "machines")
ROUNDINGS = ("half_up", "down")
PERIODS = ("month", "quarter")
CSV_FORMAT = "hall-tax-return/v1"


class PeriodError(ValueError):
    """A period label that is not a month ("2026-11") or a quarter ("2026-Q4") of the kind asked."""


class MissingRates(LookupError):
    """Game types with figures in the period and no rate in the table (the return is blocked)."""

    def __init__(self, game_types: Sequence[str]) -> None:
        self.game_types = tuple(game_types)
        super().__init__(", ".join(self.game_types))


# --- periods --------------------------------------------------------------------------------------------

_MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")
_QUARTER = re.compile(r"^(\d{4})-Q([1-4])$")


@dataclass(frozen=True, slots=True)
class Period:
    kind: str  # "month" or "quarter"
    first: date
    last: date

    @property
    def label(self) -> str:
        if self.kind == "month":
            return f"{self.first.year:04d}-{self.first.month:02d}"
        return f"{self.first.year:04d}-Q{(self.first.month - 1) // 3 + 1}"

    @property
    def after(self) -> date:
        """The first day after the period."""
        return _add_months(self.first, 1 if self.kind == "month" else 3)


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def period_of(kind: str, day: date) -> Period:
    """The month or quarter holding ``day``."""
    if kind not in PERIODS:
        raise PeriodError(f"a period is a month or a quarter, not {kind!r}")
    months = 1 if kind == "month" else 3
    first = date(day.year, (day.month - 1) // months * months + 1, 1)
    return Period(kind, first, date.fromordinal(_add_months(first, months).toordinal() - 1))


def parse_period(label: str, kind: str) -> Period:
    """The period a label names, of the kind the jurisdiction files by ("2026-11" a month, "2026-Q4" a
    quarter); PeriodError otherwise."""
    text = (label or "").strip().upper()
    if kind == "month" and (found := _MONTH.match(text)):
        return period_of("month", date(int(found[1]), int(found[2]), 1))
    if kind == "quarter" and (found := _QUARTER.match(text)):
        return period_of("quarter", date(int(found[1]), (int(found[2]) - 1) * 3 + 1, 1))
    if kind not in PERIODS:
        raise PeriodError(f"a period is a month or a quarter, not {kind!r}")
    raise PeriodError(f"{label!r} is not a {kind} ({'YYYY-MM' if kind == 'month' else 'YYYY-Qn'})")


# --- figures and rates ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Figures:
    """What one game type took in a venue over a period (whole cents)."""

    game_type: str
    played: Decimal = ZERO  # card sales at face value, bets, coin in
    prizes: Decimal = ZERO  # prizes paid (coin out and jackpots for machines)
    drop: Decimal = ZERO  # the table drop
    machines: int = 0  # machines of the type counted in the period

    def plus(self, other: Figures) -> Figures:
        return replace(
            self,
            played=self.played + other.played,
            prizes=self.prizes + other.prizes,
            drop=self.drop + other.drop,
            machines=self.machines + other.machines,
        )

    @property
    def active(self) -> bool:
        """Anything to tax: money moved or a machine counted."""
        return bool(self.played or self.prizes or self.drop or self.machines)


@dataclass(frozen=True, slots=True)
class Rate:
    """One line of a rate table: the game type, the base its jurisdiction taxes, the rate (a percentage,
    None when only a fee applies) and the fixed fee per machine and period (None when none)."""

    game_type: str
    basis: str
    percent: Decimal | None = None
    fee: Decimal | None = None


@dataclass(frozen=True, slots=True)
class Line:
    game_type: str
    basis: str
    played: Decimal
    prizes: Decimal
    drop: Decimal
    machines: int
    base: Decimal  # the money base the rate applies to (0.00 for a fee only)
    percent: Decimal | None
    fee: Decimal | None
    exact: Decimal  # base × percent / 100, unrounded
    rated: Decimal  # exact rounded to the cent as stated
    fees: Decimal  # fee × machines
    due: Decimal  # rated + fees
    remainder: Decimal  # exact - rated: what the rounding left


@dataclass(frozen=True, slots=True)
class Computed:
    lines: tuple[Line, ...]
    rounding: str
    total: Decimal


def add_up(figures: Iterable[Figures]) -> dict[str, Figures]:
    """One Figures per game type (the sources' parts added), by game type."""
    totals: dict[str, Figures] = {}
    for part in figures:
        found = totals.get(part.game_type)
        totals[part.game_type] = part if found is None else found.plus(part)
    return dict(sorted(totals.items()))


def base_of(basis: str, figures: Figures) -> Decimal:
    if basis == "sales":
        return figures.played
    if basis == "net":
        return max(ZERO, figures.played - figures.prizes)
    if basis == "drop":
        return figures.drop
    if basis == "machines":
        return ZERO
    raise ValueError(f"unknown basis {basis!r}")


def rounded(value: Decimal, rounding: str) -> Decimal:
    if rounding == "half_up":
        return money.cents_half_up(value)
    if rounding == "down":
        return money.cents_down(value)
    raise ValueError(f"unknown rounding {rounding!r}")


def line_of(rate: Rate, figures: Figures, rounding: str) -> Line:
    base = base_of(rate.basis, figures)
    exact = money.percent_of(base, rate.percent) if rate.percent is not None else ZERO
    rated = rounded(exact, rounding)
    fees = money.EXACT.multiply(rate.fee, figures.machines) if rate.fee is not None else ZERO
    return Line(
        game_type=rate.game_type,
        basis=rate.basis,
        played=figures.played,
        prizes=figures.prizes,
        drop=figures.drop,
        machines=figures.machines,
        base=base,
        percent=rate.percent,
        fee=rate.fee,
        exact=exact,
        rated=rated,
        fees=money.cents(fees),
        due=money.cents(rated + fees),
        remainder=exact - rated,
    )


def missing_rates(figures: Iterable[Figures], rates: Iterable[Rate]) -> list[str]:
    """The game types with figures that no rate covers, in order."""
    covered = {rate.game_type for rate in rates}
    return [game_type for game_type, f in add_up(figures).items() if f.active and game_type not in covered]


def compute(figures: Iterable[Figures], rates: Iterable[Rate], rounding: str) -> Computed:
    """The return's lines, one per rate of the table (a game type without figures: a line of zeros), and
    its total; MissingRates when a game type with figures has no rate."""
    parts = list(figures)
    table = sorted(rates, key=lambda r: r.game_type)
    if len({r.game_type for r in table}) != len(table):
        raise ValueError("a rate table has one line per game type")
    if rounding not in ROUNDINGS:
        raise ValueError(f"unknown rounding {rounding!r}")
    missing = missing_rates(parts, table)
    if missing:
        raise MissingRates(missing)
    totals = add_up(parts)
    lines = tuple(line_of(r, totals.get(r.game_type, Figures(r.game_type)), rounding) for r in table)
    return Computed(lines=lines, rounding=rounding, total=sum((line.due for line in lines), ZERO))


# --- the filed file -------------------------------------------------------------------------------------

COLUMNS = (
    "game_type",
    "basis",
    "played",
    "prizes",
    "drop",
    "machines",
    "base",
    "rate_percent",
    "fee_per_machine",
    "exact",
    "rated",
    "fees",
    "due",
    "remainder",
)


def number(value: Decimal | None) -> str:
    """A Decimal as plain text, no exponent, no trailing zeros ("15", "0.5", "9.123456"); None: ""."""
    if value is None:
        return ""
    return format(value.normalize(context=money.EXACT), "f")


def amount(value: Decimal) -> str:
    """Whole cents, always two decimals ("12.30")."""
    return str(money.cents(value))


def line_row(line: Line) -> list[str]:
    return [
        line.game_type,
        line.basis,
        amount(line.played),
        amount(line.prizes),
        amount(line.drop),
        str(line.machines),
        amount(line.base),
        number(line.percent),
        "" if line.fee is None else amount(line.fee),
        number(line.exact),
        amount(line.rated),
        amount(line.fees),
        amount(line.due),
        number(line.remainder),
    ]


def csv_text(head: Mapping[str, str], computed: Computed) -> str:
    """The return as the CSV the operator files: ``key,value`` rows (the format, then ``head``: venue,
    jurisdiction, period, days, rate table), a blank row, the lines under their column names, and the
    total. Language-independent codes and plain numbers, so its SHA-256 depends on the figures only."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["format", CSV_FORMAT])
    for key, value in head.items():
        writer.writerow([key, value])
    writer.writerow(["rounding", computed.rounding])
    writer.writerow([])
    writer.writerow(COLUMNS)
    writer.writerows(line_row(line) for line in computed.lines)
    writer.writerow(["total", *[""] * (len(COLUMNS) - 3), amount(computed.total), ""])
    return out.getvalue()


def digest(text: str) -> str:
    """The SHA-256 (hex) of the CSV's UTF-8 bytes: what the filed return and the feed carry."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
