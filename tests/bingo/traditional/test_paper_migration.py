"""Migration 0015: a series' paper kept as one row (before ranges) becomes one range of all its serials, its
movements name all its serials, and the delivery reference the row kept goes to its first movement's note."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from bingo.traditional.models import CardSeries, Game, PaperRange, StockMovement
from bingo.traditional.paperstock import Span
from bingo.traditional.services import stock
from halls import sqlite_triggers

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = ("bingo", "0014_paper_cards")


# Migrating back to bingo 0014 and forward again replays every later migration of the apps on bingo (the
# options-only verbose_names ones too): minutes on a loaded two-core machine, so more than the default 300 s.
@pytest.mark.timeout(900)
def test_a_whole_series_row_becomes_one_range(
    operator: User, manual_game: Game, card_series: CardSeries
) -> None:
    sqlite_triggers.drop()  # SQLite: migrations run without the append-only triggers (as `migrate` does)
    try:
        executor = MigrationExecutor(connection)
        executor.migrate([BEFORE])
        old = executor.loader.project_state(BEFORE).apps
        now = timezone.now()
        old.get_model("bingo", "PaperStock").objects.create(
            series_id=card_series.pk,
            state="issued",
            game_id=manual_game.pk,
            reference="albarán 9",
            updated_at=now,
        )
        moves = old.get_model("bingo", "StockMovement").objects
        for was, state in [("", "received"), ("received", "in_stock"), ("in_stock", "issued")]:
            game = manual_game.pk if state == "issued" else None
            moves.create(
                series_id=card_series.pk,
                from_state=was,
                to_state=state,
                game_id=game,
                actor_id=operator.pk,
                at=now,
            )
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        sqlite_triggers.install()
    assert stock.spans_of(card_series) == (Span(1, 60, "issued", manual_game.pk),)
    assert PaperRange.objects.get().series_id == card_series.pk
    rows = StockMovement.objects.filter(series=card_series)
    assert list(rows.values_list("first_serial", "last_serial", "to_state", "note")) == [
        (1, 60, "received", "albarán 9"),
        (1, 60, "in_stock", ""),
        (1, 60, "issued", ""),
    ]
