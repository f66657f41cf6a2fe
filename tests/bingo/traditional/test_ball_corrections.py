"""Correcting a mis-keyed ball: the number changes, the ordinal and time stay, the old number is kept with
who, when and why, and what depends on the balls (completions, unclaimed winners, unpaid claims) is computed
again. Every refusal writes nothing.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bingo.traditional.models import Ball, BallCorrection, Card, Claim, Game, GameState
from bingo.traditional.services import claims, corrections, detection, draw, games, readmodels, sales
from bingo.traditional.services import series as series_services
from bingo.traditional.services.readmodels import game_recall
from halls.errors import Conflict, DomainError, InvalidInput, NotFound
from halls.models import AuditEntry, StreamCursor
from tests.bingo.traditional.game_support import expected_completions as expected
from tests.bingo.traditional.game_support import fresh_process, grid, no_celery  # noqa: F401 - autouse fixtures

REASON = "Mis-keyed: the reader read 54"
_codes = itertools.count(1)


def recorded(game: Game) -> set[tuple[str, int, int]]:
    return detection.recorded_completions(game)


def drawing(game: Game, series: Any, caller: Any, cashier: Any) -> Game:
    games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=series, first=1, last=30, actor=cashier)
    games.close_sales(game=game, actor=caller)
    return games.start_draw(game=game, actor=caller)


def free_number(game: Game, *avoid: int) -> int:
    """A number not drawn in the game and not in `avoid`."""
    drawn = set(Ball.objects.filter(game=game).values_list("number", flat=True))
    return next(n for n in range(90, 0, -1) if n not in drawn and n not in avoid)


def mis_keyed_line(game: Game, series: Any, caller: Any) -> tuple[list[int], int]:
    """Card 7's top row entered with its last number mis-keyed: (the row, the wrong number)."""
    row = sorted(n for n in grid(series, 7).rows[0] if n)
    for number in row[:-1]:
        draw.enter_ball(game=game, number=number, actor=caller)
    wrong = free_number(game, *grid(series, 7).numbers)
    draw.enter_ball(game=game, number=wrong, actor=caller)
    return row, wrong


def state(game: Game) -> tuple[Any, ...]:
    """Everything a refused correction must leave as it was."""
    game.refresh_from_db()
    return (
        list(Ball.objects.filter(game=game).order_by("ordinal").values_list("ordinal", "number", "drawn_at")),
        BallCorrection.objects.count(),
        recorded(game),
        AuditEntry.objects.count(),
        list(StreamCursor.objects.order_by("stream").values_list("stream", "seq")),
        list(Claim.objects.filter(game=game).order_by("pk").values_list("valid", "reason")),
        (game.balls_corrected, game.claim_window, game.line_won_at, game.state),
    )


