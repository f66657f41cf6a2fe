"""What the program services refuse: a configuration or pick the rules refuse (every problem, each citing its
rule), and a change while the room's game is in play."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.translation import gettext

from bingo.traditional.models import Game, GameState
from bingo.traditional.programs.rules import Problem, ProgramError
from halls import i18n
from halls.errors import Conflict, InvalidInput
from halls.models import Room

# Between the close of sales and the close of the game the programs' terms are fixed (TB-41).
IN_PLAY = (GameState.SALES_CLOSED, GameState.DRAWING, GameState.PAUSED)


def said(problem: str) -> str:
    """A problem of the rules (`rules.Problem`) in the active language, its amounts as the reader writes
    them (halls.i18n.amount); a text already said (gettext) stays as it is."""
    if isinstance(problem, Problem):
        return problem.said(gettext, i18n.amount)
    return problem


def refused(problems: Sequence[str], *, code: str = "bad_program") -> InvalidInput:
    """A configuration or pick the rules refuse: every problem, each citing its rule, in the reader's
    language."""
    shown = [said(p) for p in problems]
    return InvalidInput("; ".join(shown), code=code, problems=shown)


def program_error(error: ProgramError, *, code: str = "bad_program") -> InvalidInput:
    return refused(error.problems, code=code)


def game_in_play(room: Room) -> Game | None:
    return Game.objects.filter(room=room, state__in=IN_PLAY).order_by("-pk").first()


def refuse_while_in_play(room: Room, doing: str) -> None:
    live = game_in_play(room)
    if live is not None:
        state = GameState(live.state).label.lower()
        raise Conflict(
            gettext("Game %(number)s of %(name)s is in play (%(state)s): %(doing)s between games.")
            % {"number": live.number, "name": room.name, "state": state, "doing": gettext(doing)},
            code="game_in_play",
        )
