"""Accumulated-pool prize programs BA-1 … BA-20 (bolsa acumulada): data and small pure functions.

Spec §2.4 (seed `000_30ca879e32376d5e.txt art. 147.3.c`). A venue activates a *program* (a `Program`: a
type plus validated parameters, versioned and effective-dated, BA-G3) and keeps its *step state*
(`ProgramState`). For each game:

1. `in_play(program, state, ctx)` says whether the program is in play and with which max ball, amount or
   colour, to announce before the first ball (BA-G4, TB-41);
2. at the verified Bingo, `evaluate(in_play, bingo_ordinal, bingo_ball_colour)` says whether it is won
   (each program independently, OP-35);
3. `payout(program, pool_amount, winners)` shares the prize equally to the cent (BA-G5, OP-10);
4. `next_state(program, state, won, ctx)` is called after EVERY game of the room, in play or not: it
   records the game (scheduled hours, pool reached) and escalates or resets the program.

Interpretations of the spec's open points (§9) are parameters with a documented default (see
`tables.INTERPRETATION_DEFAULTS`); each `Program` records where every value came from (`provenance`).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Context, Decimal, Inexact, InvalidOperation
from enum import StrEnum
from types import MappingProxyType
from typing import Generic, TypeVar

from bingo.balls import KNOWN_COLOURS
from bingo.prizes import PrizeAmount, prize_from_sales, split_equally
from bingo.traditional.programs.problems import MESSAGES as MESSAGES  # one catalogue of problems
from bingo.traditional.programs.problems import THE_COLOR_PRIMA, Problem, of_error, problem
from bingo.traditional.programs.regulation import (
    REGULATIONS,
    SEED_ITEMS,
    Ba6Profile,
    CardsSoldScale,
    ExtractionTable,
    Extrapolation,
    HallCategory,
    ProgramType,
    Regulation,
    ScaleBand,
    ScheduledVariant,
    Source,
    Step,
    regulation_in_force,
)
from bingo.traditional.programs.schedule import (
    DEFAULT_DAY_CUTOFF,
    MissedSlot,
    Schedule,
    Slot,
    operating_day,
    overlapping,
    parse_hour,
    scheduled_slot,
    to_utc,
    zone,
)
from halls import money
from halls.money import HUNDRED

T = TypeVar("T", bound=Hashable)
StrEnumT = TypeVar("StrEnumT", bound=StrEnum)

MAX_BALL = 90  # TB-01: at most 90 balls can be drawn
MIN_BINGO_BALL = 15  # TB-02: a Bingo covers the 15 numbers of a card, so it needs 15 balls at least
_EXACT = Context(prec=60, traps=[Inexact, InvalidOperation])


class ProgramError(ValueError):
    """A program cannot be configured, announced or paid as asked; `problems` says why."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(p if isinstance(p, Problem) else problem("as_given", text=p) for p in problems)
        super().__init__("; ".join(self.problems))


# --- program types as data ---------------------------------------------------------------------------------


class Family(StrEnum):
    PRIMA = "prima"  # BA-1
    BINGO_EXTRA = "bingo_extra"  # BA-2
    ACUMULADO = "acumulado"  # BA-3
    SCHEDULED = "scheduled"  # BA-4 … BA-13
    NEXT_GAME_PRIMA = "next_game_prima"  # BA-14 … BA-18 (OP-11: one generic type)
    SUPER_PRIMA = "super_prima"  # BA-19
    COLOUR_PRIMA = "colour_prima"  # BA-20


class Trigger(StrEnum):
    POOL_REACHED = "pool_reached"  # the game after the one in which the pool reached its amount
    EVERY_GAME = "every_game"
    SCHEDULED = "scheduled"  # the first game after each scheduled hour, once the amount is reached
    MANAGER_PICK = "manager_pick"  # the game the hall manager picks


class Condition(StrEnum):
    NONE = "bingo"  # the ordinary Bingo alone
    MAX_BALL = "max_ball"  # the Bingo at or before the max ball
    COLOUR = "colour"  # the Bingo ball of the announced colour


class Funding(StrEnum):
    SALES_PERCENT = "sales_percent"  # a percentage of each game's cards sold (BA-G1)
    BOLSA_ACUMULADA = "bolsa_acumulada"  # paid from the hall's Bolsa Acumulada (BA-G2, OP-36)


class Pays(StrEnum):
    AMOUNT = "amount"  # the program's (or announced) amount; what is left stays in the pool
    POOL = "pool"  # the whole pool
    POOL_LESS_CARRY = "pool_less_carry"  # BA-3: the pool minus the carry that seeds the next prize


class FixedStep(StrEnum):
    """How a Fijo table (PER_DAY) picks its row."""

    OPERATING_DAY = "operating_day"  # default: the row of day n + d, d = operating days in play before
    SCHEDULED_GAME = "scheduled_game"  # §2.4.4 formula: row k, k = scheduled games in play so far


@dataclass(frozen=True)
class ProgramTypeInfo:
    program_type: ProgramType
    family: Family
    trigger: Trigger
    condition: Condition
    funding: Funding
    if_not_won: str

    @property
    def name(self) -> str:
        return SEED_ITEMS[self.program_type].name

    @property
    def citation(self) -> str:
        return SEED_ITEMS[self.program_type].citation

    @property
    def label(self) -> str:
        return f"{self.program_type.value} {self.name}"


_SCHEDULED_TYPES = tuple(ProgramType(f"BA-{n}") for n in range(4, 14))
_NEXT_GAME_TYPES = tuple(ProgramType(f"BA-{n}") for n in range(14, 19))


def _info(
    pt: ProgramType, family: Family, trigger: Trigger, condition: Condition, funding: Funding, if_not_won: str
) -> tuple[ProgramType, ProgramTypeInfo]:
    return pt, ProgramTypeInfo(pt, family, trigger, condition, funding, if_not_won)


