"""The simulator (bingo.traditional.programs.simulate), its plot and `manage.py simulate_program`: worked
checks,
properties (every simulation balances; no prize outside its condition), the SVG and the command's --type
path."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET  # parses only the SVG this project renders
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from io import StringIO
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bingo.balls import DEFAULT_PALETTE, default_colours
from bingo.cards import CARDS_PER_STRIP, CardGrid, generate_series
from bingo.detect import completion, ordinal_map
from bingo.traditional.programs.plot import render_svg
from bingo.traditional.programs.regulation import HallCategory
from bingo.traditional.programs.rules import Family, Program, make_program
from bingo.traditional.programs.simulate import (
    DECK_SEED,
    PickPolicy,
    PickWhen,
    SalesProfile,
    SimulationError,
    SimulationReport,
    deck_for,
    simulate,
)
from halls import money
from halls.models import Room

D = Decimal
MADRID = ZoneInfo("Europe/Madrid")
JAN = datetime(2025, 1, 1, tzinfo=MADRID)
SALES: dict[str, object] = {"funding_percent": "10", "authorisation_ref": "ML-DGJ-2025/017"}
SVG = "{http://www.w3.org/2000/svg}"
COLOURS = default_colours()


def program(pt: str, params: dict[str, object] | None = None, **extra: object) -> Program:
    return make_program(pt, {**SALES, **(params or {}), **extra}, program_id=f"sim-{pt}", effective_from=JAN)


def small(**changes: object) -> SalesProfile:
    base: dict[str, object] = {"games_per_day": 12, "cards_per_game": 40, "cards_spread": 10}
    return SalesProfile(**{**base, **changes})  # type: ignore[arg-type]


_CARDS: dict[int, list[CardGrid]] = {}


def cards_of(report: SimulationReport) -> list[CardGrid]:
    """The deck rebuilt independently of the simulator, as bingo.cards CardGrids."""
    size = len(deck_for(report.profile))
    if size not in _CARDS:
        _CARDS[size] = generate_series(DECK_SEED, size // CARDS_PER_STRIP)
    return _CARDS[size]


def check_games(report: SimulationReport) -> None:
    """Each game's Bingo, winners and award, recomputed with bingo.detect, and each prize's condition."""
    cards = cards_of(report)
    for g in report.game_log:
        ordinals = ordinal_map(g.balls)
        serials = [(g.first_serial - 1 + i) % len(cards) + 1 for i in range(g.cards_sold)]
        done = {s: completion(cards[s - 1], ordinals).bingo_at for s in serials}
        bingo = min(at for at in done.values() if at is not None)
        assert g.bingo_ordinal == bingo
        assert g.winners == tuple(sorted(s for s, at in done.items() if at == bingo))
        assert g.ball_colour == COLOURS[str(g.balls[bingo - 1])]
        play = g.play
        meets = (
            play is not None
            and (play.max_ball is None or bingo <= play.max_ball)
            and (play.colour is None or play.colour == g.ball_colour)
        )
        assert g.won == meets
        assert (g.paid > 0) == g.won
    for a in report.awards:
        assert a.max_ball is None or a.bingo_ordinal <= a.max_ball
        assert a.colour is None or a.colour == a.ball_colour
        assert a.paid + a.remainder == a.prize
        assert a.paid + a.pool_after == a.pool_before


def check_balance(report: SimulationReport) -> None:
    assert report.total_funded == report.total_paid + report.pool_end
    assert report.balanced
    assert sum((a.paid for a in report.awards), D(0)) == report.total_paid
    assert sum((p.paid for p in report.series), D(0)) == report.total_paid
    assert sum((p.sales for p in report.series), D(0)) == report.total_sales
    assert report.series[-1].pool_end == report.pool_end
    assert sum(p.hits for p in report.series) == report.hits
    if report.game_log:
        assert sum((g.funded for g in report.game_log), D(0)) == report.total_funded


# --- worked checks -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "max_ball"), [(1, 44), (50, 44), (51, 43), (100, 43), (101, 42), (201, 40)]
)
def test_bingo_acumulado_max_ball_follows_the_cards_sold_scale(cards: int, max_ball: int) -> None:
    report = simulate(
        program("BA-3"), small(cards_per_game=cards, cards_spread=0), days=2, seed=7, record_games=True
    )
    assert report.games_in_play == report.games == 24
    assert {g.play.max_ball for g in report.game_log if g.play} == {max_ball}
    check_games(report)
    check_balance(report)


def test_bingo_acumulado_pays_the_pool_less_its_20_percent_carry() -> None:
    # A generous configured scale (Bingo by ball 70) so awards happen in a few days.
    acumulado = program("BA-3", scale=[[1, None, 70]])
    report = simulate(acumulado, small(), days=3, seed=3, record_games=True)
    assert report.hits > 0
    for a in report.awards:
        carry = a.pool_before * D("0.2")
        assert a.prize == a.pool_before - carry
        assert a.pool_after == carry + a.remainder
    check_games(report)
    check_balance(report)


def test_a_program_never_in_play_pays_nothing() -> None:
    # BA-12 needs 30 000 € in its pool: a small hall never gets there in ten days.
    report = simulate(program("BA-12"), small(), days=10, seed=1)
    assert report.games_in_play == 0
    assert report.hits == 0
    assert report.total_paid == 0
    assert report.pool_end == report.total_funded > 0
    assert report.average_prize is None
    assert report.days_to_trigger_mean is None
    assert [p.pool_end for p in report.series] == sorted(p.pool_end for p in report.series)
    check_balance(report)


def test_a_prima_never_pays_a_bingo_after_ball_48() -> None:
    # A Bingo within 48 balls is rare (about 1 % of games with 400 cards): 600 games give a few awards.
    prima = program("BA-1", amount="30")
    profile = small(games_per_day=40, cards_per_game=400, cards_spread=0)
    report = simulate(prima, profile, days=15, seed=11, record_games=True)
    assert report.hits > 0
    assert all(a.bingo_ordinal <= 48 and a.prize == 30 for a in report.awards)
    late = [g for g in report.game_log if g.play and g.bingo_ordinal > 48]
    assert len(late) > report.games / 2
    assert not any(g.won for g in late)
    assert all(g.won for g in report.game_log if g.play and g.bingo_ordinal <= 48)
    assert {g.play.max_ball for g in report.game_log if g.play} == {48}
    check_balance(report)


def test_bingo_extra_escalates_per_game_and_restarts_after_the_session() -> None:
    extra = program("BA-2", amount="30", extraction_order=50)
    profile = small(games_per_day=12, games_per_session=4)
    report = simulate(extra, profile, days=4, seed=5, record_games=True)
    assert report.games_in_play > 0
    previous = None
    for g in report.game_log:
        if g.play is not None:
            assert g.play.max_ball is not None
            if previous is not None and previous.play is not None and not previous.won:
                same_session = not previous.last_game_of_session and previous.day == g.day
                assert g.play.max_ball == ((previous.play.max_ball or 0) + 1 if same_session else 50)
            else:
                assert g.play.max_ball == 50
        previous = g
    assert [g.game for g in report.game_log if g.last_game_of_session][:3] == [4, 8, 12]
    check_games(report)
    check_balance(report)


def test_bingo_extra_trigger_order_picked_by_the_manager() -> None:
    extra = program("BA-2", amount="30", extraction_order=50)
    report = simulate(extra, small(), days=3, seed=2, pick_policy=PickPolicy(max_ball=60), record_games=True)
    orders = [g.play.max_ball for g in report.game_log if g.play and g.play.step == 0]
    assert orders
    assert set(orders) == {60}
    check_games(report)
    with pytest.raises(SimulationError, match="below the floor of 50"):
        simulate(extra, small(), days=1, seed=2, pick_policy=PickPolicy(max_ball=45))


def test_super_prima_is_picked_when_the_bolsa_can_pay_and_climbs_one_ball_per_game() -> None:
    super_prima = make_program(
        "BA-19", {"amount": "40", "extraction_order": 40}, program_id="sp", effective_from=JAN
    )
    report = simulate(super_prima, small(), days=4, seed=9, bolsa_percent=D("5"), record_games=True)
    assert report.from_bolsa
    assert report.funding_percent == 5
    assert report.games_in_play > 0
    first = next(g for g in report.game_log if g.play)
    assert first.pool >= 40
    assert first.play is not None
    assert first.play.max_ball == 40
    for a, b in zip(report.game_log, report.game_log[1:], strict=False):
        if a.play and b.play and not a.won:
            assert b.play.max_ball == min(90, (a.play.max_ball or 0) + 1)
    assert all(a.prize == 40 for a in report.awards)
    check_games(report)
    check_balance(report)


def test_super_prima_picked_only_at_the_start_of_a_session() -> None:
    super_prima = make_program("BA-19", {}, program_id="sp", effective_from=JAN)
    policy = PickPolicy(when=PickWhen.SESSION_START, amount=D("20"), max_ball=45)
    profile = small(games_per_session=4)
    report = simulate(
        super_prima, profile, days=4, seed=9, bolsa_percent=D("5"), pick_policy=policy, record_games=True
    )
    log = report.game_log
    for i, g in enumerate(log):
        starts_play = g.play is not None and (i == 0 or log[i - 1].play is None or log[i - 1].won)
        if starts_play:
            assert (g.game - 1) % 4 == 0
    check_games(report)
    check_balance(report)


def test_colour_prima_pays_only_on_the_announced_colour() -> None:
    colour = make_program("BA-20", {"amount": "25"}, program_id="cp", effective_from=JAN)
    report = simulate(colour, small(), days=5, seed=4, bolsa_percent=D("5"), record_games=True)
    announced = {g.play.colour for g in report.game_log if g.play}
    assert announced <= set(DEFAULT_PALETTE)
    assert report.hits > 0
    assert all(a.ball_colour == a.colour for a in report.awards)
    check_games(report)
    check_balance(report)
    with pytest.raises(SimulationError, match="over the maximum of €500"):
        simulate(
            colour, small(), days=1, seed=4, bolsa_percent=D("5"), pick_policy=PickPolicy(amount=D("600"))
        )


def test_scheduled_bingo_extra_is_in_play_in_the_first_game_after_20_00() -> None:
    extra = program("BA-12", amount="50")
    profile = small(games_per_day=10, first_game=time(18, 30), minutes_per_game=20)
    report = simulate(extra, profile, days=5, seed=6, record_games=True)
    in_play = [g for g in report.game_log if g.play]
    assert len(in_play) == report.games_in_play > 0
    for g in in_play:
        assert g.play is not None
        assert g.play.slot == time(20, 0)
        local = g.start.astimezone(MADRID)
        assert local.time() >= time(20, 0)
        assert (local - timedelta(minutes=20)).time() < time(20, 0)
    assert len({g.day for g in in_play}) == len(in_play)  # once a day
    check_games(report)
    check_balance(report)


def test_days_and_games_to_trigger_are_measured_from_activation_then_from_each_award() -> None:
    report = simulate(program("BA-3", scale=[[1, None, 60]]), small(cards_per_game=60), days=6, seed=11)
    assert report.hits >= 2
    first, second = report.awards[0], report.awards[1]
    start = report.series[0].date
    activation = datetime.combine(start, report.profile.first_game, tzinfo=MADRID)
    assert first.days_since == pytest.approx((first.start - activation) / timedelta(days=1))
    assert first.games_since == first.game_number
    assert second.games_since == second.game_number - first.game_number
    assert report.games_to_trigger_max == max(a.games_since for a in report.awards)
    assert sum(a.games_since for a in report.awards) == report.awards[-1].game_number
    assert report.average_prize == (report.total_paid / report.hits).quantize(D("0.01"))
    assert report.hits_per_day == report.hits / 6


def test_the_same_seed_gives_the_same_games_to_every_program() -> None:
    profile = small()
    a = simulate(program("BA-3"), profile, days=2, seed=42, record_games=True)
    b = simulate(program("BA-1", amount="50"), profile, days=2, seed=42, record_games=True)
    again = simulate(program("BA-3"), profile, days=2, seed=42, record_games=True)
    assert [(g.cards_sold, g.balls) for g in a.game_log] == [(g.cards_sold, g.balls) for g in b.game_log]
    assert a.to_dict() == again.to_dict()
    assert simulate(program("BA-3"), profile, days=2, seed=43).total_sales != a.total_sales


def test_bad_inputs_are_refused_with_every_problem() -> None:
    with pytest.raises(SimulationError, match="Bolsa Acumulada"):
        simulate(make_program("BA-19", {}, program_id="sp", effective_from=JAN), small(), days=1, seed=1)
    with pytest.raises(SimulationError, match="a Bolsa percentage does not apply"):
        simulate(program("BA-3"), small(), days=1, seed=1, bolsa_percent=D("1"))
    with pytest.raises(SimulationError, match="picks nothing"):
        simulate(program("BA-3"), small(), days=1, seed=1, pick_policy=PickPolicy(max_ball=50))
    orange = make_program("BA-20", {"amount": "25", "colour": "orange"}, program_id="cp", effective_from=JAN)
    with pytest.raises(SimulationError, match="could never be won"):
        simulate(orange, small(), days=1, seed=1, bolsa_percent=D("5"))
    with pytest.raises(SimulationError, match="days must be"):
        simulate(program("BA-3"), small(), days=0, seed=1)
    with pytest.raises(SimulationError, match="run into the next day") as caught:
        SalesProfile(games_per_day=200, minutes_per_game=8)
    assert len(caught.value.problems) == 1
    with pytest.raises(SimulationError) as caught:
        SalesProfile(
            cards_per_game=0, card_price=D(0), sessions_per_day=2, games_per_session=5, time_zone="Mars/Base"
        )
    assert len(caught.value.problems) == 4


def test_sessions_split_the_day_and_breaks_shift_the_games() -> None:
    profile = SalesProfile(games_per_day=10, sessions_per_day=3, session_break_minutes=30, minutes_per_game=5)
    assert profile.session_sizes() == (4, 3, 3)
    assert profile.offsets()[4] == timedelta(minutes=4 * 5 + 30)
    assert SalesProfile(games_per_day=10, games_per_session=4).session_sizes() == (4, 4, 2)
    assert SalesProfile(hall_category="2").hall_category is HallCategory.SECOND  # type: ignore[arg-type]


def test_a_year_of_30_games_a_day_runs_in_a_few_seconds() -> None:
    import time as timer

    began = timer.process_time()  # CPU time: other processes on the machine do not count
    report = simulate(program("BA-1", amount="100"), SalesProfile(), days=365, seed=1)
    assert report.games == 365 * 30
    assert timer.process_time() - began < 10  # measured about 1 s (2 s for the scheduled families)
    check_balance(report)


# --- properties --------------------------------------------------------------------------------------------

PROGRAMS = [
    program("BA-1", amount="30"),
    program("BA-2", amount="30", extraction_order=52),
    program("BA-3", scale=[[1, 50, 60], [51, None, 55]]),
    program("BA-7", amount="20"),
    program("BA-12", amount="20"),
    program("BA-15", amount="40", ball_limit=55),
    make_program("BA-19", {"amount": "30", "extraction_order": 45}, program_id="sp", effective_from=JAN),
    make_program("BA-20", {"amount": "30"}, program_id="cp", effective_from=JAN),
]

profiles = st.builds(
    SalesProfile,
    games_per_day=st.integers(1, 8),
    cards_per_game=st.integers(1, 60),
    cards_spread=st.integers(0, 20),
    card_price=st.sampled_from([D("0.50"), D("1"), D("1.50"), D("2.35"), D("3")]),
    first_game=st.sampled_from([time(0, 30), time(10), time(15, 45), time(19, 50), time(23, 10)]),
    minutes_per_game=st.integers(5, 150),
    games_per_session=st.none() | st.integers(1, 4),
    hall_category=st.sampled_from(list(HallCategory)),
    time_zone=st.sampled_from(["Europe/Madrid", "Africa/Ceuta", "Atlantic/Canary"]),
    start_date=st.sampled_from([JAN.date(), date(2025, 3, 29), date(2025, 10, 25)]),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prog=st.sampled_from(PROGRAMS), profile=profiles, days=st.integers(1, 6), seed=st.integers(0, 2**32))
def test_every_simulation_balances_and_pays_only_within_its_condition(
    prog: Program, profile: SalesProfile, days: int, seed: int
) -> None:
    bolsa = D("7.5") if prog.family in (Family.SUPER_PRIMA, Family.COLOUR_PRIMA) else None
    report = simulate(prog, profile, days=days, seed=seed, bolsa_percent=bolsa, record_games=True)
    assert report.games == days * profile.games_per_day == len(report.game_log)
    assert report.games_in_play == sum(1 for g in report.game_log if g.play)
    check_balance(report)
    check_games(report)
    for g in report.game_log:
        assert profile.min_cards <= g.cards_sold <= profile.max_cards
        assert g.sales == profile.card_price * g.cards_sold
        if g.play is not None and prog.family is Family.PRIMA:
            assert g.play.max_ball == 48


# --- the plot ----------------------------------------------------------------------------------------------


def test_the_svg_parses_and_shows_the_pool_line_and_a_marker_per_hit() -> None:
    report = simulate(program("BA-3", scale=[[1, None, 60]]), small(cards_per_game=60), days=8, seed=11)
    assert report.hits > 0
    svg = render_svg(report)
    root = ET.fromstring(  # noqa: S314
        svg
    )
    assert root.tag == f"{SVG}svg"
    lines = [e for e in root.iter(f"{SVG}polyline") if e.get("class") == "pool"]
    assert len(lines) == 1
    assert len(lines[0].get("points", "").split()) == report.days + 1
    hits = [e for e in root.iter(f"{SVG}circle") if e.get("class") == "hit"]
    assert len(hits) == report.hits
    texts = [e.text or "" for e in root.iter(f"{SVG}text")]
    assert any(report.program.label in t for t in texts)
    assert "Days" in texts
    assert any(t.startswith("€") for t in texts)  # English by default: "€1,000.00"


def test_the_svg_says_its_amounts_and_words_as_the_caller_asks() -> None:
    """The edge passes the active language's formatter and gettext: Spanish axis amounts "1.000,00 €"."""
    report = simulate(program("BA-3", scale=[[1, None, 60]]), small(cards_per_game=60), days=8, seed=11)
    spanish = {"Days": "Días", "pool at end of day": "bote al cierre"}
    svg = render_svg(
        report, amount=lambda v: money.for_person(v, "es"), translate=lambda m: spanish.get(m, m)
    )
    root = ET.fromstring(svg)  # noqa: S314
    axis = [e.text or "" for e in root.iter(f"{SVG}text") if e.get("text-anchor") == "end"]
    assert axis[0] == "0,00 €"
    assert all(re.fullmatch(r"\d{1,3}(\.\d{3})*,\d\d €", t) for t in axis), axis
    texts = [e.text or "" for e in root.iter(f"{SVG}text")]
    assert "Días" in texts and "bote al cierre" in texts and "Days" not in texts
    assert not [t for t in texts if t.startswith("€")]
    # What a screen reader says is the chart's own title and summary, amounts as the reader writes them; the
    # simulator's English report stays out of it.
    desc = root.find(f"{SVG}desc")
    assert desc is not None and desc.text
    assert "€" in desc.text and "sales returned" not in desc.text and "paid €" not in desc.text


