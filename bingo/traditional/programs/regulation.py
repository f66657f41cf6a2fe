"""The regulation's data for the accumulated-pool prizes (bolsa acumulada), as frozen dataclasses. Pure.

Everything here is data, never logic that branches on a program: spec §2.4, seed
`000_30ca879e32376d5e.txt art. 147.3.c`. Each value says where it comes from: `Source.REGULATION` (a
number printed in the seed) or `Source.INTERPRETATION` (a reading of the spec, §9 OP-n, that the product
owner may change). Amounts, limits and tables may be amended by the Consejo de Gobierno (BA-G3, art. 147
last paragraph), so they live in an effective-dated `Regulation`: an amendment is a new `Regulation` in
`REGULATIONS`, not code.

The extraction tables are stored literally, row by row, as printed (OP-05: even the odd BA-5 rows); only
rows past the last printed one are extrapolated ("..." in the seed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, time
from decimal import Decimal
from enum import StrEnum
from types import MappingProxyType
from typing import Generic, TypeVar

from bingo.traditional.programs.problems import Problem, problem

V = TypeVar("V")

SEED = "000_30ca879e32376d5e.txt"
EURO = "€"


def cite(item: str) -> str:
    """Citation of an item of art. 147.3.c, e.g. `cite("1º")`."""
    return f"{SEED} art. 147.3.c.{item}"


class Source(StrEnum):
    REGULATION = "regulation"
    INTERPRETATION = "interpretation"


class HallCategory(StrEnum):
    """The hall's category column of the tables (OP-33); same values as `halls.models.HallCategory`."""

    FIRST = "1"
    SECOND = "2"
    THIRD = "3"

    @property
    def label(self) -> str:
        return f"{self.value}ª"


class ProgramType(StrEnum):
    """BA-1 … BA-20: the items of art. 147.3.c in the order printed (OP-01: two "3º", no "4º")."""

    BA_1 = "BA-1"
    BA_2 = "BA-2"
    BA_3 = "BA-3"
    BA_4 = "BA-4"
    BA_5 = "BA-5"
    BA_6 = "BA-6"
    BA_7 = "BA-7"
    BA_8 = "BA-8"
    BA_9 = "BA-9"
    BA_10 = "BA-10"
    BA_11 = "BA-11"
    BA_12 = "BA-12"
    BA_13 = "BA-13"
    BA_14 = "BA-14"
    BA_15 = "BA-15"
    BA_16 = "BA-16"
    BA_17 = "BA-17"
    BA_18 = "BA-18"
    BA_19 = "BA-19"
    BA_20 = "BA-20"


@dataclass(frozen=True)
class SeedItem:
    """How the seed numbers and names an item (spec §2.4, OP-01)."""

    item: str
    name: str

    @property
    def citation(self) -> str:
        return cite(self.item)


SEED_ITEMS: Mapping[ProgramType, SeedItem] = MappingProxyType(
    {
        ProgramType.BA_1: SeedItem("1º", "Prima"),
        ProgramType.BA_2: SeedItem("2º", "Bingo Extra"),
        ProgramType.BA_3: SeedItem("3º", "Bingo Acumulado"),
        # OP-01: the seed numbers this one "3º" a second time; cited as such.
        ProgramType.BA_4: SeedItem("3º (second occurrence)", "Bingo Extra 6/2 Escalonado"),
        ProgramType.BA_5: SeedItem("5.º", "Bingo Extra 6/2 Fijo"),
        ProgramType.BA_6: SeedItem("6.º", "Bingo Extra 6/4 Escalado"),
        ProgramType.BA_7: SeedItem("7.º", "Bingo Extra 6/4 Fijo"),
        ProgramType.BA_8: SeedItem("8.º", "Bingo Extra 12/2 Escalado"),
        ProgramType.BA_9: SeedItem("9.º", "Bingo Extra 12/2 Fijo"),
        ProgramType.BA_10: SeedItem("10.º", "Bingo Extra 12/4 Escalado"),
        ProgramType.BA_11: SeedItem("11.º", "Bingo Extra 12/4 Fijo"),
        ProgramType.BA_12: SeedItem("12.º", "Bingo Extra 30/1"),
        ProgramType.BA_13: SeedItem("13.º", "Bingo Extra 60/1"),
        ProgramType.BA_14: SeedItem("14.º", "Prima Especial"),
        ProgramType.BA_15: SeedItem("15.º", "Prima Bronce"),
        ProgramType.BA_16: SeedItem("16.º", "Prima Plata"),
        ProgramType.BA_17: SeedItem("17.º", "Prima Oro"),
        ProgramType.BA_18: SeedItem("18.º", "Gran Prima"),
        ProgramType.BA_19: SeedItem("19º", "Super Prima"),
        ProgramType.BA_20: SeedItem("20º", "Premio Color Prima"),
    }
)