def test_a_corrected_ball_keeps_its_place_and_recomputes_the_winners(
    manual_game, card_series, caller, cashier
):
    game = drawing(manual_game, card_series, caller, cashier)
    row, wrong = mis_keyed_line(game, card_series, caller)
    ordinal = len(row)
    before = Ball.objects.get(game=game, ordinal=ordinal)
    assert readmodels.unclaimed_winners(game)["line"] == []

    correction = corrections.correct_ball(
        game=game, ordinal=ordinal, number=row[-1], reason=f"  {REASON} ", actor=caller
    )

    ball = Ball.objects.get(game=game, ordinal=ordinal)
    assert (ball.pk, ball.number, ball.drawn_at, ball.entered_by) == (
        before.pk,
        row[-1],
        before.drawn_at,
        before.entered_by,
    )
    assert (correction.ordinal, correction.old_number, correction.new_number, correction.reason) == (
        ordinal,
        wrong,
        row[-1],
        REASON,
    )
    assert correction.corrected_by == caller and correction.ball == ball
    game.refresh_from_db()
    assert game.balls_corrected == 1 and game.balls_drawn == ordinal
    # Completions equal the pure detector on the corrected balls; card 7 is now an unclaimed line.
    assert recorded(game) == expected(game)
    card7 = Card.objects.get(series=card_series, serial=7).pk
    assert ("line", card7, ordinal) in recorded(game)
    assert {"series": "A", "serial": 7, "since_ball": ordinal} in readmodels.unclaimed_winners(game)["line"]
    # The audit chain keeps who, when, why, the old and the new number.
    entry = AuditEntry.objects.filter(action="ball.corrected").get()
    assert entry.actor_label == "caller"
    assert {k: entry.data[k] for k in ("ordinal", "old", "ball", "reason")} == {
        "ordinal": ordinal,
        "old": wrong,
        "ball": row[-1],
        "reason": REASON,
    }
    # The ball as first entered stays in the chain too.
    drawn = [e.data["ball"] for e in AuditEntry.objects.filter(action="ball.drawn").order_by("pk")]
    assert drawn[-1] == wrong
    # The recall lists the correction, and the ball shows the number it was entered as.
    recall = game_recall(game)
    assert recall["balls"][ordinal - 1]["ball"] == row[-1]
    assert recall["balls"][ordinal - 1]["corrected_from"] == wrong
    assert recall["balls"][0]["corrected_from"] is None
    [listed] = recall["ball_corrections"]
    assert (listed["ordinal"], listed["old"], listed["new"], listed["reason"], listed["corrected_by"]) == (
        ordinal,
        wrong,
        row[-1],
        REASON,
        "caller",
    )
    # The claim now holds.
    claim = claims.file_claim(game=game, kind="line", series_code="A", serial=7, actor=caller)
    assert claim.valid, claim.reason


def test_a_correction_can_undo_a_completion(manual_game, card_series, caller, cashier):
    game = drawing(manual_game, card_series, caller, cashier)
    row = sorted(n for n in grid(card_series, 7).rows[0] if n)
    for number in row:
        draw.enter_ball(game=game, number=number, actor=caller)
    card7 = Card.objects.get(series=card_series, serial=7).pk
    assert ("line", card7, len(row)) in recorded(game)
    corrections.correct_ball(
        game=game,
        ordinal=2,
        number=free_number(game, *grid(card_series, 7).numbers),
        reason=REASON,
        actor=caller,
    )
    assert recorded(game) == expected(game)
    assert not any(card == card7 for _kind, card, _at in recorded(game))


def refusal_cases() -> list[tuple[str, dict[str, Any], type[DomainError], str]]:
    return [
        ("low", {"number": 0}, InvalidInput, "ball_out_of_range"),
        ("high", {"number": 91}, InvalidInput, "ball_out_of_range"),
        ("blank reason", {"reason": "   "}, InvalidInput, "reason_required"),
        ("same", {"number": "same"}, InvalidInput, "same_number"),
        ("drawn", {"number": "drawn"}, Conflict, "ball_already_drawn"),
        ("no such ball", {"ordinal": 40}, NotFound, "unknown_ball"),
    ]


@pytest.mark.parametrize(("label", "change", "error", "code"), refusal_cases(), ids=lambda v: str(v))
def test_a_refused_correction_writes_nothing(
    manual_game, card_series, caller, cashier, label, change, error, code
):
    game = drawing(manual_game, card_series, caller, cashier)
    for number in (11, 22, 33):
        draw.enter_ball(game=game, number=number, actor=caller)
    args: dict[str, Any] = {"ordinal": 2, "number": 44, "reason": REASON, **change}
    args["number"] = {"same": 22, "drawn": 33}.get(args["number"], args["number"])
    before = state(game)
    with pytest.raises(error) as refused:
        corrections.correct_ball(game=game, actor=caller, **args)
    assert refused.value.code == code
    assert state(game) == before


def test_an_rng_game_cannot_be_corrected(session, room, caller, card_series, cashier):
    game = drawing(
        games.create_game(room=room, actor=caller, draw_source="rng"), card_series, caller, cashier
    )
    ball = draw.draw_rng_ball(game_id=game.pk, ordinal=1)
    assert ball is not None
    before = state(game)
    with pytest.raises(Conflict) as refused:
        corrections.correct_ball(game=game, ordinal=1, number=free_number(game), reason=REASON, actor=caller)
    assert refused.value.code == "rng_game"
    assert state(game) == before


