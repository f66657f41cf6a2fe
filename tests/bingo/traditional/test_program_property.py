"""Property test on PostgreSQL: random sequences of games (cards sold, the ball and colour of the Bingo,
co-winners, manager picks, voids, session ends, the clock between games) through the real game flow,
with a Prima, a Bingo Extra, a Bingo Acumulado, a Prima Especial, a scheduled Bingo Extra and the
Bolsa Acumulada's Super and Colour Primas running at once.

After every game: every pool balances exactly (jackpots.services.reports.balance, the engine identity);
each game's funding is exactly the rules' deduction; no program pays outside its condition (a paid program
was in play and its Bingo came by its max ball, with its colour); every prize is shared to the cent with
its remainder recorded and left in the pool; and each program's state runs on from game to game.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bingo.traditional.models import (
    Ball,
    BallSet,
    Game,
    GameProgram,
    GameState,
    PrizeProgram,
    PrizeResult,
    RoomBolsa,
)
from bingo.traditional.programs.rules import contribution, evaluate
from bingo.traditional.services import games
from bingo.traditional.services import programs as svc
from bingo.traditional.services import series as series_services
from bingo.traditional.services.programs import clock as program_clock
from bingo.traditional.services.programs.codec import in_play_of, program_of
from halls.errors import Conflict, InvalidInput
from halls.models import HallCategory, Jurisdiction, Role, Room, StaffRole, Venue
from halls.services import sessions
from jackpots.models import Pool, PoolSettlement
from tests.bingo.traditional.program_flow import ALL_BALLS, SALES, Clock, Hall, assert_balanced, local, paid
from tests.cashier_support import on_shift

_runs = itertools.count(1)

PROGRAMS: dict[str, tuple[str, dict[str, object]]] = {
    "prima": ("BA-1", {**SALES, "funding_percent": "50", "amount": "30"}),
    "extra": ("BA-2", {**SALES, "amount": "5", "extraction_order": 50}),
    "acumulado": ("BA-3", {**SALES, "funding_percent": "7.33"}),
    "especial": ("BA-14", {**SALES, "funding_percent": "20", "amount": "10", "ball_limit": 40}),
    "extra-12/2": ("BA-8", {**SALES, "funding_percent": "5", "amount": "3"}),
    "super": ("BA-19", {}),
    "color": ("BA-20", {}),
}

games_st = st.lists(
    st.fixed_dictionaries(
        {
            "cards": st.integers(1, 60),
            "at": st.integers(15, 40),
            "winners": st.integers(1, 3),
            "colour": st.sampled_from([None, "red", "green", "purple"]),
            "end": st.sampled_from(["bingo", "bingo", "bingo", "void", "session"]),
            "gap_minutes": st.integers(5, 300),
            "extra_order": st.none() | st.integers(50, 58),
            "super_pick": st.none() | st.tuples(st.integers(1, 1500), st.integers(30, 60)),
            "colour_pick": st.none()
            | st.tuples(st.integers(1, 900), st.sampled_from(["red", "green", "purple"])),
        }
    ),
    min_size=2,
    max_size=4,
)


@dataclass(frozen=True)
class Staff:
    venue: Venue
    operator: User
    caller: User
    cashier: User
    ball_set: BallSet


def _staff() -> Staff:
    """One venue and its staff for every example (each example plays in a room of its own)."""
    venue = Venue.objects.create(
        name="Bingo Propiedad",
        licence_number="ML-PROP-1",
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.SECOND,
        time_zone="Africa/Ceuta",
    )
    users = {}
    for role in (Role.OPERATOR, Role.CALLER, Role.CASHIER):
        users[role] = User.objects.create(username=f"prop-{role}")  # no password: hashing is slow
        StaffRole.objects.create(user=users[role], venue=venue, role=role)
    on_shift(users[Role.CASHIER], venue)  # card sales are cash into the cashier's drawer
    ball_set = series_services.create_ball_set(venue=venue, name="Juego", actor=users[Role.OPERATOR])
    return Staff(venue, users[Role.OPERATOR], users[Role.CALLER], users[Role.CASHIER], ball_set)


def _hall(staff: Staff) -> tuple[Hall, dict[str, PrizeProgram]]:
    room = Room.objects.create(venue=staff.venue, name=f"Sala {next(_runs)}")
    sessions.open_session(
        room=room,
        actor=staff.caller,
        blower_ok=True,
        reserve_ok=True,
        reader_ok=True,
        inspection_balls=ALL_BALLS,
    )
    hall = Hall(
        room=room,
        caller=staff.caller,
        cashier=staff.cashier,
        operator=staff.operator,
        ball_set=staff.ball_set,
    )
    svc.open_bolsa(room=room, funding_percent=Decimal("12"), authorisation_ref="ML-B-1", actor=staff.operator)
    programs = {
        code: svc.activate_program(room=room, code=code, program_type=pt, params=params, actor=staff.operator)
        for code, (pt, params) in PROGRAMS.items()
    }
    return hall, programs


def _pick(game: Game, program: PrizeProgram, actor: Any, **pick: Any) -> None:
    # Refused when not allowed now (rolling, not reached, the Bolsa short): the random plan goes on.
    with contextlib.suppress(InvalidInput):
        svc.set_manager_pick(game=game, program=program, actor=actor, **pick)


def _play(hall: Hall, programs: dict[str, PrizeProgram], step: dict[str, Any]) -> None:
    game = hall.open_game(step["cards"])
    if step["extra_order"] is not None:
        _pick(game, programs["extra"], hall.operator, max_ball=step["extra_order"])
    if step["super_pick"] is not None:
        cents, ball = step["super_pick"]
        _pick(game, programs["super"], hall.operator, amount=Decimal(cents) / 100, max_ball=ball)
    if step["colour_pick"] is not None:
        cents, colour = step["colour_pick"]
        _pick(game, programs["color"], hall.operator, amount=Decimal(cents) / 100, colour=colour)
    refused: Conflict | None = None
    try:
        game = hall.close(game)
    except Conflict as exc:  # e.g. both Bolsa picks together exceed the Bolsa
        refused = exc
    if refused is not None:  # refused with the programs named, and nothing written
        assert refused.code == "program_refused"
        assert not GameProgram.objects.filter(game=game).exists()
        games.void_game(game=game, actor=hall.caller, reason="programs refused")
        return
    if step["end"] == "void":
        games.void_game(game=game, actor=hall.caller, reason="test")
        return
    winners = min(step["winners"], step["cards"])
    hall.bingo(game, at=step["at"], winners=winners, colour=step["colour"], loose=True)
    if step["end"] == "session":
        hall.new_session()


def _check_game(game: Game) -> None:
    """Funding, conditions and shares of every program in one game."""
    bingo = PrizeResult.objects.filter(game=game, kind="bingo").first()
    for gp in GameProgram.objects.filter(game=game).select_related("program", "version"):
        pure = program_of(gp.program, gp.version)
        if pure.funding_percent is not None:
            exact = contribution(pure, game.sales_total)
            assert gp.funding == exact.amount + exact.residue
        if not gp.in_play:
            assert gp.won is None
            assert not gp.awards.exists()
            continue
        if gp.won is None:
            assert bingo is None  # only a game without a confirmed Bingo leaves a program undecided
            continue
        assert bingo is not None
        assert gp.bingo_ordinal == bingo.ordinal
        number = Ball.objects.get(game=game, ordinal=gp.bingo_ordinal).number
        assert game.ball_set is not None
        assert gp.bingo_colour == game.ball_set.colour_of(number)
        # The condition, read from the stored terms (independently of rules.evaluate) and by evaluate.
        meets = (gp.max_ball is None or gp.bingo_ordinal <= gp.max_ball) and (
            not gp.colour or gp.bingo_colour == gp.colour
        )
        assert gp.won is meets
        assert evaluate(in_play_of(gp), gp.bingo_ordinal, gp.bingo_colour or None) is meets
        awards = list(gp.awards.all())
        if not gp.won:
            assert not awards and gp.settlement_id is None
            continue
        assert gp.prize is not None and gp.share is not None and gp.remainder is not None
        assert len(awards) == gp.winners == bingo.winners
        assert all(a.amount == gp.share for a in awards)
        assert gp.share * gp.winners + gp.remainder == gp.prize
        assert 0 <= gp.remainder < Decimal("0.01") * gp.winners
        if gp.share:
            award = paid(gp)
            assert (award.amount, award.from_operator) == (gp.share * gp.winners, Decimal(0))


def _check_states(programs: dict[str, PrizeProgram]) -> None:
    """Each program's state before a game is its state after the previous closed game."""
    for program in programs.values():
        previous = None
        for gp in GameProgram.objects.filter(program=program).select_related("game").order_by("start", "pk"):
            if previous is not None:
                assert gp.state_before == previous
            if gp.game.state == GameState.CLOSED:
                assert gp.state_after is not None
                previous = gp.state_after
            else:
                assert gp.state_after is None  # a voided game does not advance the programs