def test_the_svg_counts_with_ngettext_and_writes_the_share_with_the_callers_number() -> None:
    """Issue 26: "1 premio", not "1 premios"; the share of sales as the reader writes numbers ("0,04")."""
    report = simulate(program("BA-3", scale=[[1, None, 60]]), small(cards_per_game=60), days=8, seed=11)
    asked: list[tuple[str, int]] = []

    def spanish_plural(singular: str, plural: str, count: int) -> str:
        asked.append((singular, count))
        words = {"%(days)s day": "%(days)s día", "%(games)s game": "%(games)s partida"}
        words |= {"%(hits)s hit": "%(hits)s premio"}
        one = words.get(singular, singular)
        return one if count == 1 else one + "s"

    svg = render_svg(report, ngettext=spanish_plural, number=lambda v: f"{v:.2f}".replace(".", ","))
    assert ("%(hits)s hit", report.hits) in asked and ("%(days)s day", 8) in asked
    share = f"{100 * report.returned_share:.2f}".replace(".", ",")
    hits = "1 premio ·" if report.hits == 1 else f"{report.hits} premios ·"
    assert f"8 días · {report.games} partidas · {hits}" in svg and f"({share} % of sales)" in svg
    winners = [a.winners for a in report.awards]
    assert len(asked) == 3 + len(winners)
    # English by default, singular and plural: "8 days", "to 1 card".
    english = render_svg(report)
    assert f"8 days · {report.games} games · " in english
    assert f"({100 * report.returned_share:.2f} % of sales)" in english
    if 1 in winners:
        assert " to 1 card, Bingo at ball " in english
    assert "card(s)" not in english


