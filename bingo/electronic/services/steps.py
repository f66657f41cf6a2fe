"""Helpers the electronic services share: the audit entry and event of a game change, a terminal's event."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from bingo.electronic.models import ElectronicGame, SpecialityVersion, Terminal, terminal_stream
from bingo.electronic.prizetable import Rules, parse_rules
from halls import events
from halls.actors import Actor
from halls.eventtypes import EGameStep, EventType
from halls.services import audit
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


@dataclass
class Told:
    """What a ball step audits and tells, kept until its end: then one audit append for all its entries
    (with its ledger postings', halls.cashier.services.ledger.post_many) and one numbering of its events."""

    entries: list[tuple[Actor, str, Any, dict[str, Any] | None]] = field(default_factory=list)
    events: list[tuple[str, EventType, Mapping[str, Any]]] = field(default_factory=list)

    def change(
        self,
        game: ElectronicGame,
        actor: Actor,
        type: EventType,
        data: Mapping[str, Any],
        public: Mapping[str, Any],
    ) -> None:
        """`record`, kept: the same audit entry and room event."""
        speciality = game.speciality
        data = {"speciality": speciality.pk, "game": game.pk, "number": game.number, **data}
        self.entries.append((actor, type.value, game, data))
        self.events.append((speciality.stream, type, public))

    def write(self, venue_id: int) -> None:
        """The entries not yet written (a step without postings), then every event."""
        audit.record_many(venue_id=venue_id, entries=self.entries)
        self.entries = []
        if self.events:
            events.emit_many(self.events)
        self.events = []


def tell_terminal(terminal: Terminal | int, type: EventType, public: Mapping[str, Any]) -> None:
    """An event on a terminal's own stream (after commit): its cards, its prizes, its balance."""
    terminal_id = terminal if isinstance(terminal, int) else terminal.pk
    events.emit(terminal_stream(terminal_id), type, public)


@lru_cache(maxsize=256)
def _rules(version_id: int, text: str) -> Rules:
    import json

    return parse_rules(json.loads(text))


def rules_of(version: SpecialityVersion) -> Rules:
    """A version's rules, parsed once per process (a version is append-only)."""
    import json

    return _rules(version.pk, json.dumps(version.rules, sort_keys=True))
