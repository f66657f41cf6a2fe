"""The regulation's data (spec §2.4, seed art. 147.3.c): every table row checked against numbers typed from
the spec, the cards-sold scale, citations, and which defaults are regulation and which are interpretation."""

from __future__ import annotations

import dataclasses
from datetime import date, time
from decimal import Decimal

import pytest

from bingo.traditional.programs.regulation import (
    ALL_TABLES,
    BA_3_SCALE,
    BA_5_TABLE,
    BA_6_PRINTED_TABLE,
    BA_6_TEXT_TABLE,
    BA_7_TABLE,
    BA_9_TABLE,
    BA_10_TABLE,
    BA_12_TABLE,
    INTERPRETATION_DEFAULTS,
    MELILLA_2014,
    SCHEDULED_VARIANTS,
    SEED,
    SEED_ITEMS,
    CardsSoldScale,
    ExtractionRow,
    ExtractionTable,
    Extrapolation,
    HallCategory,
    ProgramType,
    ScaleBand,
    Source,
    Step,
    regulation_in_force,
)

D = Decimal
FIRST, SECOND, THIRD = HallCategory.FIRST, HallCategory.SECOND, HallCategory.THIRD

# Typed by hand from spec §2.4.4 (and checked against the seed): (Partida, Día offset, Hora, 1ª, 2ª, 3ª).
SPEC_ROWS: dict[ProgramType, list[tuple[int, int, str, int, int, int]]] = {
    ProgramType.BA_4: [(1, 0, "20:00", 50, 52, 54), (2, 0, "00:00", 51, 53, 55),
                       (3, 1, "20:00", 52, 54, 56), (4, 1, "00:00", 53, 55, 57)],
    ProgramType.BA_5: [(1, 0, "20:00", 50, 52, 54), (2, 0, "00:00", 50, 52, 54),
                       (3, 1, "20:00", 51, 54, 56), (4, 1, "00:00", 51, 54, 56)],
    ProgramType.BA_7: [(1, 0, "16:00", 50, 52, 54), (2, 0, "20:00", 50, 52, 54),
                       (3, 0, "00:00", 50, 52, 54), (4, 0, "03:00", 50, 52, 54),
                       (5, 1, "16:00", 51, 53, 55), (6, 1, "20:00", 51, 53, 55),
                       (7, 1, "00:00", 51, 53, 55), (8, 1, "03:00", 51, 53, 55)],
    ProgramType.BA_8: [(1, 0, "20:00", 50, 52, 54), (2, 0, "00:00", 51, 53, 55),
                       (3, 1, "20:00", 52, 54, 56), (4, 1, "00:00", 53, 55, 57)],
    ProgramType.BA_9: [(1, 0, "20:00", 50, 52, 54), (2, 0, "00:00", 50, 52, 54),
                       (3, 1, "20:00", 51, 53, 55), (4, 1, "00:00", 51, 53, 55)],
    ProgramType.BA_10: [(1, 0, "16:00", 50, 52, 54), (2, 0, "20:00", 51, 53, 55),
                        (3, 0, "00:00", 52, 54, 56), (4, 0, "03:00", 53, 55, 57)],
    ProgramType.BA_11: [(1, 0, "16:00", 50, 52, 54), (2, 0, "20:00", 50, 52, 54),
                        (3, 0, "00:00", 50, 52, 54), (4, 0, "03:00", 50, 52, 54),
                        (5, 1, "16:00", 51, 53, 55), (6, 1, "20:00", 51, 53, 55),
                        (7, 1, "00:00", 51, 53, 55), (8, 1, "03:00", 51, 53, 55)],
    ProgramType.BA_12: [(1, 0, "20:00", 48, 49, 50), (2, 1, "20:00", 49, 50, 51),
                        (3, 2, "20:00", 50, 51, 52), (4, 3, "20:00", 51, 52, 53)],
    ProgramType.BA_13: [(1, 0, "20:00", 48, 49, 50), (2, 1, "20:00", 49, 50, 51),
                        (3, 2, "20:00", 50, 51, 52), (4, 3, "20:00", 51, 52, 53)],
}  # fmt: skip
# BA-6 as printed (OP-06: only 20.00 / 00.00 rows although the text has four games).
SPEC_BA6_PRINTED = [(1, 0, "20:00", 50, 52, 54), (2, 0, "00:00", 51, 53, 55),
                    (3, 1, "20:00", 52, 54, 56), (4, 1, "00:00", 53, 55, 57)]  # fmt: skip