@dataclass(frozen=True)
class Default(Generic[V]):
    """A default parameter value and where it comes from."""

    value: V
    source: Source
    citation: str
    note: str = ""


# --- extraction tables (BA-4 … BA-13) ----------------------------------------------------------------------


class Step(StrEnum):
    """How the table moves on after a scheduled game without award (BX-5, §2.4.4 summary)."""

    PER_GAME = "per_game"  # Escalado/Escalonado, 30/1, 60/1: next row every scheduled game
    PER_DAY = "per_day"  # Fijo: same value within a day, +1 the next day


class Extrapolation(StrEnum):
    """How "..." continues past the last printed row (§2.4.4 Interpretation)."""

    # Default (Interpretation): last printed value + 1 per further step, so BA-5's printed 54 on day n+1
    # (2ª) becomes 55 on day n+2 and the "+1 the next day" pattern holds.
    FROM_LAST_ROW = "from_last_row"
    # The spec's formula base(cat) + (k - 1) // games_per_step; for BA-5 it gives 54 again on day n+2.
    FROM_BASE = "from_base"


@dataclass(frozen=True)
class ExtractionRow:
    """One printed row: "Partida", "Día" (offset from day n), "Hora", then the 1ª/2ª/3ª columns."""

    game: int
    day: int
    hour: time
    first: int
    second: int
    third: int

    def max_ball(self, category: HallCategory) -> int:
        return {
            HallCategory.FIRST: self.first,
            HallCategory.SECOND: self.second,
            HallCategory.THIRD: self.third,
        }[category]


def _row(game: int, day: int, hour: str, first: int, second: int, third: int) -> ExtractionRow:
    return ExtractionRow(game, day, time.fromisoformat(hour), first, second, third)


@dataclass(frozen=True)
class ExtractionTable:
    """An "Extracción según categoría de sala" table, stored as printed."""

    name: str
    citation: str
    source: Source
    step: Step
    rows: tuple[ExtractionRow, ...]
    # Scheduled games per day that make one PER_DAY step (the "Fijo" tables), 1 for PER_GAME.
    games_per_step: int = 1
    note: str = ""

    def __post_init__(self) -> None:
        if not self.rows:
            raise ValueError(f"{self.name}: a table needs at least one row")
        if [r.game for r in self.rows] != list(range(1, len(self.rows) + 1)):
            raise ValueError(f"{self.name}: rows must be games 1, 2, 3 … in order")

    def base(self, category: HallCategory) -> int:
        return self.rows[0].max_ball(category)

    def by_game(self, k: int, category: HallCategory, extrapolation: Extrapolation) -> int:
        """Max ball of the k-th scheduled game in play (k = 1, 2, …) counted per game (BX-5)."""
        if k < 1:
            raise ValueError(problem("bad_game_index", value=k))
        if k <= len(self.rows):
            return self.rows[k - 1].max_ball(category)
        steps = (k - 1) // self.games_per_step
        if extrapolation is Extrapolation.FROM_BASE:
            return self.base(category) + steps
        last_steps = (len(self.rows) - 1) // self.games_per_step
        return self.rows[-1].max_ball(category) + steps - last_steps

    def by_day(self, day: int, hour: time, category: HallCategory, extrapolation: Extrapolation) -> int:
        """Max ball of the game at `hour` on day n + `day` (Fijo tables: the row printed for that day)."""
        if day < 0:
            raise ValueError(problem("bad_day_offset", value=day))
        same_day = [r for r in self.rows if r.day == day]
        if same_day:
            exact = [r for r in same_day if r.hour == hour]
            return (exact or same_day)[0].max_ball(category)
        if extrapolation is Extrapolation.FROM_BASE:
            return self.base(category) + day
        last = self.rows[-1]
        return last.max_ball(category) + day - last.day


