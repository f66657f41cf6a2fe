"""Program configuration (BA-G3): valid parameters for every type, clear refusals, versions and schedules."""

from __future__ import annotations

from datetime import datetime, time
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from bingo.prizes import PrizeAmount
from bingo.traditional.programs.regulation import (
    BA_6_PRINTED_TABLE,
    BA_6_TEXT_TABLE,
    SEED,
    Extrapolation,
    ProgramType,
    Source,
)
from bingo.traditional.programs.rules import (
    PROGRAM_TYPES,
    Family,
    FixedStep,
    ManagerPick,
    Pays,
    ProgramError,
    ProgramState,
    contribution,
    make_program,
    program_in_force,
    schedule_problems,
    validate_config,
    validate_pick,
)
from bingo.traditional.programs.schedule import MissedSlot

D = Decimal
MADRID = ZoneInfo("Europe/Madrid")
JAN = datetime(2025, 1, 1, 6, tzinfo=MADRID)
SALES: dict[str, object] = {"funding_percent": "1.5", "authorisation_ref": "ML-DGJ-2025/017"}

VALID: dict[ProgramType, dict[str, object]] = {
    ProgramType.BA_1: {**SALES, "amount": "100"},
    ProgramType.BA_2: {**SALES, "amount": "500", "extraction_order": 52},
    ProgramType.BA_3: {**SALES},
    **{ProgramType(f"BA-{n}"): {**SALES} for n in range(4, 14)},
    **{ProgramType(f"BA-{n}"): {**SALES, "amount": "1000"} for n in range(14, 19)},
    ProgramType.BA_19: {"amount": "300", "extraction_order": 45},
    ProgramType.BA_20: {"amount": "500", "colour": "red"},
}


def cite(item: str) -> str:
    return f"({SEED} art. 147.3.c.{item})"


@pytest.mark.parametrize("program_type", list(ProgramType))
def test_every_type_has_a_valid_configuration(program_type: ProgramType) -> None:
    assert validate_config(program_type, VALID[program_type]) == []
    program = make_program(
        program_type, VALID[program_type], program_id=f"p-{program_type}", effective_from=JAN
    )
    assert program.program_type is program_type
    assert program.info is PROGRAM_TYPES[program_type]
    assert program.effective_from == JAN
    for source in program.provenance.values():
        assert source in {"configured", Source.REGULATION.value, Source.INTERPRETATION.value}


def test_regulation_defaults_fill_in_and_are_recorded() -> None:
    prima = make_program("BA-1", VALID[ProgramType.BA_1], program_id="prima", effective_from=JAN)
    assert prima.ball_limit == 48
    assert prima.provenance["ball_limit"] == "regulation"
    assert prima.pays is Pays.AMOUNT
    extra = make_program("BA-2", VALID[ProgramType.BA_2], program_id="extra", effective_from=JAN)
    assert (extra.extraction_floor, extra.provenance["extraction_floor"]) == (50, "regulation")
    acumulado = make_program("BA-3", SALES, program_id="acum", effective_from=JAN)
    assert acumulado.carry_percent == D(20)
    assert acumulado.provenance["carry_percent"] == "regulation"
    ba12 = make_program("BA-12", SALES, program_id="30/1", effective_from=JAN)
    assert (ba12.amount, ba12.hours, ba12.provenance["amount"]) == (D(30000), (time(20),), "regulation")
    assert ba12.provenance["missed_slot"] == "interpretation"
    assert ba12.pays is Pays.POOL
    especial = make_program("BA-14", VALID[ProgramType.BA_14], program_id="esp", effective_from=JAN)
    assert especial.ball_limit is None  # OP-11
    assert especial.provenance["ball_limit"] == "interpretation"
    colour = make_program("BA-20", VALID[ProgramType.BA_20], program_id="color", effective_from=JAN)
    assert colour.max_amount == D(500)


def test_ba6_profiles() -> None:
    text = make_program("BA-6", SALES, program_id="6/4", effective_from=JAN)
    assert (text.hours, text.table) == ((time(16), time(20), time(0), time(3)), BA_6_TEXT_TABLE)
    printed = make_program("BA-6", {**SALES, "ba6_profile": "printed"}, program_id="6/4p", effective_from=JAN)
    assert (printed.hours, printed.table) == ((time(20), time(0)), BA_6_PRINTED_TABLE)


