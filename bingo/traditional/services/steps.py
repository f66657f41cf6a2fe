"""Helpers the bingo services share: state transitions, the audit entry and event of a game change.

What the caller consoles are told after a change is bingo.traditional.services.console's ``tell_consoles``:
this module
imports no read model, so every write service can use it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.utils.translation import gettext
from django.utils.translation import gettext as _
from django_fsm import TransitionNotAllowed

from bingo.traditional.models import Game, GameState
from halls.actors import Actor
from halls.errors import Conflict
from halls.eventtypes import EventType, GameStep
from halls.services.changes import record_change


def transition(game: Game, step: Callable[[], None], doing: str) -> None:
    """Run an FSM transition, or answer 409 with what the game's state allows."""
    try:
        step()
    except TransitionNotAllowed as exc:
        state = GameState(game.state).label.lower()
        raise Conflict(
            _("Game %(number)s is %(state)s: cannot %(doing)s.")
            % {"number": game.number, "state": state, "doing": gettext(doing)},
            code="wrong_state",
            state=game.state,
        ) from exc


def step(game: Game) -> GameStep:
    """What every public event of a game starts with: the game, its number, its state as now changed."""
    return GameStep(game=game.pk, number=game.number, state=game.state)


def record(
    game: Game, actor: Actor, type: EventType, data: Mapping[str, Any], public: Mapping[str, Any]
) -> None:
    """Audit the change (`data`, after the game and its number) and tell the room's screens `public`, a
    payload of `type` built by the caller: what the audit keeps reaches a screen only if put there."""
    audited = {"game": game.pk, "number": game.number, **data}
    record_change(
        venue_id=game.room.venue_id,
        actor=actor,
        type=type,
        obj=game,
        data=audited,
        stream=game.room.stream,
        public=public,
    )
