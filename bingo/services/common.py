"""Helpers the bingo services share: state transitions, the audit entry and event of a game change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django_fsm import TransitionNotAllowed

from bingo.models import Game, GameState
from halls import events
from halls.errors import Conflict
from halls.services import audit


def transition(game: Game, step: Callable[[], None], doing: str) -> None:
    """Run an FSM transition, or answer 409 with what the game's state allows."""
    try:
        step()
    except TransitionNotAllowed as exc:
        state = GameState(game.state).label.lower()
        raise Conflict(
            f"Game {game.number} is {state}: cannot {doing}.", code="wrong_state", state=game.state
        ) from exc


def record(
    game: Game,
    actor: Any,
    action: str,
    data: dict[str, Any] | None = None,
    *,
    public: dict[str, Any] | None = None,
) -> None:
    """Audit the change and tell the room's screens, in the caller's transaction. `public`, when given, is
    what the screens get instead of `data` (which the audit keeps): internal words stay off the screens."""
    head = {"game": game.pk, "number": game.number}
    payload = {**head, **(data or {})}
    audit.record(venue_id=game.room.venue_id, actor=actor, action=action, obj=game, data=payload)
    shown = payload if public is None else {**head, **public}
    events.emit(game.room.stream, action, {**shown, "state": game.state})


def tell_consoles(game: Game) -> None:
    """The caller consoles' unclaimed winners as the caller's transaction leaves them (the game locked and
    written): after a ball, a valid claim or a prize paid."""
    from bingo.services import console  # console reads the claims service, which uses this module

    console.emit_unclaimed(game)