_SALES, _BOLSA, _BALL = Funding.SALES_PERCENT, Funding.BOLSA_ACUMULADA, Condition.MAX_BALL
_POOL, _SCHED = Trigger.POOL_REACHED, Trigger.SCHEDULED

# Spec §2.4.8 summary matrix.
PROGRAM_TYPES: Mapping[ProgramType, ProgramTypeInfo] = MappingProxyType(
    dict(
        [
            _info(ProgramType.BA_1, Family.PRIMA, _POOL, _BALL, _SALES, "stays in play (OP-03)"),
            _info(
                ProgramType.BA_2,
                Family.BINGO_EXTRA,
                Trigger.POOL_REACHED,
                _BALL,
                _SALES,
                "+1 extraction per game until awarded or the last game of the session (then OP-04)",
            ),
            _info(ProgramType.BA_3, Family.ACUMULADO, Trigger.EVERY_GAME, _BALL, _SALES, "the pool grows"),
            *(
                _info(pt, Family.SCHEDULED, _SCHED, _BALL, _SALES, "next row at the next scheduled game")
                for pt in _SCHEDULED_TYPES
            ),
            *(
                _info(pt, Family.NEXT_GAME_PRIMA, _POOL, Condition.NONE, _SALES, "stays in play")
                for pt in _NEXT_GAME_TYPES
            ),
            _info(
                ProgramType.BA_19,
                Family.SUPER_PRIMA,
                Trigger.MANAGER_PICK,
                _BALL,
                _BOLSA,
                "+1 extraction per game until awarded (no session limit)",
            ),
            _info(
                ProgramType.BA_20,
                Family.COLOUR_PRIMA,
                Trigger.MANAGER_PICK,
                Condition.COLOUR,
                _BOLSA,
                "stays in play, same colour and amount, until awarded (OP-12)",
            ),
        ]
    )
)


# --- a configured program ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Program:
    """A program a venue activated: its type, validated parameters and where each came from.

    Build it with `make_program`; a parameter change is a new version with a later `effective_from`.
    """

    program_type: ProgramType
    program_id: str
    version: int
    effective_from: datetime
    authorisation_ref: str | None
    funding_percent: Decimal | None
    # BA-1 Prima level; BA-2/BA-14…18 regulatory amount; BA-4…13 amount to reach; BA-19/20 standing amount.
    amount: Decimal | None
    pays: Pays
    ball_limit: int | None = None  # BA-1 (48), BA-14…18 (none by default)
    extraction_order: int | None = None  # BA-2 order fixed by the hall manager; BA-19 standing order
    extraction_floor: int | None = None  # BA-2 (50)
    scale: CardsSoldScale | None = None  # BA-3
    carry_percent: Decimal = Decimal(0)  # BA-3 (20)
    hours: tuple[time, ...] = ()  # BA-4…13
    table: ExtractionTable | None = None  # BA-4…13
    extrapolation: Extrapolation = Extrapolation.FROM_LAST_ROW
    fixed_step: FixedStep = FixedStep.OPERATING_DAY
    missed_slot: MissedSlot = MissedSlot.LAPSE
    max_amount: Decimal | None = None  # BA-20 (500 €)
    colour: str | None = None  # BA-20 standing colour
    colours: frozenset[str] = KNOWN_COLOURS  # BA-20 colours of the hall's ball sets
    provenance: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def info(self) -> ProgramTypeInfo:
        return PROGRAM_TYPES[self.program_type]

    @property
    def family(self) -> Family:
        return self.info.family

    @property
    def label(self) -> str:
        return f"{self.info.label} '{self.program_id}'"


@dataclass(frozen=True)
class ManagerPick:
    """What the hall manager announces for a game (BA-19: amount + order; BA-20: amount + colour; BA-2:
    the order for the trigger game). Unset values fall back to the program's standing parameters."""

    program_id: str
    amount: Decimal | None = None
    max_ball: int | None = None
    colour: str | None = None


@dataclass(frozen=True)
class ProgramState:
    """A program's step state between games (start with `initial_state`)."""

    reached: bool = False  # the pool reached its amount in an earlier game (BA-1, BA-2, BA-14…18)
    steps: int = 0  # games in play without award since the trigger / pick (escalation)
    day_steps: int = 0  # Fijo: operating days in play before `last_play_day`
    last_play_day: date | None = None  # operating day of the last scheduled game in play
    last_game_start: datetime | None = None  # start (UTC) of the previous game of the room
    served_day: date | None = None  # MissedSlot.CATCH_UP: hours of this operating day already played
    served_hours: frozenset[time] = frozenset()
    pick: ManagerPick | None = None  # the resolved pick in force (BA-2 escalation, BA-19, BA-20)


@dataclass(frozen=True)
class GameContext:
    """What the program needs to know about one game, at announcement (after the sale closed)."""

    start: datetime  # aware
    time_zone: str  # the venue's IANA zone, e.g. "Africa/Ceuta"
    hall_category: HallCategory
    cards_sold: int
    # The program's pool including this game's deduction (booked at SALE_CLOSED, §2.7); for BA-19/20 the
    # hall's Bolsa Acumulada balance (OP-36).
    pool_amount: Decimal
    last_game_of_session: bool = False
    manager_picks: tuple[ManagerPick, ...] = ()
    day_cutoff: time = DEFAULT_DAY_CUTOFF  # OP-07

    def __post_init__(self) -> None:
        to_utc(self.start)
        zone(self.time_zone)
        if isinstance(self.cards_sold, bool) or not isinstance(self.cards_sold, int) or self.cards_sold < 0:
            raise ValueError(problem("bad_cards_sold", value=self.cards_sold))
        if (
            not isinstance(self.pool_amount, Decimal)
            or not self.pool_amount.is_finite()
            or self.pool_amount < 0
        ):
            raise ValueError(problem("bad_pool_amount", value=self.pool_amount))
        try:  # accepts the hall's stored value ("1", "2", "3"), e.g. halls.models.HallCategory
            category = HallCategory(self.hall_category)
        except ValueError:
            raise ValueError(problem("bad_hall_category", value=self.hall_category)) from None
        object.__setattr__(self, "hall_category", category)

    def pick_for(self, program_id: str) -> ManagerPick | None:
        picks = [p for p in self.manager_picks if p.program_id == program_id]
        if len(picks) > 1:
            raise ProgramError([problem("two_picks", program=program_id)])
        return picks[0] if picks else None