# BA-4 Bingo Extra 6/2 Escalonado — art. 147.3.c.3º (second occurrence).
BA_4_TABLE = ExtractionTable(
    name="Bingo Extra 6/2 Escalonado",
    citation=cite("3º (second occurrence)"),
    source=Source.REGULATION,
    step=Step.PER_GAME,
    rows=(
        _row(1, 0, "20:00", 50, 52, 54),
        _row(2, 0, "00:00", 51, 53, 55),
        _row(3, 1, "20:00", 52, 54, 56),
        _row(4, 1, "00:00", 53, 55, 57),
    ),
)

# BA-5 Bingo Extra 6/2 Fijo — art. 147.3.c.5.º. Printed literally: rows 3–4 of 2ª/3ª step +2 (OP-05).
BA_5_TABLE = ExtractionTable(
    name="Bingo Extra 6/2 Fijo",
    citation=cite("5.º"),
    source=Source.REGULATION,
    step=Step.PER_DAY,
    games_per_step=2,
    rows=(
        _row(1, 0, "20:00", 50, 52, 54),
        _row(2, 0, "00:00", 50, 52, 54),
        _row(3, 1, "20:00", 51, 54, 56),
        _row(4, 1, "00:00", 51, 54, 56),
    ),
    note="OP-05: rows 3–4 read 51/54/56 (+2 for 2ª and 3ª) where 12/2 Fijo reads 51/53/55; kept as printed",
)

# BA-6 Bingo Extra 6/4 Escalado — art. 147.3.c.6.º, exactly as printed (only 20.00/00.00 rows, OP-06).
BA_6_PRINTED_TABLE = ExtractionTable(
    name="Bingo Extra 6/4 Escalado (printed rows)",
    citation=cite("6.º"),
    source=Source.REGULATION,
    step=Step.PER_GAME,
    rows=(
        _row(1, 0, "20:00", 50, 52, 54),
        _row(2, 0, "00:00", 51, 53, 55),
        _row(3, 1, "20:00", 52, 54, 56),
        _row(4, 1, "00:00", 53, 55, 57),
    ),
    note="OP-06: the text says four games at 16, 20, 0 and 3 h but the rows list only 20.00 and 00.00",
)

# BA-7 Bingo Extra 6/4 Fijo — art. 147.3.c.7.º.
BA_7_TABLE = ExtractionTable(
    name="Bingo Extra 6/4 Fijo",
    citation=cite("7.º"),
    source=Source.REGULATION,
    step=Step.PER_DAY,
    games_per_step=4,
    rows=(
        _row(1, 0, "16:00", 50, 52, 54),
        _row(2, 0, "20:00", 50, 52, 54),
        _row(3, 0, "00:00", 50, 52, 54),
        _row(4, 0, "03:00", 50, 52, 54),
        _row(5, 1, "16:00", 51, 53, 55),
        _row(6, 1, "20:00", 51, 53, 55),
        _row(7, 1, "00:00", 51, 53, 55),
        _row(8, 1, "03:00", 51, 53, 55),
    ),
)

# BA-8 Bingo Extra 12/2 Escalado — art. 147.3.c.8.º.
BA_8_TABLE = ExtractionTable(
    name="Bingo Extra 12/2 Escalado",
    citation=cite("8.º"),
    source=Source.REGULATION,
    step=Step.PER_GAME,
    rows=(
        _row(1, 0, "20:00", 50, 52, 54),
        _row(2, 0, "00:00", 51, 53, 55),
        _row(3, 1, "20:00", 52, 54, 56),
        _row(4, 1, "00:00", 53, 55, 57),
    ),
)

# BA-9 Bingo Extra 12/2 Fijo — art. 147.3.c.9.º.
BA_9_TABLE = ExtractionTable(
    name="Bingo Extra 12/2 Fijo",
    citation=cite("9.º"),
    source=Source.REGULATION,
    step=Step.PER_DAY,
    games_per_step=2,
    rows=(
        _row(1, 0, "20:00", 50, 52, 54),
        _row(2, 0, "00:00", 50, 52, 54),
        _row(3, 1, "20:00", 51, 53, 55),
        _row(4, 1, "00:00", 51, 53, 55),
    ),
)

# BA-10 Bingo Extra 12/4 Escalado — art. 147.3.c.10.º.
BA_10_TABLE = ExtractionTable(
    name="Bingo Extra 12/4 Escalado",
    citation=cite("10.º"),
    source=Source.REGULATION,
    step=Step.PER_GAME,
    rows=(
        _row(1, 0, "16:00", 50, 52, 54),
        _row(2, 0, "20:00", 51, 53, 55),
        _row(3, 0, "00:00", 52, 54, 56),
        _row(4, 0, "03:00", 53, 55, 57),
    ),
)

