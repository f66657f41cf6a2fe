"""Wide-area progressives, the pure part (no Django): what a venue's batch of contributions adds up to,
whether a venue may still offer the central's level, how a hit is decided against the level it found,
and what two sets of meters differ by. Money is Decimal through halls.money; nothing here rounds.

A wide-area pool is owned by a network's central; each member venue keeps a mirror (the same levels and
rates) its machines and tables contribute to, and forwards what they contributed to the central in
batches, each the exact sum of its rows (`add_up`): the central's meter is the seed plus every venue's
sums, to the sixth decimal, so the venues' meters and the central's reconcile exactly (`differences`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum

from halls import money
from halls.money import ZERO

FIELDS = ("bet", "to_meter", "to_reserve", "house")


@dataclass(frozen=True)
class LevelSums:
    """What contributions to one level add up to: how many rows, and each part's exact sum."""

    count: int = 0
    bet: Decimal = ZERO
    to_meter: Decimal = ZERO
    to_reserve: Decimal = ZERO
    house: Decimal = ZERO

    def __add__(self, other: LevelSums) -> LevelSums:
        return LevelSums(
            self.count + other.count,
            money.EXACT.add(self.bet, other.bet),
            money.EXACT.add(self.to_meter, other.to_meter),
            money.EXACT.add(self.to_reserve, other.to_reserve),
            money.EXACT.add(self.house, other.house),
        )

    def as_payload(self) -> dict[str, str | int]:
        return {
            "count": self.count,
            "bet": money.text(self.bet),
            "to_meter": money.text(self.to_meter),
            "to_reserve": money.text(self.to_reserve),
            "house": money.text(self.house),
        }

    @classmethod
    def from_payload(cls, data: object) -> LevelSums:
        """A level's sums as sent over the link; a MoneyError (ValueError) names what is wrong."""
        if not isinstance(data, Mapping):
            raise money.MoneyError("sums", "a level's sums are an object")
        count = data.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise money.MoneyError("count", "count is a whole number of rows, at least 0")
        parts = [
            money.parse(name, data.get(name), places=money.METER_PLACES, maximum=None) for name in FIELDS
        ]
        if any(part < 0 for part in parts):
            raise money.MoneyError("sums", "sums are never negative")
        bet, to_meter, to_reserve, house = parts
        if money.EXACT.add(money.EXACT.add(to_meter, to_reserve), house) != bet:
            raise money.MoneyError("sums", "to_meter + to_reserve + house must be the bet exactly")
        return cls(count, bet, to_meter, to_reserve, house)


Row = tuple[str, Decimal, Decimal, Decimal, Decimal]  # level name, bet, to_meter, to_reserve, house


def add_up(rows: Iterable[Row]) -> dict[str, LevelSums]:
    """Each level's sums over contribution rows (exact: a sum of Decimals with at most 6 places)."""
    sums: dict[str, LevelSums] = {}
    for level, bet, to_meter, to_reserve, house in rows:
        sums[level] = sums.get(level, LevelSums()) + LevelSums(1, bet, to_meter, to_reserve, house)
    return sums


def merge(a: Mapping[str, LevelSums], b: Mapping[str, LevelSums]) -> dict[str, LevelSums]:
    return {name: a.get(name, LevelSums()) + b.get(name, LevelSums()) for name in sorted({*a, *b})}


def sums_payload(sums: Mapping[str, LevelSums]) -> dict[str, dict[str, str | int]]:
    return {name: sums[name].as_payload() for name in sorted(sums)}


def sums_from_payload(data: object) -> dict[str, LevelSums]:
    if not isinstance(data, Mapping) or not all(isinstance(k, str) and k for k in data):
        raise money.MoneyError("levels", "levels are an object of level name to sums")
    return {name: LevelSums.from_payload(value) for name, value in data.items()}


@dataclass(frozen=True)
class Difference:
    level: str
    field: str
    venue: Decimal
    central: Decimal

    @property
    def delta(self) -> Decimal:
        return money.EXACT.subtract(self.venue, self.central)

    def as_payload(self) -> dict[str, str]:
        return {
            "level": self.level,
            "field": self.field,
            "venue": money.text(self.venue),
            "central": money.text(self.central),
            "delta": money.text(self.delta),
        }