def test_a_game_out_of_play_cannot_be_corrected(manual_game, card_series, caller, cashier):
    game = drawing(manual_game, card_series, caller, cashier)
    draw.enter_ball(game=game, number=5, actor=caller)
    games.void_game(game=game, actor=caller, reason="Blower failure")
    before = state(game)
    with pytest.raises(Conflict) as refused:
        corrections.correct_ball(game=game, ordinal=1, number=6, reason=REASON, actor=caller)
    assert refused.value.code == "wrong_state"
    assert state(game) == before


def test_refused_once_a_claim_at_or_after_the_ball_is_confirmed(manual_game, card_series, caller, cashier):
    game = drawing(manual_game, card_series, caller, cashier)
    row = sorted(n for n in grid(card_series, 7).rows[0] if n)
    for number in row:
        draw.enter_ball(game=game, number=number, actor=caller)
    claims.file_claim(game=game, kind="line", series_code="A", serial=7, actor=caller)
    claims.confirm_claims(game=game, kind="line", actor=caller)
    later = free_number(game, *grid(card_series, 7).numbers)
    draw.enter_ball(game=game, number=later, actor=caller)
    for ordinal in (1, len(row)):  # before and at the ball the Line was paid at
        before = state(game)
        with pytest.raises(Conflict) as refused:
            corrections.correct_ball(
                game=game, ordinal=ordinal, number=free_number(game), reason=REASON, actor=caller
            )
        assert refused.value.code == "claim_confirmed"
        assert refused.value.details == {"confirmed_at": len(row)}
        assert state(game) == before
    # A ball after the paid Line can still be put right.
    corrections.correct_ball(
        game=game, ordinal=len(row) + 1, number=free_number(game, later), reason=REASON, actor=caller
    )
    assert recorded(game) == expected(game)


def test_an_unpaid_claim_is_judged_again_and_the_window_follows(manual_game, card_series, caller, cashier):
    game = drawing(manual_game, card_series, caller, cashier)
    row = sorted(n for n in grid(card_series, 7).rows[0] if n)
    for number in row:
        draw.enter_ball(game=game, number=number, actor=caller)
    claim = claims.file_claim(game=game, kind="line", series_code="A", serial=7, actor=caller)
    game.refresh_from_db()
    assert claim.valid and game.claim_window == "line" and game.line_won_at == len(row)
    # The line's first number was mis-keyed: the card had no line after all.
    corrections.correct_ball(
        game=game,
        ordinal=1,
        number=free_number(game, *grid(card_series, 7).numbers),
        reason=REASON,
        actor=caller,
    )
    claim.refresh_from_db()
    game.refresh_from_db()
    assert not claim.valid and claim.refusal == "not_complete"
    assert (game.claim_window, game.line_won_at, game.state) == ("", None, GameState.PAUSED)
    entry = AuditEntry.objects.filter(action="ball.corrected").get()
    assert entry.data["claims"][0]["before"]["valid"] is True
    assert entry.data["claims"][0]["valid"] is False
    # Nothing is waiting: the caller resumes the draw.
    game = games.resume_draw(game=game, actor=caller)
    assert game.state == GameState.DRAWING