# BA-6 as the spec reads it (OP-06, Interpretation): the text's four games at 16/20/00/03 with the
# 12/4 Escalado progression. The max ball of the k-th game is the same as in the printed rows.
BA_6_TEXT_TABLE = ExtractionTable(
    name="Bingo Extra 6/4 Escalado (four games, OP-06)",
    citation=f"{cite('6.º')}; spec §9 OP-06",
    source=Source.INTERPRETATION,
    step=Step.PER_GAME,
    rows=BA_10_TABLE.rows,
    note="OP-06: follows the text (16, 20, 0 and 3 h) with the 12/4 Escalado rows",
)

# BA-11 Bingo Extra 12/4 Fijo — art. 147.3.c.11.º.
BA_11_TABLE = ExtractionTable(
    name="Bingo Extra 12/4 Fijo",
    citation=cite("11.º"),
    source=Source.REGULATION,
    step=Step.PER_DAY,
    games_per_step=4,
    rows=(
        _row(1, 0, "16:00", 50, 52, 54),
        _row(2, 0, "20:00", 50, 52, 54),
        _row(3, 0, "00:00", 50, 52, 54),
        _row(4, 0, "03:00", 50, 52, 54),
        _row(5, 1, "16:00", 51, 53, 55),
        _row(6, 1, "20:00", 51, 53, 55),
        _row(7, 1, "00:00", 51, 53, 55),
        _row(8, 1, "03:00", 51, 53, 55),
    ),
)

# BA-12 Bingo Extra 30/1 — art. 147.3.c.12.º: one game a day, +1 every day.
BA_12_TABLE = ExtractionTable(
    name="Bingo Extra 30/1",
    citation=cite("12.º"),
    source=Source.REGULATION,
    step=Step.PER_GAME,
    rows=(
        _row(1, 0, "20:00", 48, 49, 50),
        _row(2, 1, "20:00", 49, 50, 51),
        _row(3, 2, "20:00", 50, 51, 52),
        _row(4, 3, "20:00", 51, 52, 53),
    ),
)

# BA-13 Bingo Extra 60/1 — art. 147.3.c.13.º.
BA_13_TABLE = ExtractionTable(
    name="Bingo Extra 60/1",
    citation=cite("13.º"),
    source=Source.REGULATION,
    step=Step.PER_GAME,
    rows=(
        _row(1, 0, "20:00", 48, 49, 50),
        _row(2, 1, "20:00", 49, 50, 51),
        _row(3, 2, "20:00", 50, 51, 52),
        _row(4, 3, "20:00", 51, 52, 53),
    ),
)


class Ba6Profile(StrEnum):
    """Which reading of BA-6 to play (OP-06)."""

    TEXT = "text"  # default: four games at 16/20/00/03, 12/4 Escalado rows (Interpretation)
    PRINTED = "printed"  # the printed table: games at 20:00 and 00:00 only


def _hours(*hours: str) -> tuple[time, ...]:
    return tuple(time.fromisoformat(h) for h in hours)


TWO_GAMES = _hours("20:00", "00:00")
FOUR_GAMES = _hours("16:00", "20:00", "00:00", "03:00")
ONE_GAME = _hours("20:00")


@dataclass(frozen=True)
class ScheduledVariant:
    """One of BA-4 … BA-13 (§2.4.4 summary): amount reached, scheduled hours, table."""

    program_type: ProgramType
    trigger_amount: Decimal
    hours: tuple[time, ...]
    table: ExtractionTable
    citation: str
    # Alternative profile kept available (only BA-6, OP-06).
    printed_hours: tuple[time, ...] | None = None
    printed_table: ExtractionTable | None = None

    @property
    def games_per_session(self) -> int:
        return len(self.hours)


def _variant(
    program_type: ProgramType, amount: str, hours: tuple[time, ...], table: ExtractionTable
) -> ScheduledVariant:
    return ScheduledVariant(program_type, Decimal(amount), hours, table, SEED_ITEMS[program_type].citation)