def test_interpretation_choices_are_parameters() -> None:
    p = make_program(
        "BA-5",
        {**SALES, "fixed_step": "scheduled_game", "extrapolation": "from_base", "missed_slot": "catch_up"},
        program_id="fijo",
        effective_from=JAN,
    )
    assert (p.fixed_step, p.extrapolation, p.missed_slot) == (
        FixedStep.SCHEDULED_GAME,
        Extrapolation.FROM_BASE,
        MissedSlot.CATCH_UP,
    )
    assert p.provenance["fixed_step"] == "configured"


# --- refusals with clear messages ---------------------------------------------------------------------------


def test_bingo_extra_order_below_the_floor_of_50() -> None:
    assert validate_config("BA-2", {**VALID[ProgramType.BA_2], "extraction_order": 49}) == [
        f"BA-2 Bingo Extra: extraction order 49 is below the floor of 50 {cite('2º')}"
    ]
    assert validate_config("BA-2", {**VALID[ProgramType.BA_2], "extraction_order": 50}) == []
    # OP-34: the floor is the generic Bingo Extra's; the 30/1 table itself starts at 48.
    assert validate_config("BA-12", SALES) == []


def test_colour_prima_over_500() -> None:
    assert validate_config("BA-20", {"amount": "500.01", "colour": "red"}) == [
        f"BA-20 Premio Color Prima: amount €500.01 is over the maximum of €500.00 {cite('20º')}"
    ]
    assert validate_config("BA-20", {"amount": 500, "colour": "red"}) == []


def test_unknown_colour() -> None:
    (problem,) = validate_config("BA-20", {"amount": "100", "colour": "magenta"})
    assert problem.startswith(
        "BA-20 Premio Color Prima: unknown colour 'magenta' for the Color Prima (known: "
    )
    assert validate_config("BA-20", {"amount": "100", "colour": " Red "}) == []
    # The hall's ball sets may narrow the colours.
    (narrow,) = validate_config("BA-20", {"colours": ["red", "blue"], "colour": "green"})
    assert "unknown colour 'green' for the Color Prima (known: blue, red)" in narrow
    (bad_set,) = validate_config("BA-20", {"colours": ["red", "teal"]})
    assert "unknown colour 'teal' for colours" in bad_set


def test_overlapping_hours_in_one_program() -> None:
    assert validate_config("BA-4", {**SALES, "hours": ["20:00", "20:00"]}) == [
        f"BA-4 Bingo Extra 6/2 Escalonado: the hour 20:00 is listed twice {cite('3º (second occurrence)')}"
    ]
    assert validate_config("BA-4", {**SALES, "hours": ["21:00", "01:00"]}) == []
    (count,) = validate_config("BA-12", {**SALES, "hours": ["20:00", "22:00"]})
    assert "1 scheduled game(s) per session (BX-3), got 2 hour(s)" in count
    (bad,) = validate_config("BA-4", {**SALES, "hours": ["20:00", "24:00"]})
    assert "'24:00' is not HH:MM" in bad