@dataclass(frozen=True)
class InPlay:
    """A program in play in a game: what to announce (BA-G4) and what `evaluate` checks."""

    program_id: str
    program_type: ProgramType
    max_ball: int | None  # the Bingo must come at this extraction order or earlier; None = any
    colour: str | None  # BA-20: the announced "Color Prima"
    amount: Decimal  # the prize announced (before sharing)
    row: int | None = None  # BA-4…13: the table's "Partida" (1-based)
    slot: time | None = None  # BA-4…13: the scheduled hour this game serves
    operating_day: date | None = None
    step: int = 0  # escalation step (games in play without award before this one)


@dataclass(frozen=True)
class Payout(Generic[T]):
    """Equal shares to the cent; shares + remainder + carry == pool exactly."""

    shares: dict[T, Decimal]
    share: Decimal
    remainder: Decimal  # cents (and sub-cent residue) that could not be split (OP-10)
    carry: Decimal  # what the prize leaves in the pool: BA-3's 20 % seed, a Prima's excess over its level
    prize: Decimal

    @property
    def next_pool(self) -> Decimal:
        """The pool after the award: carry plus the unsplittable remainder (OP-10: it stays in the pool)."""
        return self.carry + self.remainder


# --- configuration -----------------------------------------------------------------------------------------

_COMMON = frozenset({"authorisation_ref"})
_ALLOWED: Mapping[Family, frozenset[str]] = MappingProxyType(
    {
        Family.PRIMA: _COMMON | {"funding_percent", "amount", "prima_levels", "ball_limit", "pays"},
        Family.BINGO_EXTRA: _COMMON
        | {"funding_percent", "amount", "extraction_order", "extraction_floor", "pays"},
        Family.ACUMULADO: _COMMON | {"funding_percent", "scale", "carry_percent"},
        Family.SCHEDULED: _COMMON
        | {
            "funding_percent",
            "amount",
            "hours",
            "ba6_profile",
            "extrapolation",
            "fixed_step",
            "missed_slot",
            "pays",
        },
        Family.NEXT_GAME_PRIMA: _COMMON | {"funding_percent", "amount", "ball_limit", "pays"},
        Family.SUPER_PRIMA: _COMMON | {"amount", "extraction_order"},
        Family.COLOUR_PRIMA: _COMMON | {"amount", "colour", "colours"},
    }
)


class _Reader:
    """Reads raw parameters (from JSON or forms), collecting every problem instead of stopping at one."""

    def __init__(self, label: str, citation: str, params: Mapping[str, object]) -> None:
        self.label = label
        self.citation = citation
        self.params = params
        self.problems: list[Problem] = []
        self.provenance: dict[str, str] = {}

    def fail(self, code: str, citation: str | None = None, **params: object) -> None:
        self.problems.append(Problem(code, params, label=self.label, citation=citation or self.citation))

    def passed(self, found: str) -> None:
        """A problem another pure module found (a schedule's hours, a scale's bands), as this program's."""
        if isinstance(found, Problem):
            self.problems.append(Problem(found.code, found.params, label=self.label, citation=self.citation))
        else:
            self.fail("as_given", text=found)

    def present(self, name: str) -> bool:
        return name in self.params and self.params[name] is not None

    def configured(self, name: str) -> None:
        self.provenance[name] = "configured"

    def defaulted(self, name: str, source: Source) -> None:
        self.provenance[name] = source.value

    def decimal(self, name: str) -> Decimal | None:
        raw = self.params.get(name)
        if raw is None:
            return None
        if isinstance(raw, bool | float) or not isinstance(raw, Decimal | int | str):
            self.fail("bad_decimal_type", name=name, kind=type(raw).__name__)
            return None
        try:
            value = Decimal(raw.strip() if isinstance(raw, str) else raw)
        except InvalidOperation:
            self.fail("not_a_number", name=name, value=raw)
            return None
        if not value.is_finite():
            self.fail("not_finite", name=name, value=raw)
            return None
        self.configured(name)
        return value

    def integer(self, name: str) -> int | None:
        raw = self.params.get(name)
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, int):
            self.fail("not_whole", name=name, value=raw)
            return None
        self.configured(name)
        return raw

    def choice(self, name: str, enum: type[StrEnumT], default: StrEnumT, source: Source) -> StrEnumT:
        raw = self.params.get(name)
        if raw is None:
            self.defaulted(name, source)
            return default
        try:
            value = enum(str(raw))
        except ValueError:
            self.fail("bad_choice", name=name, value=raw, choices=", ".join(m.value for m in enum))
            return default
        self.configured(name)
        return value


def _ball(r: _Reader, name: str, value: int | None) -> None:
    if value is not None and not MIN_BINGO_BALL <= value <= MAX_BALL:
        r.fail("bad_ball", name=name, value=value, low=MIN_BINGO_BALL, high=MAX_BALL)


def _percent(r: _Reader, name: str, required: bool) -> Decimal | None:
    value = r.decimal(name)
    if value is None:
        if required:
            r.fail("percent_required", name=name)
        return None
    if not Decimal(0) < value < HUNDRED:
        r.fail("percent_range", name=name, value=value)
    return value