SCHEDULED_VARIANTS: Mapping[ProgramType, ScheduledVariant] = MappingProxyType(
    {
        ProgramType.BA_4: _variant(ProgramType.BA_4, "6000", TWO_GAMES, BA_4_TABLE),
        ProgramType.BA_5: _variant(ProgramType.BA_5, "6000", TWO_GAMES, BA_5_TABLE),
        ProgramType.BA_6: ScheduledVariant(
            ProgramType.BA_6,
            Decimal("6000"),
            FOUR_GAMES,
            BA_6_TEXT_TABLE,
            SEED_ITEMS[ProgramType.BA_6].citation,
            printed_hours=TWO_GAMES,
            printed_table=BA_6_PRINTED_TABLE,
        ),
        ProgramType.BA_7: _variant(ProgramType.BA_7, "6000", FOUR_GAMES, BA_7_TABLE),
        ProgramType.BA_8: _variant(ProgramType.BA_8, "12000", TWO_GAMES, BA_8_TABLE),
        ProgramType.BA_9: _variant(ProgramType.BA_9, "12000", TWO_GAMES, BA_9_TABLE),
        ProgramType.BA_10: _variant(ProgramType.BA_10, "12000", FOUR_GAMES, BA_10_TABLE),
        ProgramType.BA_11: _variant(ProgramType.BA_11, "12000", FOUR_GAMES, BA_11_TABLE),
        ProgramType.BA_12: _variant(ProgramType.BA_12, "30000", ONE_GAME, BA_12_TABLE),
        ProgramType.BA_13: _variant(ProgramType.BA_13, "60000", ONE_GAME, BA_13_TABLE),
    }
)

# Every table stored, printed and interpreted, for audit screens and tests.
ALL_TABLES: tuple[ExtractionTable, ...] = (
    BA_4_TABLE,
    BA_5_TABLE,
    BA_6_PRINTED_TABLE,
    BA_6_TEXT_TABLE,
    BA_7_TABLE,
    BA_8_TABLE,
    BA_9_TABLE,
    BA_10_TABLE,
    BA_11_TABLE,
    BA_12_TABLE,
    BA_13_TABLE,
)


# --- Bingo Acumulado scale (BA-3) --------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaleBand:
    """ "De `min_cards` a `max_cards` cartones → `max_ball` o menos"; `max_cards` None = "más de"."""

    min_cards: int
    max_cards: int | None
    max_ball: int

    def holds(self, cards_sold: int) -> bool:
        return self.min_cards <= cards_sold and (self.max_cards is None or cards_sold <= self.max_cards)


@dataclass(frozen=True)
class CardsSoldScale:
    bands: tuple[ScaleBand, ...]
    citation: str
    source: Source = Source.REGULATION

    def problems(self) -> list[Problem]:
        """Why the bands are not one contiguous scale from 1 card up (empty when they are)."""
        if not self.bands:
            return [problem("scale_no_bands")]
        problems: list[Problem] = []
        expected = 1
        for i, band in enumerate(self.bands):
            if band.min_cards != expected:
                problems.append(problem("scale_gap", expected=expected, got=band.min_cards))
            if not 15 <= band.max_ball <= 90:
                problems.append(problem("band_ball", cards=band.min_cards, ball=band.max_ball))
            if band.max_cards is None:
                if i != len(self.bands) - 1:
                    problems.append(problem("open_band_not_last"))
                break
            if band.max_cards < band.min_cards:
                problems.append(problem("band_empty", low=band.min_cards, high=band.max_cards))
            expected = band.max_cards + 1
        if self.bands[-1].max_cards is not None:
            problems.append(problem("scale_not_open", cards=self.bands[-1].max_cards))
        return problems

    def max_ball(self, cards_sold: int) -> int | None:
        """The extraction order a Bingo must not exceed; None when no card was sold."""
        for band in self.bands:
            if band.holds(cards_sold):
                return band.max_ball
        return None


# art. 147.3.c.3º: "De 1 a 50 Cartones 44 o menos … mas de 200 cartones 40 o menos".
BA_3_SCALE = CardsSoldScale(
    bands=(
        ScaleBand(1, 50, 44),
        ScaleBand(51, 100, 43),
        ScaleBand(101, 150, 42),
        ScaleBand(151, 200, 41),
        ScaleBand(201, None, 40),
    ),
    citation=cite("3º"),
)


# --- the regulation, versioned (BA-G3) ---------------------------------------------------------------------


