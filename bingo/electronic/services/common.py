"""Helpers the electronic services share: the audit entry and event of a game change, a terminal's event."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from bingo.electronic.models import ElectronicGame, SpecialityVersion, Terminal
from bingo.electronic.prizetable import Rules, parse_rules
from halls import events
from halls.actors import Actor
from halls.eventtypes import EGameStep, EventType
from halls.services.changes import record_change


def estep(game: ElectronicGame) -> EGameStep:
    """What every public event of an electronic game starts with."""
    return EGameStep(speciality=game.speciality_id, game=game.pk, number=game.number, state=game.state)


def record(
    game: ElectronicGame, actor: Actor, type: EventType, data: Mapping[str, Any], public: Mapping[str, Any]
) -> None:
    """Audit the change (`data`) and tell the speciality's room stream `public` (a payload of `type`)."""
    speciality = game.speciality
    record_change(
        venue_id=speciality.venue_id,
        actor=actor,
        type=type,
        obj=game,
        data={"speciality": speciality.pk, "game": game.pk, "number": game.number, **data},
        stream=speciality.stream,
        public=public,
    )


def tell_terminal(terminal: Terminal | int, type: EventType, public: Mapping[str, Any]) -> None:
    """An event on a terminal's own stream (after commit): its cards, its prizes, its balance."""
    terminal_id = terminal if isinstance(terminal, int) else terminal.pk
    events.emit(f"terminal.{terminal_id}", type, public)


@lru_cache(maxsize=256)
def _rules(version_id: int, text: str) -> Rules:
    import json

    return parse_rules(json.loads(text))


def rules_of(version: SpecialityVersion) -> Rules:
    """A version's rules, parsed once per process (a version is append-only)."""
    import json

    return _rules(version.pk, json.dumps(version.rules, sort_keys=True))