def _positive_amount(r: _Reader, name: str, value: Decimal | None) -> None:
    if value is not None and value <= 0:
        r.fail("not_positive", name=name, value=value)


def _colour(r: _Reader, value: object, colours: frozenset[str], what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        r.fail("not_a_colour", what=what, value=value)
        return None
    colour = value.strip().lower()
    if colour not in colours:
        r.fail("unknown_colour", value=value, what=what, known=", ".join(sorted(colours)))
        return None
    return colour


@dataclass
class _Fields:
    """The parameters being resolved for a `Program` (mutable while reading)."""

    authorisation_ref: str | None = None
    funding_percent: Decimal | None = None
    amount: Decimal | None = None
    pays: Pays = Pays.AMOUNT
    ball_limit: int | None = None
    extraction_order: int | None = None
    extraction_floor: int | None = None
    scale: CardsSoldScale | None = None
    carry_percent: Decimal = Decimal(0)
    hours: tuple[time, ...] = ()
    table: ExtractionTable | None = None
    extrapolation: Extrapolation = Extrapolation.FROM_LAST_ROW
    fixed_step: FixedStep = FixedStep.OPERATING_DAY
    missed_slot: MissedSlot = MissedSlot.LAPSE
    max_amount: Decimal | None = None
    colour: str | None = None
    colours: frozenset[str] = KNOWN_COLOURS


def _read_prima(r: _Reader, f: _Fields, regulation: Regulation) -> None:
    """BA-1 (art. 147.3.c.1º): an authorised level of 30/50/100/200/300 €, Bingo within 48 balls."""
    levels = regulation.prima_levels.value
    if r.present("prima_levels"):
        raw = r.params["prima_levels"]
        if not isinstance(raw, list | tuple) or not raw:
            r.fail("prima_levels_list")
        else:
            sub = _Reader(r.label, r.citation, {f"prima_levels[{i}]": v for i, v in enumerate(raw)})
            values = [sub.decimal(f"prima_levels[{i}]") for i in range(len(raw))]
            r.problems.extend(sub.problems)
            levels = tuple(v for v in values if v is not None)
        r.configured("prima_levels")
    else:
        r.defaulted("prima_levels", regulation.prima_levels.source)
    if f.amount is None:
        r.fail("prima_amount_required", levels=tuple(levels))
    elif f.amount not in levels:
        r.fail("not_a_prima_level", amount=f.amount, levels=tuple(levels))
    f.ball_limit = r.integer("ball_limit")
    if f.ball_limit is None:
        f.ball_limit = regulation.prima_ball_limit.value
        r.defaulted("ball_limit", regulation.prima_ball_limit.source)
    _ball(r, "ball_limit", f.ball_limit)
    f.pays = r.choice("pays", Pays, Pays.AMOUNT, Source.REGULATION)


def _read_bingo_extra(r: _Reader, f: _Fields, regulation: Regulation) -> None:
    """BA-2 (art. 147.3.c.2º): order fixed by the hall manager, never below 50 (OP-34: only here)."""
    if f.amount is None:
        r.fail("extra_amount_required")
    f.extraction_floor = r.integer("extraction_floor")
    if f.extraction_floor is None:
        f.extraction_floor = regulation.bingo_extra_floor.value
        r.defaulted("extraction_floor", regulation.bingo_extra_floor.source)
    _ball(r, "extraction_floor", f.extraction_floor)
    f.extraction_order = r.integer("extraction_order")
    if f.extraction_order is None:
        r.fail("extra_order_required")
    else:
        _ball(r, "extraction_order", f.extraction_order)
        if f.extraction_order < f.extraction_floor:
            r.fail("below_floor", order=f.extraction_order, floor=f.extraction_floor)
    f.pays = r.choice("pays", Pays, Pays.AMOUNT, Source.INTERPRETATION)


def _read_acumulado(r: _Reader, f: _Fields, regulation: Regulation) -> None:
    """BA-3 (art. 147.3.c.3º): every game, cards-sold scale, 20 % of the pool seeds the next prize."""
    scale = regulation.acumulado_scale
    if r.present("scale"):
        raw = r.params["scale"]
        bands: list[ScaleBand] = []
        if not isinstance(raw, list | tuple):
            r.fail("scale_list")
        else:
            for band in raw:
                if (
                    isinstance(band, list | tuple)
                    and len(band) == 3
                    and _is_int(band[0])
                    and (band[1] is None or _is_int(band[1]))
                    and _is_int(band[2])
                ):
                    bands.append(ScaleBand(band[0], band[1], band[2]))
                else:
                    r.fail("bad_band", band=band)
        scale = CardsSoldScale(tuple(bands), citation=f"configured (regulation: {scale.citation})")
        for found in scale.problems():
            r.passed(found)
        r.configured("scale")
    else:
        r.defaulted("scale", scale.source)
    carry = r.decimal("carry_percent")
    if carry is None:
        carry = regulation.acumulado_carry_percent.value
        r.defaulted("carry_percent", regulation.acumulado_carry_percent.source)
    if not Decimal(0) <= carry < HUNDRED:
        r.fail("carry_range", value=carry)
    if f.amount is not None:
        r.fail("acumulado_amount")
    f.scale, f.carry_percent, f.pays = scale, carry, Pays.POOL_LESS_CARRY


def _read_scheduled(r: _Reader, f: _Fields, regulation: Regulation, pt: ProgramType) -> None:
    """BA-4 … BA-13 (art. 147.3.c.3º (second occurrence)–13.º): amount, hours and table of the variant."""
    variant = regulation.scheduled[pt]
    hours, table = variant.hours, variant.table
    if pt is ProgramType.BA_6:
        profile = r.choice("ba6_profile", Ba6Profile, Ba6Profile.TEXT, Source.INTERPRETATION)
        if profile is Ba6Profile.PRINTED and variant.printed_hours and variant.printed_table:
            hours, table = variant.printed_hours, variant.printed_table
    elif r.present("ba6_profile"):
        r.fail("ba6_profile_only")
    if f.amount is None:
        f.amount = variant.trigger_amount
        r.defaulted("amount", Source.REGULATION)
    if r.present("hours"):
        raw = r.params["hours"]
        parsed: list[time] = []
        if not isinstance(raw, list | tuple):
            r.fail("hours_list")
        else:
            for h in raw:
                try:
                    parsed.append(parse_hour(h))
                except ValueError as exc:
                    r.passed(of_error(exc))
            if len(raw) != len(hours):
                r.fail("hours_count", wanted=len(hours), got=len(raw))
        for found in overlapping([Schedule(r.label, tuple(parsed))]):
            r.passed(found)
        hours = tuple(parsed)
        r.configured("hours")
    else:
        r.defaulted("hours", table.source)
    f.fixed_step = r.choice("fixed_step", FixedStep, FixedStep.OPERATING_DAY, Source.INTERPRETATION)
    if table.step is not Step.PER_DAY and r.present("fixed_step"):
        r.fail("fixed_step_only")
    f.hours, f.table = hours, table
    f.extrapolation = r.choice(
        "extrapolation", Extrapolation, Extrapolation.FROM_LAST_ROW, Source.INTERPRETATION
    )
    f.missed_slot = r.choice("missed_slot", MissedSlot, MissedSlot.LAPSE, Source.INTERPRETATION)
    f.pays = r.choice("pays", Pays, Pays.POOL, Source.INTERPRETATION)


def _read_next_game_prima(r: _Reader, f: _Fields) -> None:
    """BA-14 … BA-18 (art. 147.3.c.14.º–18.º): amount from configuration, no ball limit unless set (OP-11)."""
    if f.amount is None:
        r.fail("next_game_amount_required")
    f.ball_limit = r.integer("ball_limit")
    if f.ball_limit is None:
        r.defaulted("ball_limit", Source.INTERPRETATION)
    _ball(r, "ball_limit", f.ball_limit)
    f.pays = r.choice("pays", Pays, Pays.AMOUNT, Source.INTERPRETATION)


def _read_colour_prima(r: _Reader, f: _Fields, regulation: Regulation) -> None:
    """BA-20 (art. 147.3.c.20º): at most 500 €, a colour of the hall's balls."""
    f.max_amount = regulation.colour_prima_max.value
    r.defaulted("max_amount", regulation.colour_prima_max.source)
    if f.amount is not None and f.amount > f.max_amount:
        r.fail("over_maximum", amount=f.amount, maximum=f.max_amount)
    if r.present("colours"):
        raw = r.params["colours"]
        if not isinstance(raw, list | tuple | set | frozenset) or not raw:
            r.fail("colours_list")
        else:
            names = [_colour(r, c, KNOWN_COLOURS, "colours") for c in raw]
            f.colours = frozenset(c for c in names if c is not None)
        r.configured("colours")
    f.colour = _colour(r, r.params.get("colour"), f.colours, THE_COLOR_PRIMA)
    f.pays = Pays.AMOUNT


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read(
    program_type: ProgramType | str,
    params: Mapping[str, object],
    regulation: Regulation,
    *,
    program_id: str = "",
    effective_from: datetime | None = None,
    version: int = 1,
) -> tuple[list[Problem], Program | None]:
    """Validate and resolve raw parameters; returns (problems, the program when there are none)."""
    try:
        pt = ProgramType(program_type)
    except ValueError:
        return [problem("unknown_type", value=program_type)], None
    info = PROGRAM_TYPES[pt]
    family = info.family
    r = _Reader(info.label, info.citation, params)
    f = _Fields()

    unknown = sorted(set(params) - _ALLOWED[family])
    if unknown:
        r.fail("unknown_params", names=", ".join(unknown), allowed=", ".join(sorted(_ALLOWED[family])))

    # Authorisation reference: required for every pool funded from sales (BA-G1, spec §0.4); the Prima amount
    # must itself be authorised (art. 147.3.c.1º). Optional for the hall manager's Super/Colour Prima.
    ref = params.get("authorisation_ref")
    if ref is not None and (not isinstance(ref, str) or not ref.strip()):
        r.fail("bad_authorisation", value=ref)
    elif isinstance(ref, str):
        f.authorisation_ref = ref.strip()
    elif info.funding is Funding.SALES_PERCENT:
        r.fail("authorisation_required")

    if info.funding is Funding.SALES_PERCENT:
        f.funding_percent = _percent(r, "funding_percent", required=True)
    elif r.present("funding_percent"):
        r.fail("no_funding_percent")
    f.amount = r.decimal("amount")
    _positive_amount(r, "amount", f.amount)

    if family is Family.PRIMA:
        _read_prima(r, f, regulation)
    elif family is Family.BINGO_EXTRA:
        _read_bingo_extra(r, f, regulation)
    elif family is Family.ACUMULADO:
        _read_acumulado(r, f, regulation)
    elif family is Family.SCHEDULED:
        _read_scheduled(r, f, regulation, pt)
    elif family is Family.NEXT_GAME_PRIMA:
        _read_next_game_prima(r, f)
    elif family is Family.SUPER_PRIMA:
        f.extraction_order = r.integer("extraction_order")
        _ball(r, "extraction_order", f.extraction_order)
    else:
        _read_colour_prima(r, f, regulation)
    if f.pays is Pays.POOL_LESS_CARRY and family is not Family.ACUMULADO:
        r.fail("pool_less_carry_only")

    if not program_id.strip():
        r.problems.append(problem("empty_program_id"))
    if version < 1:
        r.problems.append(problem("bad_version", version=version))
    if r.problems or effective_from is None:
        return r.problems, None
    program = Program(
        program_type=pt,
        program_id=program_id,
        version=version,
        effective_from=effective_from,
        provenance=MappingProxyType(r.provenance),
        **{fl.name: getattr(f, fl.name) for fl in dataclasses.fields(f)},
    )
    return [], program


def allowed_params(program_type: ProgramType | str) -> frozenset[str]:
    """The parameters a program type takes (what `make_program` reads), for forms and documentation."""
    return _ALLOWED[PROGRAM_TYPES[ProgramType(program_type)].family]


def validate_config(
    program_type: ProgramType | str, params: Mapping[str, object], *, regulation: Regulation | None = None
) -> list[Problem]:
    """Every problem with a program's parameters, each citing its rule (empty list = valid)."""
    problems, _ = _read(program_type, params, regulation or latest_regulation(), program_id="check")
    return problems


def latest_regulation() -> Regulation:
    return max(REGULATIONS, key=lambda reg: reg.effective_from)


def make_program(
    program_type: ProgramType | str,
    params: Mapping[str, object],
    *,
    program_id: str,
    effective_from: datetime,
    version: int = 1,
    regulation: Regulation | None = None,
) -> Program:
    """Validate and build a program version; raises `ProgramError` listing every problem.

    The regulation defaults come from the version in force on the (local) date of `effective_from` (BA-G3).
    """
    start = to_utc(effective_from, "effective_from")
    reg = regulation or regulation_in_force(effective_from.date())
    problems, program = _read(
        program_type, params, reg, program_id=program_id, effective_from=start, version=version
    )
    if program is None:
        raise ProgramError(problems)
    return program


def program_in_force(versions: Sequence[Program], at: datetime) -> Program | None:
    """The version of a program whose `effective_from` is the latest on or before `at` (BA-G3)."""
    moment = to_utc(at)
    ids = {v.program_id for v in versions}
    if len(ids) > 1:
        raise ValueError(f"versions of several programs given: {sorted(ids)}")
    in_force = [v for v in versions if v.effective_from <= moment]
    return max(in_force, key=lambda v: (v.effective_from, v.version)) if in_force else None


def schedule_problems(programs: Sequence[Program], *, exclusive_slots: bool = False) -> list[Problem]:
    """Overlaps between the programs of one room: versions and scheduled hours (`schedule.overlapping`)."""
    problems: list[Problem] = []
    by_id: dict[str, list[Program]] = {}
    for p in programs:
        by_id.setdefault(p.program_id, []).append(p)
    schedules: list[Schedule] = []
    for pid, versions in by_id.items():
        versions.sort(key=lambda v: (v.effective_from, v.version))
        for a, b in itertools.pairwise(versions):
            if a.effective_from == b.effective_from:
                problems.append(problem("same_instant", program=pid, first=a.version, second=b.version))
            if a.program_type is not b.program_type:
                problems.append(problem("type_changed", program=pid, version=b.version))
        for i, v in enumerate(versions):
            if v.family is not Family.SCHEDULED:
                continue
            until = versions[i + 1].effective_from if i + 1 < len(versions) else None
            name = f"{v.label} v{v.version}"
            schedules.append(Schedule(name, v.hours, v.program_type.value, "", v.effective_from, until))
    clashes = overlapping(schedules, exclusive_slots=exclusive_slots)
    return problems + clashes


def contribution(program: Program, sales_total: Decimal) -> PrizeAmount:
    """This game's deduction for the pool: funding_percent of the total cards sold (BA-G1), with the sub-cent
    residue kept (pool meters keep fractions)."""
    if program.funding_percent is None:
        raise ProgramError([problem("not_from_sales", program=program.label)])
    return prize_from_sales(sales_total, program.funding_percent)


# --- the game cycle ----------------------------------------------------------------------------------------


# Put in play by the pool reaching its amount in an earlier game.
_POOL_TRIGGERED = frozenset({Family.PRIMA, Family.BINGO_EXTRA, Family.NEXT_GAME_PRIMA})


def initial_state(
    program: Program, *, pool_amount: Decimal = Decimal(0), previous_start: datetime | None = None
) -> ProgramState:
    """State of a freshly activated program: `pool_amount` already in its pool (a pool that already reached
    its amount puts the program in play in the next game), `previous_start` the room's last game."""
    reached = program.amount is not None and pool_amount >= program.amount
    last = to_utc(previous_start, "previous game start") if previous_start is not None else None
    return ProgramState(reached=reached and program.family in _POOL_TRIGGERED, last_game_start=last)


def _cap(ball: int) -> int:
    return min(ball, MAX_BALL)


def _resolve_pick(program: Program, pick: ManagerPick) -> ManagerPick:
    return ManagerPick(
        program_id=program.program_id,
        amount=pick.amount if pick.amount is not None else program.amount,
        max_ball=pick.max_ball if pick.max_ball is not None else program.extraction_order,
        colour=pick.colour.strip().lower() if pick.colour is not None else program.colour,
    )


def validate_pick(program: Program, state: ProgramState, pick: ManagerPick) -> list[Problem]:
    """Problems with what the hall manager wants to announce for this program (empty = fine)."""
    r = _Reader(program.label, program.info.citation, {})
    if pick.program_id != program.program_id:
        r.fail("pick_for_other", program=pick.program_id)
    family = program.family
    if family not in (Family.BINGO_EXTRA, Family.SUPER_PRIMA, Family.COLOUR_PRIMA):
        r.fail("not_picked")
        return r.problems
    resolved = _resolve_pick(program, pick)
    if family is Family.BINGO_EXTRA:
        if state.steps or state.pick is not None:
            r.fail("extra_order_fixed", step=state.steps)
        if pick.amount is not None or pick.colour is not None:
            r.fail("extra_order_only")
        floor = program.extraction_floor or 0
        if resolved.max_ball is not None and resolved.max_ball < floor:
            r.fail("below_floor", order=resolved.max_ball, floor=floor)
        _ball(r, "extraction order", resolved.max_ball)
        return r.problems
    if state.pick is not None:
        r.fail("already_in_play")
    if resolved.amount is None:
        r.fail("amount_to_announce")
    else:
        _positive_amount(r, "amount", resolved.amount)
        if program.max_amount is not None and resolved.amount > program.max_amount:
            r.fail("over_maximum", amount=resolved.amount, maximum=program.max_amount)
    if family is Family.SUPER_PRIMA:
        if pick.colour is not None:
            r.fail("super_no_colour")
        if resolved.max_ball is None:
            r.fail("order_to_announce")
        _ball(r, "extraction order", resolved.max_ball)
    else:
        if pick.max_ball is not None:
            r.fail("colour_no_order")
        if resolved.colour is None:
            r.fail("colour_to_announce")
        else:
            _colour(r, resolved.colour, program.colours, THE_COLOR_PRIMA)
    return r.problems


def _active_pick(program: Program, state: ProgramState, ctx: GameContext) -> ManagerPick | None:
    """The pick in force for this game: this game's (validated) or the one rolling over."""
    new = ctx.pick_for(program.program_id)
    if new is None:
        return state.pick
    problems = validate_pick(program, state, new)
    if problems:
        raise ProgramError(problems)
    return _resolve_pick(program, new)


def _scheduled_slot(program: Program, state: ProgramState, ctx: GameContext) -> Slot | None:
    day = operating_day(ctx.start, ctx.time_zone, ctx.day_cutoff)
    return scheduled_slot(
        ctx.start,
        ctx.time_zone,
        program.hours,
        previous_start=state.last_game_start,
        cutoff=ctx.day_cutoff,
        served=state.served_hours if state.served_day == day else (),
        mode=program.missed_slot,
    )


def _day_index(state: ProgramState, day: date) -> int:
    """Fijo: 0 on the first operating day in play, +1 on each later operating day in play."""
    if state.last_play_day is None:
        return 0
    return state.day_steps if state.last_play_day == day else state.day_steps + 1


def _prize(program: Program, pool: Decimal, amount: Decimal | None) -> Decimal:
    if program.pays is Pays.POOL:
        return pool
    if program.pays is Pays.POOL_LESS_CARRY:
        return _EXACT.subtract(pool, money.percent_of(pool, program.carry_percent))
    prize = amount if amount is not None else program.amount
    if prize is None:
        raise ProgramError([problem("no_amount_announced", label=program.label)])
    return prize


def _require_funds(program: Program, pool: Decimal, prize: Decimal) -> None:
    if pool < prize:
        code = "bolsa_short" if program.info.funding is Funding.BOLSA_ACUMULADA else "pool_short"
        raise ProgramError([problem(code, label=program.label, held=pool, prize=prize)])


def in_play(program: Program, state: ProgramState, ctx: GameContext) -> InPlay | None:
    """Whether `program` is in play in this game and on what terms; None when it is not.

    Raises `ProgramError` for a manager pick that is not allowed or a prize the pool cannot fund.
    """
    family = program.family

    def play(
        max_ball: int | None,
        amount: Decimal,
        colour: str | None = None,
        slot: Slot | None = None,
        row: int | None = None,
    ) -> InPlay:
        return InPlay(
            program_id=program.program_id,
            program_type=program.program_type,
            max_ball=None if max_ball is None else _cap(max_ball),
            colour=colour,
            amount=amount,
            row=row,
            slot=slot.hour if slot else None,
            operating_day=slot.operating_day if slot else None,
            step=state.steps,
        )

    if family in _POOL_TRIGGERED:
        # BA-1 "primera partida posterior a aquella en que se haya alcanzado la cuantía", BA-2, BA-14…18.
        # A pool that no longer holds the amount (an operator's correction) takes the prize out of play.
        assert program.amount is not None
        pick = ctx.pick_for(program.program_id)
        if not state.reached or ctx.pool_amount < program.amount:
            if pick is not None:
                raise ProgramError([problem("not_reached", program=program.label)])
            return None
        prize = _prize(program, ctx.pool_amount, None)
        max_ball = program.ball_limit
        if family is Family.BINGO_EXTRA:
            # art. 147.3.c.2º: the fixed order, +1 per game played afterwards.
            active = _active_pick(program, state, ctx)
            order = active.max_ball if active is not None else None
            max_ball = (order if order is not None else program.extraction_order or 0) + state.steps
        elif pick is not None:
            raise ProgramError([problem("pick_not_allowed", label=program.label)])
        return play(max_ball, prize)

    if family is Family.ACUMULADO:
        # art. 147.3.c.3º: every game, max ball from the cards-sold scale.
        assert program.scale is not None
        limit = program.scale.max_ball(ctx.cards_sold)
        if limit is None:
            return None
        return play(limit, _prize(program, ctx.pool_amount, None))

    if family is Family.SCHEDULED:
        # BX-1 … BX-5: the game after each scheduled hour, once the amount is reached; row by category.
        assert program.table is not None
        assert program.amount is not None
        slot = _scheduled_slot(program, state, ctx)
        if slot is None or ctx.pool_amount < program.amount:
            return None
        table, category = program.table, ctx.hall_category
        if table.step is Step.PER_DAY and program.fixed_step is FixedStep.OPERATING_DAY:
            day = _day_index(state, slot.operating_day)
            limit = table.by_day(day, slot.hour, category, program.extrapolation)
            rows_today = [r.game for r in table.rows if r.day == day and r.hour == slot.hour]
            row = rows_today[0] if rows_today else None
        else:
            row = state.steps + 1
            limit = table.by_game(row, category, program.extrapolation)
        return play(limit, _prize(program, ctx.pool_amount, None), slot=slot, row=row)

    # BA-19 Super Prima, BA-20 Colour Prima: the game the hall manager picks, then until awarded.
    active = _active_pick(program, state, ctx)
    if active is None:
        return None
    assert active.amount is not None
    _require_funds(program, ctx.pool_amount, active.amount)
    if family is Family.SUPER_PRIMA:
        assert active.max_ball is not None
        return play(active.max_ball + state.steps, active.amount)
    return play(None, active.amount, colour=active.colour)


def evaluate(play: InPlay, bingo_ordinal: int, bingo_ball_colour: str | None) -> bool:
    """Whether the ordinary Bingo of the game wins this prize.

    `bingo_ordinal`: extraction order of the ball that gave the Bingo (balls drawn up to the prize);
    `bingo_ball_colour`: that ball's colour, for the Colour Prima (OP-12: the last ball drawn when play was
    interrupted by the verified Bingo).
    """
    if isinstance(bingo_ordinal, bool) or not isinstance(bingo_ordinal, int):
        raise ValueError(problem("bad_bingo_ordinal", value=bingo_ordinal))
    if not MIN_BINGO_BALL <= bingo_ordinal <= MAX_BALL:
        raise ValueError(
            problem("bingo_ordinal_range", low=MIN_BINGO_BALL, high=MAX_BALL, value=bingo_ordinal)
        )
    if play.max_ball is not None and bingo_ordinal > play.max_ball:
        return False
    if play.colour is not None:
        if bingo_ball_colour is None or not bingo_ball_colour.strip():
            raise ValueError(problem("bingo_colour_needed"))
        return bingo_ball_colour.strip().lower() == play.colour
    return True


def next_state(program: Program, state: ProgramState, won: bool, ctx: GameContext) -> ProgramState:
    """The program's state after this game (call it after every game of the room, in play or not)."""
    play = in_play(program, state, ctx)
    if won and play is None:
        raise ProgramError([problem("not_in_play_won", program=program.label)])
    after = dataclasses.replace(state, last_game_start=to_utc(ctx.start))
    family = program.family

    if family in _POOL_TRIGGERED:
        assert program.amount is not None
        if play is None:
            return dataclasses.replace(after, reached=ctx.pool_amount >= program.amount, steps=0, pick=None)
        if won:
            left = ctx.pool_amount - _prize(program, ctx.pool_amount, None)
            return dataclasses.replace(after, reached=left >= program.amount, steps=0, pick=None)
        if family is not Family.BINGO_EXTRA:
            return after  # OP-03: stays in play with the same limit
        if ctx.last_game_of_session:
            # art. 147.3.c.2º "… o hasta que se celebre la última partida de la sesión"; OP-04: the pool
            # carries over and the order restarts at the base in the next session.
            return dataclasses.replace(after, steps=0, pick=None)
        active = _active_pick(program, state, ctx)
        return dataclasses.replace(after, steps=state.steps + 1, pick=active)

    if family is Family.ACUMULADO:
        return after

    if family is Family.SCHEDULED:
        slot = _scheduled_slot(program, state, ctx)
        if slot is not None and program.missed_slot is MissedSlot.CATCH_UP:
            served = state.served_hours if state.served_day == slot.operating_day else frozenset()
            after = dataclasses.replace(
                after, served_day=slot.operating_day, served_hours=served | {slot.hour}
            )
        if play is None:
            return after
        if won:
            return dataclasses.replace(after, steps=0, day_steps=0, last_play_day=None)
        assert play.operating_day is not None
        return dataclasses.replace(
            after,
            steps=state.steps + 1,
            day_steps=_day_index(state, play.operating_day),
            last_play_day=play.operating_day,
        )

    # BA-19 / BA-20
    if play is None:
        return after
    if won:
        return dataclasses.replace(after, steps=0, pick=None)
    active = _active_pick(program, state, ctx)
    steps = state.steps + 1 if family is Family.SUPER_PRIMA else 0
    return dataclasses.replace(after, steps=steps, pick=active)


def payout(
    program: Program, pool_amount: Decimal, winners: Sequence[T], *, amount: Decimal | None = None
) -> Payout[T]:
    """Share the prize equally among the winning cards, to the cent (BA-G5, TB-11, OP-10).

    `pool_amount`: the program's pool at the end of the game (BA-3: "hasta el final de la partida en
    curso"), or the Bolsa Acumulada for BA-19/20. `amount`: the announced amount of a Super/Colour Prima
    (`InPlay.amount`) when the program has no standing amount.
    """
    if not isinstance(pool_amount, Decimal) or not pool_amount.is_finite() or pool_amount < 0:
        raise ValueError(problem("bad_pool_amount", value=pool_amount))
    prize = _prize(program, pool_amount, amount)
    if program.max_amount is not None and prize > program.max_amount:
        raise ProgramError(
            [problem("prize_over_maximum", label=program.label, prize=prize, maximum=program.max_amount)]
        )
    _require_funds(program, pool_amount, prize)
    split = split_equally(prize, winners)
    carry = _EXACT.subtract(pool_amount, prize)
    return Payout(shares=split.shares, share=split.share, remainder=split.remainder, carry=carry, prize=prize)


def scheduled_variant(program_type: ProgramType, regulation: Regulation | None = None) -> ScheduledVariant:
    return (regulation or latest_regulation()).scheduled[program_type]


__all__ = [
    "PROGRAM_TYPES",
    "Condition",
    "Family",
    "FixedStep",
    "Funding",
    "GameContext",
    "InPlay",
    "ManagerPick",
    "Payout",
    "Pays",
    "Problem",
    "Program",
    "ProgramError",
    "ProgramState",
    "ProgramTypeInfo",
    "Trigger",
    "contribution",
    "evaluate",
    "in_play",
    "initial_state",
    "make_program",
    "next_state",
    "payout",
    "program_in_force",
    "schedule_problems",
    "scheduled_variant",
    "validate_config",
    "validate_pick",
]