def as_tuples(table: ExtractionTable) -> list[tuple[int, int, str, int, int, int]]:
    return [(r.game, r.day, r.hour.strftime("%H:%M"), r.first, r.second, r.third) for r in table.rows]


@pytest.mark.parametrize("program_type", list(SPEC_ROWS))
def test_every_printed_row_matches_the_spec(program_type: ProgramType) -> None:
    assert as_tuples(SCHEDULED_VARIANTS[program_type].table) == SPEC_ROWS[program_type]


def test_ba6_printed_rows_are_kept_literally() -> None:
    assert as_tuples(BA_6_PRINTED_TABLE) == SPEC_BA6_PRINTED
    assert SCHEDULED_VARIANTS[ProgramType.BA_6].printed_table is BA_6_PRINTED_TABLE
    assert SCHEDULED_VARIANTS[ProgramType.BA_6].printed_hours == (time(20), time(0))
    assert BA_6_PRINTED_TABLE.source is Source.REGULATION


def test_ba6_default_follows_the_text_with_the_12_4_rows() -> None:
    # OP-06: four games at 16/20/00/03 with 50/52/54, 51/53/55, 52/54/56, 53/55/57.
    variant = SCHEDULED_VARIANTS[ProgramType.BA_6]
    assert variant.hours == (time(16), time(20), time(0), time(3))
    assert variant.table is BA_6_TEXT_TABLE
    assert BA_6_TEXT_TABLE.source is Source.INTERPRETATION
    assert "OP-06" in BA_6_TEXT_TABLE.citation
    assert as_tuples(BA_6_TEXT_TABLE) == SPEC_ROWS[ProgramType.BA_10]
    # The k-th game has the same max ball under both readings.
    for k in range(1, 5):
        for cat in HallCategory:
            assert BA_6_TEXT_TABLE.by_game(k, cat, Extrapolation.FROM_LAST_ROW) == BA_6_PRINTED_TABLE.by_game(
                k, cat, Extrapolation.FROM_LAST_ROW
            )


def test_literal_cells_typed_from_the_seed() -> None:
    # A few cells read straight off the seed, independently of SPEC_ROWS.
    assert BA_5_TABLE.rows[2].max_ball(SECOND) == 54  # OP-05: 6/2 Fijo day n+1, 2ª
    assert BA_5_TABLE.rows[3].max_ball(THIRD) == 56
    assert BA_9_TABLE.rows[2].max_ball(SECOND) == 53  # 12/2 Fijo reads 53 in the same cell
    assert BA_7_TABLE.rows[4].max_ball(FIRST) == 51  # 6/4 Fijo, 5ª partida, n+1 16.00
    assert BA_10_TABLE.rows[3].max_ball(THIRD) == 57  # 12/4 Escalado, 4ª partida 03.00
    assert BA_12_TABLE.rows[3].max_ball(SECOND) == 52  # 30/1, n+3
    assert BA_12_TABLE.rows[0].max_ball(FIRST) == 48  # 30/1 starts below 50 (OP-34)
    assert SCHEDULED_VARIANTS[ProgramType.BA_13].table.rows[0].max_ball(THIRD) == 50


@pytest.mark.parametrize(
    ("program_type", "amount", "hours", "step"),
    [
        (ProgramType.BA_4, "6000", ["20:00", "00:00"], Step.PER_GAME),
        (ProgramType.BA_5, "6000", ["20:00", "00:00"], Step.PER_DAY),
        (ProgramType.BA_6, "6000", ["16:00", "20:00", "00:00", "03:00"], Step.PER_GAME),
        (ProgramType.BA_7, "6000", ["16:00", "20:00", "00:00", "03:00"], Step.PER_DAY),
        (ProgramType.BA_8, "12000", ["20:00", "00:00"], Step.PER_GAME),
        (ProgramType.BA_9, "12000", ["20:00", "00:00"], Step.PER_DAY),
        (ProgramType.BA_10, "12000", ["16:00", "20:00", "00:00", "03:00"], Step.PER_GAME),
        (ProgramType.BA_11, "12000", ["16:00", "20:00", "00:00", "03:00"], Step.PER_DAY),
        (ProgramType.BA_12, "30000", ["20:00"], Step.PER_GAME),
        (ProgramType.BA_13, "60000", ["20:00"], Step.PER_GAME),
    ],
)
def test_scheduled_variants(program_type: ProgramType, amount: str, hours: list[str], step: Step) -> None:
    variant = SCHEDULED_VARIANTS[program_type]
    assert variant.trigger_amount == D(amount)
    assert [h.strftime("%H:%M") for h in variant.hours] == hours
    assert variant.games_per_session == len(hours)
    assert variant.table.step is step
    assert variant.citation == SEED_ITEMS[program_type].citation