@contextlib.contextmanager
def _rolled_back() -> Iterator[None]:
    """One example's games, rolled back after. Marked as a test case's transaction: each service call
    inside is its own transaction, as in production, for the lock order's check (halls.locks)."""
    atomic = transaction.atomic()
    atomic._from_testcase = True  # type: ignore[attr-defined]  # Django's mark of a test case's atomics
    with atomic:
        yield
        transaction.set_rollback(True)


@pytest.mark.django_db
def test_random_games_keep_every_pool_balanced_and_pay_only_within_the_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock(local(2025, 3, 29, 19, 0))  # runs across the spring-forward night
    monkeypatch.setattr(program_clock, "now", clock.now)
    staff = _staff()

    @settings(
        max_examples=15,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(plan=games_st)
    def run(plan: list[dict[str, Any]]) -> None:
        with _rolled_back():
            hall, programs = _hall(staff)
            bolsa = RoomBolsa.objects.get(room=hall.room)
            pools = {p.pool_id for p in programs.values()} | {bolsa.pool_id}
            for step in plan:
                clock.advance(minutes=step["gap_minutes"])
                _play(hall, programs, step)
                game = Game.objects.filter(room=hall.room).order_by("-pk").first()
                assert game is not None
                _check_game(game)
                for pool_id in pools:
                    assert_balanced(pool_id)
            _check_states(programs)
            settled = PoolSettlement.objects.filter(pool__in=Pool.objects.filter(pk__in=pools)).count()
            assert (
                settled
                == GameProgram.objects.filter(won=True, share__gt=0, program__in=programs.values()).count()
            )

    clock.set(local(2025, 3, 29, 19, 0))
    run()
