"""A venue's ball sets (R-06, TB-05…TB-07, OP-09): registered with their colour map, chosen for a game,
counted game by game (bingo.traditional.services.claims counts a set's game when the game closes), their
incidents
and replacements (of some balls, or of the whole set) recorded with who and when.

A set at its manufacturer's number of games (``certified_games``, TB-07) is still usable, but the
console and the setup page say it must be replaced; a set replaced whole is retired and chosen for no
new game.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.balls import colour_problems, default_colours
from bingo.traditional import labels
from bingo.traditional.models import BallSet, BallSetEvent, BallSetEventKind, Game, GameState
from bingo.traditional.services.locks import lock_ball_set, lock_game
from halls.errors import Conflict, InvalidInput
from halls.models import Venue
from halls.services import audit

MAX_CERTIFIED_GAMES = 1_000_000
# The games a set may be chosen for a game in: before its first ball.
CHOOSABLE = (GameState.SCHEDULED, GameState.ON_SALE, GameState.SALES_CLOSED)


def _checked_colours(colours: dict[str, str] | None) -> dict[str, str]:
    colours = dict(colours) if colours else default_colours()
    problems = colour_problems(colours)
    if problems:
        raise InvalidInput(
            _("Bad ball set: %(problems)s.")
            % {"problems": "; ".join(labels.colour_problem(p) for p in problems)},
            code="bad_ball_set",
        )
    return colours


def _checked_certified(certified_games: int) -> int:
    if isinstance(certified_games, bool) or not 1 <= certified_games <= MAX_CERTIFIED_GAMES:
        raise InvalidInput(
            _("The manufacturer's number of games is 1 to %(max)s, not %(n)s.")
            % {"max": MAX_CERTIFIED_GAMES, "n": certified_games},
            code="bad_certified_games",
        )
    return certified_games


def _checked_name(name: str) -> str:
    name = " ".join(name.split())
    if not name or len(name) > 80:
        raise InvalidInput(_("A ball set needs a name of 1 to 80 characters."), code="bad_ball_set_name")
    return name


def describe(ball_set: BallSet) -> dict[str, Any]:
    """What the audit keeps of a set."""
    return {
        "name": ball_set.name,
        "colours": ball_set.colours,
        "certified_games": ball_set.certified_games,
        "games_played": ball_set.games_played,
        "manufacturer": ball_set.manufacturer,
        "homologation_ref": ball_set.homologation_ref,
    }


def register_ball_set(
    *,
    venue: Venue,
    name: str,
    actor: User,
    colours: dict[str, str] | None = None,
    certified_games: int = 10_000,
    manufacturer: str = "",
    homologation_ref: str = "",
) -> BallSet:
    """A new set of 90 balls for the venue, with the colour of every number (the five-colour default
    when none is given)."""
    name = _checked_name(name)
    colours = _checked_colours(colours)
    certified_games = _checked_certified(certified_games)
    try:
        with transaction.atomic():
            ball_set = BallSet.objects.create(
                venue=venue,
                name=name,
                colours=colours,
                certified_games=certified_games,
                manufacturer=manufacturer.strip(),
                homologation_ref=homologation_ref.strip(),
                created_at=timezone.now(),
            )
            audit.record(
                venue_id=venue.pk,
                actor=actor,
                action="ball_set.created",
                obj=ball_set,
                data=describe(ball_set),
            )
    except IntegrityError as exc:
        raise Conflict(
            _("Venue %(name)s already has a ball set %(name2)s.") % {"name": venue.name, "name2": name},
            code="ball_set_exists",
        ) from exc
    return ball_set


def _checked_balls(balls: Iterable[int]) -> list[int]:
    numbers = sorted(set(balls))
    bad = [n for n in numbers if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 90]
    if bad:
        raise InvalidInput(
            _("Balls are numbered 1 to 90, not %(bad)s.") % {"bad": bad}, code="ball_out_of_range"
        )
    return numbers


def _event(
    ball_set: BallSet,
    *,
    kind: str,
    note: str,
    actor: User,
    balls: list[int],
    game: Game | None = None,
    replacement: BallSet | None = None,
) -> BallSetEvent:
    event = BallSetEvent.objects.create(
        ball_set=ball_set,
        kind=kind,
        balls=balls,
        note=note,
        game=game,
        replacement=replacement,
        games_played=ball_set.games_played,
        recorded_by=actor,
        recorded_at=timezone.now(),
    )
    audit.record(
        venue_id=ball_set.venue_id,
        actor=actor,
        action=f"ball_set.{kind}",
        obj=ball_set,
        data={
            "ball_set": ball_set.pk,
            "balls": balls,
            "note": note,
            "game": game.pk if game else None,
            "replacement": replacement.pk if replacement else None,
            "games_played": ball_set.games_played,
        },
    )
    return event


def _note(note: str) -> str:
    note = note.strip()
    if not note:
        raise InvalidInput(_("Say what happened."), code="note_required")
    return note


def record_incident(
    *,
    ball_set: BallSet,
    note: str,
    actor: User,
    balls: Iterable[int] = (),
    replaced: bool = False,
    game: Game | None = None,
) -> BallSetEvent:
    """An incident with the set's condition (a ball chipped, faded, sticking), or some of its balls
    replaced (``replaced``: the balls named were changed for new ones of the same number and colour)."""
    note = _note(note)
    numbers = _checked_balls(balls)
    if replaced and not numbers:
        raise InvalidInput(_("Name the balls that were replaced."), code="balls_required")
    if game is not None and game.room.venue_id != ball_set.venue_id:
        raise InvalidInput(_("The game is of another venue."), code="bad_game")
    with transaction.atomic():
        ball_set = lock_ball_set(ball_set.pk)
        if ball_set.retired_at is not None:
            raise Conflict(
                _("Ball set %(name)s was replaced: it is no longer in use.") % {"name": ball_set.name},
                code="ball_set_retired",
            )
        kind = BallSetEventKind.BALLS_REPLACED if replaced else BallSetEventKind.INCIDENT
        return _event(ball_set, kind=kind, note=note, actor=actor, balls=numbers, game=game)


def replace_ball_set(
    *,
    ball_set: BallSet,
    name: str,
    note: str,
    actor: User,
    colours: dict[str, str] | None = None,
    certified_games: int | None = None,
    manufacturer: str | None = None,
    homologation_ref: str = "",
) -> BallSet:
    """The whole set replaced (at its manufacturer's number, or a ball not in perfect condition, TB-07):
    a new set, counted from zero, takes its place; the old one is retired. Colours, the certified number
    and the manufacturer default to the old set's."""
    note = _note(note)
    name = _checked_name(name)
    with transaction.atomic():
        old = lock_ball_set(ball_set.pk)
        if old.retired_at is not None:
            raise Conflict(
                _("Ball set %(name)s was already replaced.") % {"name": old.name}, code="ball_set_retired"
            )
        new = register_ball_set(
            venue=old.venue,
            name=name,
            actor=actor,
            colours=colours or old.colours,
            certified_games=old.certified_games if certified_games is None else certified_games,
            manufacturer=old.manufacturer if manufacturer is None else manufacturer,
            homologation_ref=homologation_ref,
        )
        old.retired_at = timezone.now()
        old.replaced_by = new
        old.save(update_fields=["retired_at", "replaced_by"])
        _event(old, kind=BallSetEventKind.SET_REPLACED, note=note, actor=actor, balls=[], replacement=new)
    return new


def choose_ball_set(*, game: Game, ball_set: BallSet, actor: User) -> Game:
    """The set the game is played with, chosen before its first ball."""
    if ball_set.venue_id != game.room.venue_id:
        raise InvalidInput(_("The ball set belongs to another venue."), code="bad_ball_set")
    with transaction.atomic():
        game = lock_game(game.pk)
        if game.state not in CHOOSABLE:
            raise Conflict(
                _("Game %(number)s has started its draw: its ball set is fixed.") % {"number": game.number},
                code="wrong_state",
                state=game.state,
            )
        ball_set = lock_ball_set(ball_set.pk)
        if ball_set.retired_at is not None:
            raise Conflict(
                _("Ball set %(name)s was replaced: it is no longer in use.") % {"name": ball_set.name},
                code="ball_set_retired",
            )
        old = game.ball_set_id
        game.ball_set = ball_set
        game.save(update_fields=["ball_set"])
        audit.record(
            venue_id=ball_set.venue_id,
            actor=actor,
            action="game.ball_set_chosen",
            obj=game,
            data={"game": game.pk, "number": game.number, "old": old, "new": ball_set.pk},
        )
    return game


def default_for(venue: Venue) -> BallSet | None:
    """The set a new game of the venue gets when none is chosen: its first one in use."""
    return venue.ball_sets.filter(retired_at__isnull=True).order_by("pk").first()
