"""The inspector's statistics (bingo.venuewide.records) count electronic and automatic bingo as the
speciality statistics do (R-02, R-03): per venue-local day and room, and per month."""

from __future__ import annotations

import pytest

from bingo.electronic.services import reports
from bingo.venuewide import records
from tests.bingo.electronic.test_reports import DAY_20, DAY_21, hall  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def test_electronic_and_automatic_games_count_as_the_speciality_statistics_say(venue, hall) -> None:  # noqa: F811
    ours = records.statistics(venue=venue, period="day", first=DAY_20, last=DAY_21)
    theirs = reports.statistics(venue=venue, first=DAY_20, last=DAY_21)
    rooms = {
        hall["e"].code: (hall["e"].room.name, "electronic"),
        hall["a"].code: (hall["a"].room.name, "automatic"),
    }
    found = {(r.period, r.room, r.game_type): r for r in ours.rows}
    assert len(found) == len(theirs.days) == 3
    for stats in theirs.days:
        row = found[(stats.day, *rooms[stats.code])]
        assert row.games == stats.games + stats.games_without_sales and row.void == stats.void
        assert (row.cards, row.amount, row.prizes) == (stats.cards, stats.played, stats.paid)
    assert theirs.total is not None
    month = records.statistics(venue=venue, period="month", first=DAY_20, last=DAY_21)
    assert sum(r.amount for r in month.rows) == ours.total.amount == theirs.total.played
    assert month.total.prizes == theirs.total.paid