def test_seed_items_and_citations() -> None:
    assert list(SEED_ITEMS) == [ProgramType(f"BA-{n}") for n in range(1, 21)]
    # OP-01: the second "3º" is BA-4 and is cited as such; there is no "4º".
    assert SEED_ITEMS[ProgramType.BA_4].citation == f"{SEED} art. 147.3.c.3º (second occurrence)"
    assert SEED_ITEMS[ProgramType.BA_3].citation == f"{SEED} art. 147.3.c.3º"
    assert not any(item.item.startswith("4") for item in SEED_ITEMS.values())
    assert SEED_ITEMS[ProgramType.BA_20].name == "Premio Color Prima"
    for table in ALL_TABLES:
        assert table.citation.startswith(f"{SEED} art. 147.3.c."), table.name


def test_fijo_tables_are_the_same_within_a_day() -> None:
    for table in ALL_TABLES:
        if table.step is not Step.PER_DAY:
            continue
        for day in {r.day for r in table.rows}:
            assert len({(r.first, r.second, r.third) for r in table.rows if r.day == day}) == 1


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
        (5000, 40),
    ],
)
def test_bingo_acumulado_scale_boundaries(cards: int, max_ball: int) -> None:
    assert BA_3_SCALE.max_ball(cards) == max_ball


def test_bingo_acumulado_scale_is_literal() -> None:
    assert [(b.min_cards, b.max_cards, b.max_ball) for b in BA_3_SCALE.bands] == [
        (1, 50, 44),
        (51, 100, 43),
        (101, 150, 42),
        (151, 200, 41),
        (201, None, 40),
    ]
    assert BA_3_SCALE.max_ball(0) is None
    assert BA_3_SCALE.problems() == []
    assert BA_3_SCALE.citation == f"{SEED} art. 147.3.c.3º"


def test_scale_problems_are_explained() -> None:
    gap = CardsSoldScale((ScaleBand(1, 50, 44), ScaleBand(60, None, 40)), citation="x")
    assert gap.problems() == ["the cards-sold scale must continue at 51 cards, not 60"]
    closed = CardsSoldScale((ScaleBand(1, 50, 44),), citation="x")
    assert closed.problems() == ["the cards-sold scale needs an open last band (more than 50)"]
    assert CardsSoldScale((), citation="x").problems() == ["the cards-sold scale has no bands"]
    silly = CardsSoldScale((ScaleBand(1, None, 10),), citation="x")
    assert silly.problems() == ["band from 1 cards: max ball 10 is not in 15–90"]


def test_regulation_defaults_are_marked_and_cited() -> None:
    reg = MELILLA_2014
    assert reg.prima_levels.value == (D(30), D(50), D(100), D(200), D(300))
    assert reg.prima_ball_limit.value == 48
    assert reg.bingo_extra_floor.value == 50
    assert reg.acumulado_carry_percent.value == D(20)
    assert reg.colour_prima_max.value == D(500)
    regulated = (
        reg.prima_levels,
        reg.prima_ball_limit,
        reg.bingo_extra_floor,
        reg.acumulado_carry_percent,
        reg.colour_prima_max,
    )
    for default in regulated:
        assert default.source is Source.REGULATION
        assert default.citation.startswith(f"{SEED} art. 147.3.c.")
    for name, interpreted in INTERPRETATION_DEFAULTS.items():
        assert interpreted.source is Source.INTERPRETATION, name
        assert "spec/rules.md §" in interpreted.citation, name
    assert INTERPRETATION_DEFAULTS["day_cutoff"].value == time(6, 0)