def test_the_svg_of_a_program_never_won_has_no_marker() -> None:
    root = ET.fromstring(  # noqa: S314
        render_svg(simulate(program("BA-12"), small(), days=3, seed=1))
    )
    assert not [e for e in root.iter(f"{SVG}circle") if e.get("class") == "hit"]
    assert [e for e in root.iter(f"{SVG}polyline") if e.get("class") == "pool"]


# --- the management command (--type: no database) ----------------------------------------------------------

PRIMA_PARAMS = json.dumps({"funding_percent": 10, "authorisation_ref": "ML-1", "amount": "30"})


def run(*args: str) -> str:
    out = StringIO()
    call_command("simulate_program", *args, stdout=out)
    return out.getvalue()


def test_command_prints_a_readable_report_and_writes_the_plot(tmp_path: Path) -> None:
    svg = tmp_path / "prima.svg"
    text = run(
        "--type", "BA-1", "--params", PRIMA_PARAMS, "--games-per-day", "10", "--cards", "60",
        "--cards-spread", "10", "--price", "1.00", "--days", "7", "--seed", "1", "--svg", str(svg),
    )  # fmt: skip
    assert "Simulation of BA-1 Prima" in text
    assert "Hits" in text
    assert "funded = paid + pool at the end" in text
    assert "Simulated in" in text
    assert (
        ET.fromstring(  # noqa: S314
            svg.read_text(encoding="utf-8")
        ).tag
        == f"{SVG}svg"
    )