def differences(venue: Mapping[str, LevelSums], central: Mapping[str, LevelSums]) -> list[Difference]:
    """Every (level, part) where the venue's meters and the central's differ; none when they agree."""
    out = []
    for name in sorted({*venue, *central}):
        mine, theirs = venue.get(name, LevelSums()), central.get(name, LevelSums())
        for field in ("count", *FIELDS):
            a, b = Decimal(getattr(mine, field)), Decimal(getattr(theirs, field))
            if a != b:
                out.append(Difference(name, field, a, b))
    return out


class Check(StrEnum):
    """Which of the central's records a reconciliation compared (each a kind of difference found)."""

    RECEIVED = "received"  # the venue's stated totals against the central's running record of its batches
    BATCHES = "batches"  # the venue's stated totals against the batches the central accepted from it
    LEDGER = "ledger"  # those accepted batches against the pool's ledger rows attributed to the venue


@dataclass(frozen=True)
class Finding:
    """A difference and the check that found it."""

    check: Check
    difference: Difference

    def as_payload(self) -> dict[str, str]:
        return {"check": self.check.value, **self.difference.as_payload()}


def money_only(sums: Mapping[str, LevelSums]) -> dict[str, LevelSums]:
    """The sums without their row counts (the ledger keeps one row per level and batch, not per play)."""
    return {name: LevelSums(0, s.bet, s.to_meter, s.to_reserve, s.house) for name, s in sums.items()}


def reconcile(
    *,
    stated: Mapping[str, LevelSums],
    received: Mapping[str, LevelSums],
    applied: Mapping[str, LevelSums],
    ledger: Mapping[str, LevelSums],
) -> list[Finding]:
    """A venue's reconciliation at the central, per level and part: the venue's `stated` totals against the
    central's running record of them (`received`) and against the sum of the batches it accepted from the
    venue (`applied`), and those batches against the pool's `ledger` rows attributed to the venue (money
    only: the ledger counts batches, not plays). None when every record agrees."""
    return [
        *(Finding(Check.RECEIVED, d) for d in differences(stated, received)),
        *(Finding(Check.BATCHES, d) for d in differences(stated, applied)),
        *(Finding(Check.LEDGER, d) for d in differences(money_only(applied), money_only(ledger))),
    ]


# --- the link-failure policy ---------------------------------------------------------------------------


class OfflineAction(StrEnum):
    """What a venue's members do with the wide-area level once the central has been silent too long."""

    UNAVAILABLE = "unavailable"  # the machines show the level unavailable and play on their local levels
    LOCK = "lock"  # the machines lock (the broadcast of their group stops: they lock themselves)


class Availability(StrEnum):
    AVAILABLE = "available"
    UNAVAILABLE = "unavailable"
    LOCKED = "locked"


def availability(
    heard_at: datetime | None, now: datetime, window_seconds: int, action: OfflineAction | str
) -> Availability:
    """Whether the venue may offer the central's level at `now`: it heard the central's levels within the
    window; past it, the pool's offline action says what its members do. Never heard: not offered."""
    if heard_at is not None and now - heard_at <= timedelta(seconds=window_seconds):
        return Availability.AVAILABLE
    return Availability.LOCKED if OfflineAction(action) == OfflineAction.LOCK else Availability.UNAVAILABLE


# --- deciding a hit ------------------------------------------------------------------------------------


class SecondHit(StrEnum):
    """A hit in the same instant as the level's last winner (before its venue could hear the reset)."""

    RESET = "reset"  # decided again against the reset level: paid what the level holds after the reset
    NOTHING = "nothing"  # the level was already won: no wide-area prize (the venue is told so)


class Outcome(StrEnum):
    WON = "won"  # paid the level's meter as it found it
    REDECIDED = "redecided"  # a simultaneous hit paid from the reset level
    LOST = "lost"  # a simultaneous hit that the pool's settings leave without a prize


def decide(
    *,
    hit_at: datetime,
    last_won_at: datetime | None,
    simultaneous_seconds: float,
    second_hit: SecondHit | str,
) -> Outcome:
    """A hit reaches the central (which serialises hits on the level): it WON unless the level was won by
    another hit within `simultaneous_seconds` of it, before or after (the same instant across venues,
    whichever reached the central first won); then the pool's
    setting re-decides it against the reset level, or leaves it without a prize."""
    if last_won_at is None or abs(hit_at - last_won_at) > timedelta(seconds=simultaneous_seconds):
        return Outcome.WON
    return Outcome.REDECIDED if SecondHit(second_hit) == SecondHit.RESET else Outcome.LOST