def test_regulation_is_effective_dated() -> None:
    assert regulation_in_force(date(2014, 9, 22)) is MELILLA_2014
    assert regulation_in_force(date(2026, 1, 1)) is MELILLA_2014
    with pytest.raises(ValueError, match="no accumulated-prize regulation in force on 2014-09-21"):
        regulation_in_force(date(2014, 9, 21))
    # BA-G3: an amendment by the Consejo de Gobierno is a new version, data only.
    amended = dataclasses.replace(
        MELILLA_2014,
        version="ML-2030",
        effective_from=date(2030, 1, 1),
        colour_prima_max=dataclasses.replace(MELILLA_2014.colour_prima_max, value=D(600)),
    )
    versions = (MELILLA_2014, amended)
    assert regulation_in_force(date(2029, 12, 31), versions) is MELILLA_2014
    assert regulation_in_force(date(2030, 1, 1), versions).colour_prima_max.value == D(600)


# --- continuation of "..." past the printed rows (§2.4.4 Interpretation) ----------------------------------


@pytest.mark.parametrize(
    ("table", "k", "expected"),
    [
        (SCHEDULED_VARIANTS[ProgramType.BA_4].table, 5, (54, 56, 58)),
        (SCHEDULED_VARIANTS[ProgramType.BA_4].table, 10, (59, 61, 63)),
        (BA_10_TABLE, 5, (54, 56, 58)),
        (BA_12_TABLE, 5, (52, 53, 54)),
        (BA_12_TABLE, 30, (77, 78, 79)),
        (BA_9_TABLE, 5, (52, 54, 56)),
        (BA_7_TABLE, 9, (52, 54, 56)),
        (BA_7_TABLE, 12, (52, 54, 56)),
        (BA_7_TABLE, 13, (53, 55, 57)),
    ],
)
def test_rows_after_the_last_printed_one(
    table: ExtractionTable, k: int, expected: tuple[int, int, int]
) -> None:
    assert tuple(table.by_game(k, cat, Extrapolation.FROM_LAST_ROW) for cat in HallCategory) == expected
    assert tuple(table.by_game(k, cat, Extrapolation.FROM_BASE) for cat in HallCategory) == expected


def test_ba5_continuation_from_the_printed_rows_or_the_formula() -> None:
    # OP-05: printed day n+1 reads 51/54/56. Day n+2 continues +1 from it by default ...
    assert [BA_5_TABLE.by_day(2, time(20), c, Extrapolation.FROM_LAST_ROW) for c in HallCategory] == [
        52,
        55,
        57,
    ]
    assert [BA_5_TABLE.by_game(5, c, Extrapolation.FROM_LAST_ROW) for c in HallCategory] == [52, 55, 57]
    # ... or follows the spec's formula base + floor((k - 1) / 2), which repeats 54 for 2ª.
    assert [BA_5_TABLE.by_day(2, time(20), c, Extrapolation.FROM_BASE) for c in HallCategory] == [52, 54, 56]
    assert [BA_5_TABLE.by_game(5, c, Extrapolation.FROM_BASE) for c in HallCategory] == [52, 54, 56]
    # Printed rows always win over any formula.
    assert BA_5_TABLE.by_day(1, time(0), SECOND, Extrapolation.FROM_BASE) == 54


def test_by_day_reads_the_row_of_the_hour() -> None:
    assert BA_7_TABLE.by_day(1, time(3), THIRD, Extrapolation.FROM_LAST_ROW) == 55
    assert (
        BA_7_TABLE.by_day(0, time(21), FIRST, Extrapolation.FROM_LAST_ROW) == 50
    )  # unlisted hour: the day's row
    with pytest.raises(ValueError, match="day offset"):
        BA_7_TABLE.by_day(-1, time(3), FIRST, Extrapolation.FROM_LAST_ROW)
    with pytest.raises(ValueError, match="index"):
        BA_7_TABLE.by_game(0, FIRST, Extrapolation.FROM_LAST_ROW)


def test_a_table_must_be_numbered_in_order() -> None:
    row = ExtractionRow(2, 0, time(20), 50, 52, 54)
    with pytest.raises(ValueError, match="rows must be games 1, 2, 3"):
        ExtractionTable("bad", "x", Source.REGULATION, Step.PER_GAME, (row,))
    with pytest.raises(ValueError, match="at least one row"):
        ExtractionTable("empty", "x", Source.REGULATION, Step.PER_GAME, ())
    assert HallCategory.SECOND.label == "2ª"