@pytest.mark.django_db(transaction=True)
def test_no_process_applies_a_ball_to_an_index_from_before_the_correction(
    manual_game, card_series, caller, cashier
):
    """Committed for real: the index is cached between balls. A process still holding the index of the
    balls before the correction (here: this one, given it back) must not use it for the next ball."""
    game = drawing(manual_game, card_series, caller, cashier)
    row, wrong = mis_keyed_line(game, card_series, caller)
    stale = copy.deepcopy(detection.cache.entries[game.pk])
    assert stale.index.ordinal == len(row)
    corrections.correct_ball(game=game, ordinal=len(row), number=row[-1], reason=REASON, actor=caller)
    assert recorded(game) == expected(game)
    detection.cache.keep(game.pk, stale)  # another process's cache, as it was before the correction
    # The rest of card 7: the stale index, which never saw its corrected number, would miss its bingo.
    for number in sorted(grid(card_series, 7).numbers - set(row)):
        draw.enter_ball(game=game, number=number, actor=caller)
    card7 = Card.objects.get(series=card_series, serial=7).pk
    assert ("bingo", card7, 15) in recorded(game)
    assert recorded(game) == expected(game)
    # And this process's cache, rebuilt by the correction, carries on right too.
    detection.forget()
    corrections.correct_ball(game=game, ordinal=2, number=wrong, reason=REASON, actor=caller)
    draw.enter_ball(game=game, number=free_number(game), actor=caller)
    assert recorded(game) == expected(game)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    order=st.permutations(range(1, 91)),
    drawn=st.integers(1, 50),
    data=st.data(),
    restart=st.booleans(),
)
def test_completions_after_corrections_equal_the_pure_detector(
    room, session, operator, caller, cashier, ball_set, order, drawn, data, restart
):
    """Any balls, any corrections (any ball to any number not drawn), more balls after: the completions
    recorded are the pure detector's on the balls as stored, and so are the unclaimed winners."""
    code = f"P{next(_codes)}"  # a card is sold once ever: each example sells a series of its own
    series = series_services.create_series(
        venue=room.venue,
        code=code,
        face_value=Decimal("1.00"),
        strips=10,
        actor=operator,
        seed=code.encode().hex(),
    )
    game = games.create_game(room=room, actor=caller, draw_source="manual")
    try:
        drawing(game, series, caller, cashier)
        for number in order[:drawn]:
            draw.enter_ball(game=game, number=number, actor=caller)
        spare = order[drawn:]
        for _ in range(data.draw(st.integers(1, 3), label="corrections")):
            ordinal = data.draw(st.integers(1, drawn), label="ordinal")
            number = data.draw(st.sampled_from(spare), label="number")
            old = Ball.objects.get(game=game, ordinal=ordinal).number
            corrections.correct_ball(game=game, ordinal=ordinal, number=number, reason=REASON, actor=caller)
            spare = [old if n == number else n for n in spare]
            assert recorded(game) == expected(game)
        if restart:
            detection.forget()
        for number in spare[:5]:
            draw.enter_ball(game=game, number=number, actor=caller)
        assert recorded(game) == expected(game)
        game.refresh_from_db()
        unclaimed = readmodels.unclaimed_winners(game)
        bingos = {card for kind, card, _at in expected(game) if kind == "bingo"}
        assert len(unclaimed["bingo"]) == len(bingos)
    finally:  # the room's next example needs the room free
        games.void_game(game=game, actor=caller, reason="next example")


def test_a_ball_changes_only_through_its_correction(manual_game, card_series, caller, cashier):
    """The database itself refuses a ball edited without its correction row, any other column changed,
    and a ball deleted; the correction service's own update passes."""
    from django.db import DatabaseError, transaction

    game = drawing(manual_game, card_series, caller, cashier)
    draw.enter_ball(game=game, number=12, actor=caller)
    ball = Ball.objects.get(game=game, ordinal=1)
    target = free_number(game, 12)
    attempts: list[Callable[[], object]] = [
        lambda: Ball.objects.filter(pk=ball.pk).update(number=target),
        lambda: Ball.objects.filter(pk=ball.pk).update(ordinal=2),
        lambda: Ball.objects.filter(pk=ball.pk).delete(),
    ]
    for attempt in attempts:
        with pytest.raises(DatabaseError), transaction.atomic():
            attempt()
    assert Ball.objects.get(pk=ball.pk).number == 12

    corrections.correct_ball(game=game, ordinal=1, number=target, reason=REASON, actor=caller)
    assert Ball.objects.get(pk=ball.pk).number == target
    with pytest.raises(DatabaseError), transaction.atomic():
        BallCorrection.objects.filter(game=game).update(reason="edited")