def test_command_json_matches_the_simulation() -> None:
    data = json.loads(
        run(
            "--type",
            "BA-1",
            "--params",
            PRIMA_PARAMS,
            "--games-per-day",
            "10",
            "--cards",
            "60",
            "--days",
            "5",
            "--json",
        )
    )
    profile = SalesProfile(games_per_day=10, cards_per_game=60)
    report = simulate(program("BA-1", amount="30", authorisation_ref="ML-1"), profile, days=5, seed=1)
    assert data["balanced"] is True
    assert data["hits"] == report.hits
    assert D(data["total_paid"]) == report.total_paid
    assert D(data["total_funded"]) == D(data["total_paid"]) + D(data["pool_end"])
    assert len(data["series"]) == 5


def test_command_bolsa_program_needs_the_bolsa_percent() -> None:
    with pytest.raises(CommandError, match="Bolsa"):
        run("--type", "BA-19", "--params", '{"amount": "30", "extraction_order": 45}', "--days", "2")
    text = run(
        "--type", "BA-19", "--params", '{"amount": "30", "extraction_order": 45}', "--days", "2",
        "--bolsa-percent", "5", "--games-per-day", "10",
    )  # fmt: skip
    assert "Bolsa Acumulada" in text


def test_command_refuses_bad_parameters_clearly() -> None:
    with pytest.raises(CommandError, match="below the floor of 50"):
        run(
            "--type",
            "BA-2",
            "--params",
            '{"funding_percent": 1, "authorisation_ref": "X", "amount": "500", "extraction_order": 40}',
        )
    with pytest.raises(CommandError, match="not JSON"):
        run("--type", "BA-3", "--params", "{nope")
    with pytest.raises(CommandError, match="run into the next day"):
        run(
            "--type",
            "BA-3",
            "--params",
            '{"funding_percent": 1, "authorisation_ref": "X"}',
            "--games-per-day",
            "300",
        )


