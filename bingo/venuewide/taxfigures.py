"""The bingo games' figures for the gaming-tax returns (halls.tax.hooks): per game type, the amount played
(card sales at face value; the terminals' purchases for electronic and automatic bingo) and the prizes paid,
of the games finished in the period, as the inspector's statistics count them (records.statistics: a game
counts in the venue-local day it closed; void games count nothing)."""

from __future__ import annotations

from datetime import date

from bingo.venuewide import records
from halls import money
from halls.models import Venue
from halls.tax.compute import Figures
from halls.tax.hooks import Source


def figures(venue: Venue, first: date, last: date) -> list[Figures]:
    report = records.statistics(venue=venue, period="month", first=first, last=last)
    return [
        Figures(row.game_type, played=money.cents(row.amount), prizes=money.cents(row.prizes))
        for row in report.rows
    ]


SOURCE = Source(name="bingo", game_types=records.GAME_TYPES, figures=figures)