@pytest.mark.parametrize(
    ("program_type", "params", "message"),
    [
        ("BA-21", {}, "unknown program type 'BA-21' (BA-1 … BA-20, spec §2.4)"),
        (
            "BA-1",
            {**SALES, "amount": "75"},
            "amount €75.00 is not a Prima level (€30.00, €50.00, €100.00",
        ),
        ("BA-1", {**SALES}, "amount is required: one of the Prima levels"),
        ("BA-1", {**SALES, "amount": "100", "ball_limit": 91}, "ball_limit 91 must be an extraction order"),
        ("BA-1", {"funding_percent": "1", "amount": "100"}, "authorisation_ref is required"),
        ("BA-1", {"authorisation_ref": "x", "amount": "100"}, "funding_percent is required"),
        (
            "BA-1",
            {**SALES, "amount": 100.0},
            "amount must be a Decimal, an int or a decimal string, not float",
        ),
        ("BA-1", {**SALES, "amount": "cien"}, "amount 'cien' is not a number"),
        ("BA-1", {**SALES, "amount": "100", "colour": "red"}, "unknown parameter(s) colour"),
        ("BA-2", {**SALES, "amount": "500"}, "extraction_order is required"),
        ("BA-2", {**SALES, "extraction_order": 55}, "amount is required"),
        (
            "BA-3",
            {**SALES, "funding_percent": "0"},
            "funding_percent 0 must be more than 0 and less than 100",
        ),
        ("BA-3", {**SALES, "funding_percent": "100"}, "funding_percent 100 must be more than 0"),
        ("BA-3", {**SALES, "amount": "10"}, "amount does not apply"),
        ("BA-3", {**SALES, "carry_percent": "100"}, "carry_percent 100 must be at least 0 and less than 100"),
        ("BA-3", {**SALES, "scale": [[1, 50, 44], [52, None, 40]]}, "must continue at 51 cards, not 52"),
        ("BA-3", {**SALES, "scale": [[1, "x", 44]]}, "scale band [1, 'x', 44] must be"),
        ("BA-4", {**SALES, "ba6_profile": "printed"}, "ba6_profile applies only to BA-6"),
        ("BA-4", {**SALES, "fixed_step": "operating_day"}, "fixed_step applies only to the Fijo tables"),
        ("BA-5", {**SALES, "missed_slot": "never"}, "missed_slot 'never' is not one of lapse, catch_up"),
        ("BA-8", {**SALES, "amount": "-5"}, "amount must be more than 0 €"),
        (
            "BA-14",
            {**SALES},
            "amount is required: the amount determined by regulation is not in the seed (OP-11)",
        ),
        ("BA-15", {**SALES, "amount": "1000", "ball_limit": 10}, "ball_limit 10 must be an extraction order"),
        ("BA-19", {"funding_percent": "1"}, "funding_percent does not apply: paid from the Bolsa Acumulada"),
        (
            "BA-19",
            {"extraction_order": 95},
            "extraction_order 95 must be an extraction order between 15 and 90",
        ),
        ("BA-20", {"authorisation_ref": ""}, "authorisation_ref must be a non-empty text"),
    ],
)
def test_bad_configuration_is_refused(program_type: str, params: dict[str, object], message: str) -> None:
    problems = validate_config(program_type, params)
    assert any(message in p for p in problems), problems


def test_make_program_lists_every_problem() -> None:
    with pytest.raises(ProgramError) as caught:
        make_program("BA-20", {"amount": "900", "colour": "magenta"}, program_id="", effective_from=JAN)
    assert len(caught.value.problems) == 3
    assert "over the maximum of €500.00" in str(caught.value)
    assert "program_id must not be empty" in caught.value.problems
    with pytest.raises(ValueError, match="aware datetime"):
        make_program("BA-3", SALES, program_id="x", effective_from=datetime(2025, 1, 1))  # noqa: DTZ001
    with pytest.raises(ValueError, match="no accumulated-prize regulation in force on 2010-01-01"):
        make_program("BA-3", SALES, program_id="x", effective_from=datetime(2010, 1, 1, tzinfo=MADRID))


def test_prima_levels_may_be_amended() -> None:
    # BA-G3: the levels are data; an authorised amendment can add one.
    params = {**SALES, "amount": "400", "prima_levels": ["30", "50", "100", "200", "300", "400"]}
    assert validate_config("BA-1", params) == []
    problems = validate_config("BA-1", {**params, "prima_levels": ["30", 12.5]})
    assert any(
        "prima_levels[1] must be a Decimal, an int or a decimal string, not float" in p for p in problems
    )
    assert any("amount €400.00 is not a Prima level (€30.00)" in p for p in problems)


# --- manager picks ------------------------------------------------------------------------------------------