@dataclass(frozen=True)
class Regulation:
    """One version of the regulated numbers of art. 147.3.c, in force from `effective_from` (BA-G3)."""

    version: str
    effective_from: date
    citation: str
    prima_levels: Default[tuple[Decimal, ...]]
    prima_ball_limit: Default[int]
    bingo_extra_floor: Default[int]
    acumulado_scale: CardsSoldScale
    acumulado_carry_percent: Default[Decimal]
    colour_prima_max: Default[Decimal]
    scheduled: Mapping[ProgramType, ScheduledVariant] = field(default_factory=lambda: SCHEDULED_VARIANTS)


MELILLA_2014 = Regulation(
    version="ML-2014",
    # Decreto 3715 of 16 Sep 2014, published BOME extraordinario nº 19 of 22 Sep 2014 (spec §0.1);
    # the publication date is the effective date (Interpretation: the spec gives no entry-into-force date).
    effective_from=date(2014, 9, 22),
    citation=f"{SEED} art. 147.3.c",
    prima_levels=Default(
        tuple(Decimal(v) for v in ("30", "50", "100", "200", "300")), Source.REGULATION, cite("1º")
    ),
    prima_ball_limit=Default(
        48, Source.REGULATION, cite("1º"), "balls drawn up to the prize do not exceed 48"
    ),
    bingo_extra_floor=Default(50, Source.REGULATION, cite("2º"), "never below extraction order 50 (OP-34)"),
    acumulado_scale=BA_3_SCALE,
    acumulado_carry_percent=Default(Decimal(20), Source.REGULATION, cite("3º"), "seeds the next prize"),
    colour_prima_max=Default(Decimal(500), Source.REGULATION, cite("20º"), "importe máximo 500€"),
)

REGULATIONS: tuple[Regulation, ...] = (MELILLA_2014,)


def regulation_in_force(on: date, regulations: tuple[Regulation, ...] = REGULATIONS) -> Regulation:
    """The latest version whose `effective_from` is on or before `on` (BA-G3)."""
    in_force = [r for r in regulations if r.effective_from <= on]
    if not in_force:
        raise ValueError(problem("no_regulation", day=on.isoformat()))
    return max(in_force, key=lambda r: r.effective_from)


# --- product defaults that read the spec's open points (Interpretation) ------------------------------------

SPEC = "spec/rules.md"

INTERPRETATION_DEFAULTS: Mapping[str, Default[object]] = MappingProxyType(
    {
        "day_cutoff": Default(
            time(6, 0),
            Source.INTERPRETATION,
            f"{SPEC} §9 OP-07",
            "the operating day runs 06:00–05:59 local time: 00:00 and 03:00 belong to the evening before",
        ),
        "missed_slot": Default(
            "lapse",
            Source.INTERPRETATION,
            f"{SPEC} §2.4.4 BX-2",
            "a game that follows two scheduled hours serves the later one; the earlier is missed",
        ),
        "fixed_step": Default(
            "operating_day",
            Source.INTERPRETATION,
            f"{SPEC} §2.4.4 summary",
            "Fijo tables: the row of day n + d, d = earlier operating days with the prize in play",
        ),
        "extrapolation": Default(
            Extrapolation.FROM_LAST_ROW.value,
            Source.INTERPRETATION,
            f"{SPEC} §2.4.4",
            "rows after the last printed one continue from it, +1 per step",
        ),
        "ba6_profile": Default(Ba6Profile.TEXT.value, Source.INTERPRETATION, f"{SPEC} §9 OP-06"),
        "prima_ball_limit_14_18": Default(None, Source.INTERPRETATION, f"{SPEC} §9 OP-11", "no ball limit"),
        "prima_not_won": Default(
            "stays_in_play", Source.INTERPRETATION, f"{SPEC} §9 OP-03", "same limit, next game, until awarded"
        ),
        "bingo_extra_after_session": Default(
            "restart",
            Source.INTERPRETATION,
            f"{SPEC} §9 OP-04",
            "pool carries over, order restarts at the base",
        ),
        "remainder": Default(
            "pool", Source.INTERPRETATION, f"{SPEC} §9 OP-10", "cents that cannot be split stay in the pool"
        ),
        "colour_prima_fixed": Default(
            True, Source.INTERPRETATION, f"{SPEC} §9 OP-12", "colour and amount stay until awarded"
        ),
        "pays_next_game_primas": Default(
            "amount", Source.INTERPRETATION, f"{SPEC} §2.4.1, §2.4.2, §2.4.5", "the amount reached is paid"
        ),
        "pays_scheduled": Default(
            "pool", Source.INTERPRETATION, f"{SPEC} §2.4.4 BX-6", "the whole accumulated pool is paid"
        ),
    }
)