# --- the management command (--program: a configured program's version in force) ---------------------------


def test_command_simulates_a_configured_programs_version_in_force(room: Room, operator: User) -> None:
    from bingo.traditional.services.programs import activate_program, change_program

    configured = activate_program(
        room=room,
        code="prima-30",
        program_type="BA-1",
        params={"funding_percent": "10", "authorisation_ref": "ML-1", "amount": "30"},
        actor=operator,
    )
    change_program(
        program=configured,
        params={"funding_percent": "12", "authorisation_ref": "ML-2", "amount": "50"},
        actor=operator,
    )
    data = json.loads(run("--program", str(configured.pk), "--days", "2", "--games-per-day", "10", "--json"))
    assert data["program"]["type"] == "BA-1"
    assert data["program"]["version"] == 2
    assert data["program"]["funding_percent"] == "12"
    assert data["profile"]["hall_category"] == room.venue.hall_category
    assert data["profile"]["time_zone"] == room.venue.time_zone
    assert data["balanced"] is True


def test_command_takes_the_rooms_bolsa_percent_for_a_super_prima(room: Room, operator: User) -> None:
    from bingo.traditional.services.programs import activate_program, open_bolsa

    open_bolsa(room=room, funding_percent=D("4"), authorisation_ref="ML-B", actor=operator)
    configured = activate_program(
        room=room,
        code="super",
        program_type="BA-19",
        params={"amount": "30", "extraction_order": 45},
        actor=operator,
    )
    text = run("--program", str(configured.pk), "--days", "2", "--games-per-day", "10")
    assert "4.00 % of each game's sales into the room's Bolsa Acumulada" in text
    with pytest.raises(CommandError, match="no prize program"):
        run("--program", str(configured.pk + 1000), "--days", "1")