def test_manager_picks_are_validated() -> None:
    colour = make_program("BA-20", {}, program_id="color", effective_from=JAN)
    empty = ProgramState()
    assert validate_pick(colour, empty, ManagerPick("color", amount=D(500), colour="blue")) == []
    over, unknown = validate_pick(colour, empty, ManagerPick("color", amount=D("500.50"), colour="teal"))
    assert "amount €500.50 is over the maximum of €500.00" in over
    assert "unknown colour 'teal'" in unknown
    (no_colour,) = validate_pick(colour, empty, ManagerPick("color", amount=D(100)))
    assert "the hall manager must announce the Color Prima" in no_colour
    rolling = ProgramState(pick=ManagerPick("color", amount=D(100), colour="red"))
    (busy,) = validate_pick(colour, rolling, ManagerPick("color", amount=D(100), colour="blue"))
    assert "already in play since an earlier game; it stays until awarded" in busy

    sp = make_program("BA-19", {}, program_id="sp", effective_from=JAN)
    (no_order,) = validate_pick(sp, empty, ManagerPick("sp", amount=D(300)))
    assert "the hall manager must announce the fixed extraction order" in no_order

    extra = make_program("BA-2", VALID[ProgramType.BA_2], program_id="extra", effective_from=JAN)
    (low,) = validate_pick(extra, empty, ManagerPick("extra", max_ball=49))
    assert low == f"BA-2 Bingo Extra 'extra': extraction order 49 is below the floor of 50 {cite('2º')}"
    (mid,) = validate_pick(extra, ProgramState(reached=True, steps=2), ManagerPick("extra", max_ball=60))
    assert "rises by one per game" in mid

    prima = make_program("BA-1", VALID[ProgramType.BA_1], program_id="prima", effective_from=JAN)
    (not_picked,) = validate_pick(prima, empty, ManagerPick("prima", amount=D(100)))
    assert "does not pick" in not_picked


# --- versions and schedules of a room -----------------------------------------------------------------------


def test_program_in_force_by_effective_date() -> None:
    v1 = make_program("BA-3", SALES, program_id="acum", effective_from=JAN)
    feb = datetime(2025, 2, 1, 6, tzinfo=MADRID)
    v2 = make_program(
        "BA-3", {**SALES, "funding_percent": "2"}, program_id="acum", effective_from=feb, version=2
    )
    assert program_in_force([v1, v2], datetime(2024, 12, 31, tzinfo=MADRID)) is None
    assert program_in_force([v1, v2], datetime(2025, 1, 31, 23, tzinfo=MADRID)) is v1
    assert program_in_force([v1, v2], feb) is v2
    other = make_program("BA-3", SALES, program_id="other", effective_from=JAN)
    with pytest.raises(ValueError, match="versions of several programs"):
        program_in_force([v1, other], feb)


def test_schedule_problems_of_a_room() -> None:
    a = make_program("BA-4", SALES, program_id="a", effective_from=JAN)
    b = make_program("BA-4", SALES, program_id="b", effective_from=JAN)
    c = make_program("BA-12", SALES, program_id="c", effective_from=JAN)
    (dup,) = schedule_problems([a, b])
    assert "two BA-4 programs" in dup
    assert "both claim the game after 00:00, 20:00" in dup
    assert schedule_problems([a, c]) == []
    assert len(schedule_problems([a, c], exclusive_slots=True)) == 1
    a2 = make_program("BA-4", SALES, program_id="a", effective_from=JAN, version=2)
    assert "'a': versions 1 and 2 take effect at the same instant" in schedule_problems([a, a2])
    later = make_program(
        "BA-4", SALES, program_id="a", effective_from=datetime(2025, 3, 1, tzinfo=MADRID), version=2
    )
    assert schedule_problems([a, later]) == []
    retyped = make_program(
        "BA-8", SALES, program_id="a", effective_from=datetime(2025, 3, 1, tzinfo=MADRID), version=2
    )
    assert "'a': version 2 changes the program type; activate a new program" in schedule_problems(
        [a, retyped]
    )


def test_contribution_from_sales() -> None:
    acum = make_program("BA-3", SALES, program_id="acum", effective_from=JAN)
    assert contribution(acum, D("1234.50")) == PrizeAmount(amount=D("18.51"), residue=D("0.0075"))
    sp = make_program("BA-19", {}, program_id="sp", effective_from=JAN)
    with pytest.raises(ProgramError, match="paid from the Bolsa Acumulada"):
        contribution(sp, D(100))


def test_types_as_data() -> None:
    families = {pt: info.family for pt, info in PROGRAM_TYPES.items()}
    assert families[ProgramType.BA_1] is Family.PRIMA
    assert [pt for pt, f in families.items() if f is Family.SCHEDULED] == [
        ProgramType(f"BA-{n}") for n in range(4, 14)
    ]
    assert [pt for pt, f in families.items() if f is Family.NEXT_GAME_PRIMA] == [
        ProgramType(f"BA-{n}") for n in range(14, 19)
    ]
    assert PROGRAM_TYPES[ProgramType.BA_19].label == "BA-19 Super Prima"
    assert PROGRAM_TYPES[ProgramType.BA_18].citation == f"{SEED} art. 147.3.c.18.º"
