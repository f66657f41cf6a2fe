"""Ball sets (R-06, TB-05…TB-07, OP-09): registered with their colours, chosen for a game, counted game by
game with a warning at the manufacturer's limit, their incidents and replacements kept."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from bingo.traditional.models import BallSet, BallSetEvent, CardSeries, DrawSource, Game
from bingo.traditional.services import ballsets, games, readmodels
from halls.errors import Conflict, InvalidInput
from halls.models import AuditEntry, GameSession, Room, Venue
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)

pytestmark = pytest.mark.django_db

FOUR = {str(n): ("red", "yellow", "green", "blue")[(n - 1) % 4] for n in range(1, 91)}


def test_a_set_is_registered_with_its_colour_map_and_audited(venue: Venue, operator: User) -> None:
    made = ballsets.register_ball_set(
        venue=venue,
        name="Juego B",
        actor=operator,
        colours=FOUR,
        certified_games=300,
        manufacturer="Aciplast",
    )
    assert made.colour_of(1) == "red" and made.colour_of(90) == "yellow"
    assert (made.certified_games, made.games_played, made.at_limit) == (300, 0, False)
    entry = AuditEntry.objects.get(action="ball_set.created", object_id=str(made.pk))
    assert entry.data["colours"]["4"] == "blue"


def test_a_bad_colour_map_is_refused_naming_the_problem(venue: Venue, operator: User) -> None:
    three = {str(n): ("red", "yellow", "green")[n % 3] for n in range(1, 91)}
    with pytest.raises(InvalidInput) as refused:
        ballsets.register_ball_set(venue=venue, name="X", actor=operator, colours=three)
    assert refused.value.code == "bad_ball_set" and "four colours" in refused.value.message
    missing = dict(FOUR)
    del missing["45"]
    with pytest.raises(InvalidInput, match="45"):
        ballsets.register_ball_set(venue=venue, name="X", actor=operator, colours=missing)
    with pytest.raises(InvalidInput) as bad:
        ballsets.register_ball_set(venue=venue, name="X", actor=operator, certified_games=0)
    assert bad.value.code == "bad_certified_games"
    assert not BallSet.objects.exists()


def test_the_same_name_twice_is_a_conflict(venue: Venue, operator: User) -> None:
    ballsets.register_ball_set(venue=venue, name="Juego A", actor=operator)
    with pytest.raises(Conflict) as twice:
        ballsets.register_ball_set(venue=venue, name="Juego  A", actor=operator)
    assert twice.value.code == "ball_set_exists"


def test_a_closed_game_counts_for_its_set_and_the_console_warns_at_the_limit(
    venue: Venue,
    operator: User,
    caller: User,
    cashier: User,
    room: Room,
    session: GameSession,
    card_series: CardSeries,
) -> None:
    from tests.bingo.traditional.game_support import rng_game

    chosen = ballsets.register_ball_set(venue=venue, name="Juego corto", actor=operator, certified_games=1)
    other = ballsets.register_ball_set(venue=venue, name="Juego largo", actor=operator)
    game = games.create_game(room=room, actor=caller, draw_source=DrawSource.RNG, ball_set=chosen)
    assert game.ball_set == chosen
    games.void_game(game=game, actor=caller, reason="test")
    game = rng_game(room, session, caller, cashier, card_series, pace="0.05", last=60)
    assert game.ball_set == chosen  # the venue's first set in use
    ballsets.choose_ball_set(game=game, ball_set=other, actor=operator)
    ballsets.choose_ball_set(game=game, ball_set=chosen, actor=operator)
    play_out(game, caller)
    chosen.refresh_from_db()
    other.refresh_from_db()
    assert (chosen.games_played, chosen.at_limit, chosen.games_left) == (1, True, 0)
    assert other.games_played == 0
    summary = readmodels.game_summary(Game.objects.get(pk=game.pk))
    assert summary["ball_set"]["at_limit"] is True
    assert summary["ball_set"]["name"] == "Juego corto"
    assert "ball_set" not in readmodels.game_summary(game, public=True)


def play_out(game: Game, caller: User) -> Game:
    """Draw the game's RNG balls one by one, claiming and confirming every winner, until it closes."""
    from bingo.traditional.models import GameState
    from bingo.traditional.services import claims, draw

    game = games.start_draw(game=game, actor=caller)
    while True:
        game = Game.objects.get(pk=game.pk)
        if game.state == GameState.CLOSED:
            return game
        if game.state == GameState.PAUSED and game.claim_window:
            claims.confirm_claims(game=game, kind=game.claim_window, actor=caller)
            continue
        found = readmodels.unclaimed_winners(game)
        kind = "line" if found["line"] else "bingo" if found["bingo"] else None
        if kind is None:
            draw.draw_rng_ball(game_id=game.pk, ordinal=game.balls_drawn + 1)
            continue
        for row in found[kind]:
            claims.file_claim(
                game=game,
                kind=kind,
                series_code=str(row["series"]),
                serial=int(str(row["serial"])),
                actor=caller,
            )


