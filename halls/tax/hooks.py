"""Where a return's figures come from: the apps above halls register a source (DESIGN §2: halls never
imports bingo, jackpots or machines). bingo.venuewide gives the bingo games' (traditional, network,
electronic, automatic: amount played at face value and prizes, from the inspector's statistics), machines
gives the machines' (coin in, coin out and jackpots from the meters, and the machines counted).

A source is called with the venue and the period's first and last venue-local days and returns plain
``halls.tax.compute.Figures``; the game types it may report are registered with it, with their labels (the
rate tables may name only those).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from halls.models import Venue
from halls.tax.compute import Figures

FiguresSource = Callable[[Venue, date, date], list[Figures]]


@dataclass(frozen=True)
class Source:
    name: str
    game_types: Mapping[str, Any]  # code -> label (lazy text)
    figures: FiguresSource


_sources: dict[str, Source] = {}


def register_figures(source: Source) -> None:
    """Once per app (its AppConfig.ready); registering the same name again replaces it."""
    _sources[source.name] = source


def sources() -> list[Source]:
    return [_sources[name] for name in sorted(_sources)]


def game_types() -> dict[str, Any]:
    """Every game type some source reports, with its label."""
    found: dict[str, Any] = {}
    for source in sources():
        found.update(source.game_types)
    return found


def figures(venue: Venue, first: date, last: date) -> list[Figures]:
    return [part for source in sources() for part in source.figures(venue, first, last)]