def test_incidents_and_ball_replacements_are_kept_with_who_and_when(
    venue: Venue, operator: User, caller: User, ball_set: BallSet, manual_game: Game
) -> None:
    incident = ballsets.record_incident(
        ball_set=ball_set, note="La bola 45 tiene una muesca", balls=[45], actor=caller, game=manual_game
    )
    replaced = ballsets.record_incident(
        ball_set=ball_set, note="Bola 45 sustituida", balls=[45, 45], replaced=True, actor=operator
    )
    assert (incident.kind, incident.balls, incident.game_id) == ("incident", [45], manual_game.pk)
    assert (replaced.kind, replaced.balls, replaced.recorded_by) == ("balls_replaced", [45], operator)
    assert AuditEntry.objects.filter(action="ball_set.balls_replaced").count() == 1
    with pytest.raises(InvalidInput) as no_note:
        ballsets.record_incident(ball_set=ball_set, note=" ", actor=caller)
    assert no_note.value.code == "note_required"
    with pytest.raises(InvalidInput) as bad_ball:
        ballsets.record_incident(ball_set=ball_set, note="x", balls=[91], actor=caller)
    assert bad_ball.value.code == "ball_out_of_range"
    with pytest.raises(InvalidInput) as none_named:
        ballsets.record_incident(ball_set=ball_set, note="x", replaced=True, actor=caller)
    assert none_named.value.code == "balls_required"
    recall = readmodels.game_recall(manual_game)
    assert [e["kind"] for e in recall["ball_set_events"]] == ["incident", "balls_replaced"]
    assert recall["ball_set_events"][0]["recorded_by"] == "caller"


def test_a_set_replaced_whole_is_retired_and_new_games_take_its_replacement(
    venue: Venue, operator: User, caller: User, room: Room, session: GameSession
) -> None:
    old = ballsets.register_ball_set(venue=venue, name="Juego 2019", actor=operator, colours=FOUR)
    BallSet.objects.filter(pk=old.pk).update(games_played=10_000)
    new = ballsets.replace_ball_set(
        ball_set=old, name="Juego 2026", note="Límite del fabricante", actor=operator
    )
    old.refresh_from_db()
    assert old.retired_at is not None and old.replaced_by == new
    assert (new.games_played, new.colours, new.certified_games) == (0, FOUR, 10_000)
    event = BallSetEvent.objects.get(ball_set=old)
    assert (event.kind, event.replacement, event.games_played) == ("set_replaced", new, 10_000)
    game = games.create_game(room=room, actor=caller, draw_source=DrawSource.MANUAL)
    assert game.ball_set == new
    with pytest.raises(Conflict) as retired:
        ballsets.choose_ball_set(game=game, ball_set=old, actor=operator)
    assert retired.value.code == "ball_set_retired"
    with pytest.raises(Conflict):
        ballsets.replace_ball_set(ball_set=old, name="Otra", note="x", actor=operator)
    with pytest.raises(Conflict):
        ballsets.record_incident(ball_set=old, note="x", actor=operator)


def test_the_set_is_fixed_once_the_draw_starts(
    operator: User, ball_set: BallSet, drawing_game: Game, other_venue: Venue
) -> None:
    spare = ballsets.register_ball_set(venue=ball_set.venue, name="Repuesto", actor=operator)
    with pytest.raises(Conflict) as fixed:
        ballsets.choose_ball_set(game=drawing_game, ball_set=spare, actor=operator)
    assert fixed.value.code == "wrong_state"
    foreign = ballsets.register_ball_set(venue=other_venue, name="Ajeno", actor=operator)
    with pytest.raises(InvalidInput):
        ballsets.choose_ball_set(game=drawing_game, ball_set=foreign, actor=operator)
