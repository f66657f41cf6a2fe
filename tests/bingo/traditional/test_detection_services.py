"""Completions recorded with each ball, through the services, equal the pure detector's (`winners_at`).

The contract: the rows (one per ball and kind, holding the cards' ids) expanded to (kind, card, ordinal)
are exactly `winners_at`'s lines and bingos, after every ball, restart or rolled-back step.

The games commit for real (transactional_db), so the per-process index is kept and reused between balls as
in a worker; a "restart" drops it (the next ball rebuilds it from the database), and a step that raises
inside its transaction must leave nothing recorded and the next step still right.
"""

from __future__ import annotations

import copy
import importlib
import itertools
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bingo import detect_index
from bingo.cards import CardGrid
from bingo.traditional.models import Ball, BallCorrection, CardSeries, Completion, Game, SoldCard
from bingo.traditional.services import detection, draw, games, readmodels, sales
from bingo.traditional.services import series as series_services
from bingo.traditional.services.locks import lock_game
from halls import sqlite_triggers
from halls.models import GameSession, Room
from tests.bingo.traditional.game_support import expected_completions as expected
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 - autouse fixtures

pytestmark = pytest.mark.django_db(transaction=True)

_codes = itertools.count(1)


class Boom(RuntimeError):
    """Raised inside a ball's transaction, after its completions were inserted."""


def wipe_files() -> None:
    """No index file on the host either: the next step rebuilds from the database."""
    for path in Path(django_settings.HALL_DETECTOR_DIR).glob("*.idx"):
        path.unlink()


def recorded(game: Game) -> set[tuple[str, int, int]]:
    """The recorded completions, expanded to (kind, card, ordinal); each row's shape checked on the way."""
    rows = list(Completion.objects.filter(game=game).values_list("kind", "ordinal", "count", "cards"))
    for kind, ordinal, count, cards in rows:
        ids = detect_index.card_ids(cards).tolist()
        # One row per ball and kind that completed something: its cards ascending, counted right.
        assert count == len(ids) > 0 and ids == sorted(set(ids)), (kind, ordinal)
    found = detection.recorded_completions(game)
    assert len(found) == sum(row[2] for row in rows)
    return found


def completed(game: Game, kind: str) -> int:
    return sum(Completion.objects.filter(game=game, kind=kind).values_list("count", flat=True))


def new_series(venue: Any, operator: Any, strips: int) -> CardSeries:
    code = f"D{next(_codes)}"
    return series_services.create_series(
        venue=venue,
        code=code,
        face_value=Decimal("1.00"),
        strips=strips,
        actor=operator,
        seed=code.encode().hex(),
    )


def sold_game(
    room: Room, caller: Any, cashier: Any, series: CardSeries, ranges: list[tuple[int, int]], source: str
) -> Game:
    game = games.create_game(room=room, actor=caller, draw_source=source)
    games.open_sales(game=game, actor=caller)
    for first, last in ranges:
        sales.sell_range(game=game, series=series, first=first, last=last, actor=cashier)
    games.close_sales(game=game, actor=caller)
    return games.start_draw(game=game, actor=caller)


def disjoint_ranges(cards: int) -> st.SearchStrategy[list[tuple[int, int]]]:
    """Up to four non-overlapping serial ranges of a series of `cards`."""

    def ranges(cuts: list[int]) -> list[tuple[int, int]]:
        points = sorted(set(cuts))
        pairs = [(a, b - 1) for a, b in itertools.pairwise(points) if b - 1 >= a]
        return pairs[::2] or [(1, cards)]

    return st.lists(st.integers(1, cards + 1), min_size=2, max_size=8).map(ranges)


STRIPS = 12  # 72 cards
steps = st.lists(
    st.sampled_from(["ball", "ball", "ball", "ball", "restart", "raise"]), min_size=1, max_size=120
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ranges=disjoint_ranges(STRIPS * 6),
    order=st.permutations(range(1, 91)),
    plan=steps,
    portable=st.booleans(),
)
def test_recorded_completions_equal_the_pure_detector(
    monkeypatch: pytest.MonkeyPatch, venue: Any, operator: Any, room: Room, session: GameSession, caller: Any,
    cashier: Any, ball_set: Any, ranges: list[tuple[int, int]], order: list[int], plan: list[str],
    portable: bool,
) -> None:  # fmt: skip
    if portable:  # the embedded hall's path: ORM load and bulk_create, as on SQLite
        monkeypatch.setattr(detection, "_postgresql", lambda: False)
    series = new_series(venue, operator, STRIPS)
    game = sold_game(room, caller, cashier, series, ranges, "manual")
    balls = iter(order)
    number = next(balls)
    for step in plan:
        if step == "restart":
            detection.forget(game.pk)  # the worker died between balls: a new process maps the host's file
        elif step == "wipe":
            detection.forget(game.pk)  # ... on another host, or the file is gone: the database
            wipe_files()
        elif step == "raise":
            with monkeypatch.context() as m:
                m.setattr(draw, "record", lambda *a, **k: (_ for _ in ()).throw(Boom()))
                with pytest.raises(Boom):
                    draw.enter_ball(game=game, number=number, actor=caller)
            assert not Ball.objects.filter(game=game, number=number).exists()
        else:
            draw.enter_ball(game=game, number=number, actor=caller)
            number = next(balls, 0)
            if not number:
                break
        assert recorded(game) == expected(game)
    assert recorded(game) == expected(game)
    games.void_game(game=game, actor=caller, reason="test over")


def test_rng_steps_record_once_and_a_retried_step_records_nothing(
    venue: Any, operator: Any, room: Room, session: GameSession, caller: Any, cashier: Any, ball_set: Any
) -> None:
    series = new_series(venue, operator, 30)
    game = sold_game(room, caller, cashier, series, [(1, 180)], "rng")
    for ordinal in range(1, 91):
        ball = draw.draw_rng_ball(game_id=game.pk, ordinal=ordinal)
        assert ball is not None and ball.ordinal == ordinal
        before = recorded(game)
        # The same step again (a redelivered task, the reaper's duplicate): nothing drawn, nothing recorded.
        assert draw.draw_rng_ball(game_id=game.pk, ordinal=ordinal) is None
        if ordinal % 30 == 0:
            detection.forget()
        assert recorded(game) == before
    assert recorded(game) == expected(game)
    # Every card of full strips completes by the 90th ball: one line and one bingo each.
    assert completed(game, "bingo") == 180
    assert completed(game, "line") == 180


def test_a_step_rolled_back_after_the_index_moved_is_not_trusted(
    monkeypatch: pytest.MonkeyPatch, venue: Any, operator: Any, room: Room, session: GameSession, caller: Any,
    cashier: Any, ball_set: Any,
) -> None:  # fmt: skip
    """Ball 5 applied in this process, its transaction rolled back, another number committed as ball 5."""
    series = new_series(venue, operator, 10)
    game = sold_game(room, caller, cashier, series, [(1, 60)], "manual")
    card = SoldCard.objects.filter(game=game).select_related("card").first()
    assert card is not None
    row = [n for n in CardGrid.from_json(card.card.grid).rows[0] if n]
    for number in row[:4]:
        draw.enter_ball(game=game, number=number, actor=caller)
    with monkeypatch.context() as m:
        m.setattr(draw, "record", lambda *a, **k: (_ for _ in ()).throw(Boom()))
        with pytest.raises(Boom):
            draw.enter_ball(game=game, number=row[4], actor=caller)  # would have completed the row
    other = next(n for n in range(1, 91) if n not in row)
    draw.enter_ball(game=game, number=other, actor=caller)
    assert recorded(game) == expected(game)
    assert ("line", card.card_id, 5) not in recorded(game)
    draw.enter_ball(game=game, number=row[4], actor=caller)
    assert ("line", card.card_id, 6) in recorded(game)
    assert recorded(game) == expected(game)
    found = readmodels.unclaimed_winners(game)
    assert {"series": series.code, "serial": card.card.serial, "since_ball": 6} in found["line"]


def counting_loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every load of the sold cards from the database (the game ids)."""
    loads: list[int] = []
    real = detection.sold_numbers

    def counted(game: Game) -> Any:
        loads.append(game.pk)
        return real(game)

    monkeypatch.setattr(detection, "sold_numbers", counted)
    return loads


def test_the_index_is_built_once_per_game(
    monkeypatch: pytest.MonkeyPatch, venue: Any, operator: Any, room: Room, session: GameSession, caller: Any,
    cashier: Any, ball_set: Any,
) -> None:  # fmt: skip
    loads = counting_loads(monkeypatch)
    series = new_series(venue, operator, 10)
    game = sold_game(room, caller, cashier, series, [(1, 60)], "manual")
    assert loads == [game.pk]  # at the close of sales
    for number in range(90, 45, -1):
        draw.enter_ball(game=game, number=number, actor=caller)
    assert loads == [game.pk]
    detection.forget()  # a restarted process maps the file written at the close of sales
    for number in range(45, 0, -1):
        draw.enter_ball(game=game, number=number, actor=caller)
    assert loads == [game.pk]
    assert recorded(game) == expected(game)
    games.void_game(game=game, actor=caller, reason="test over")


def test_an_index_from_another_database_state_is_not_reused(
    monkeypatch: pytest.MonkeyPatch, venue: Any, operator: Any, room: Room, session: GameSession, caller: Any,
    cashier: Any, ball_set: Any,
) -> None:  # fmt: skip
    """Balls drawn by another process while this one kept an older index: it catches up from the database."""
    series = new_series(venue, operator, 10)
    game = sold_game(room, caller, cashier, series, [(1, 60)], "manual")
    for number in range(1, 11):
        draw.enter_ball(game=game, number=number, actor=caller)
    with detection.cache.lock:
        kept = copy.deepcopy(dict(detection.cache.entries))  # this process's index at ball 10
    for number in range(11, 41):
        draw.enter_ball(game=game, number=number, actor=caller)
    with detection.cache.lock:
        detection.cache.entries.clear()
        detection.cache.entries.update(kept)  # this process saw ball 10 last
    assert kept[game.pk].index.ordinal == 10
    loads = counting_loads(monkeypatch)
    wipe_files()
    for number in range(41, 91):
        draw.enter_ball(game=game, number=number, actor=caller)
    assert loads == []  # caught up from the stored balls, not rebuilt
    assert recorded(game) == expected(game)
    assert completed(game, "bingo") == 60


PER_CARD = ("bingo", "0005_completions")


@pytest.mark.timeout(900)  # back to bingo 0005 and forward again: every later migration replayed
def test_the_migrations_record_the_games_in_play_and_pack_their_rows(
    venue: Any, operator: Any, room: Room, session: GameSession, caller: Any, cashier: Any, ball_set: Any
) -> None:
    """0005 records the completions of games already drawing, a row per card; 0010 packs them a row per
    ball and kind (and unpacks them going back)."""
    migration = importlib.import_module("bingo.traditional.migrations.0005_completions")
    series = new_series(venue, operator, 10)
    game = sold_game(room, caller, cashier, series, [(1, 60)], "manual")
    for number in range(1, 61):
        draw.enter_ball(game=game, number=number, actor=caller)
    expected_rows = expected(game)
    assert recorded(game) == expected_rows
    sqlite_triggers.drop()  # SQLite: migrations run without the append-only triggers (as `migrate` does)
    try:
        executor = MigrationExecutor(connection)
        executor.migrate([PER_CARD])  # unpacked
        old_apps = executor.loader.project_state(PER_CARD).apps
        old = old_apps.get_model("bingo", "Completion")
        per_card = set(old.objects.filter(game_id=game.pk).values_list("kind", "card_id", "ordinal"))
        assert per_card == expected_rows
        old.objects.filter(game_id=game.pk).delete()  # as before 0005
        migration.record_games_in_play(old_apps, None)
        assert set(old.objects.filter(game_id=game.pk).values_list("kind", "card_id", "ordinal")) == per_card
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())  # to the latest again: packed
        sqlite_triggers.install()
    assert recorded(game) == expected_rows


def test_an_unreadable_index_file_means_the_database(
    monkeypatch: pytest.MonkeyPatch, venue: Any, operator: Any, room: Room, session: GameSession, caller: Any,
    cashier: Any, ball_set: Any,
) -> None:  # fmt: skip
    series = new_series(venue, operator, 10)
    game = sold_game(room, caller, cashier, series, [(1, 60)], "manual")
    for number in range(1, 31):
        draw.enter_ball(game=game, number=number, actor=caller)
    (path,) = Path(django_settings.HALL_DETECTOR_DIR).glob("*.idx")
    for number, damage in enumerate((b"HALLIDX1" + b"\x00" * 40, path.read_bytes()[:-4], b""), start=31):
        path.write_bytes(damage)
        detection.forget()
        loads = counting_loads(monkeypatch)
        draw.enter_ball(game=game, number=number, actor=caller)
        assert len(loads) == 1  # rebuilt from the database (and the file written again)
        monkeypatch.undo()
    assert recorded(game) == expected(game)


def test_an_index_file_of_other_sales_is_not_used(
    monkeypatch: pytest.MonkeyPatch, venue: Any, operator: Any, room: Room, session: GameSession, caller: Any,
    cashier: Any, ball_set: Any,
) -> None:  # fmt: skip
    """A file under this game's name holding other cards (a restored database, a reused id) is refused."""
    series = new_series(venue, operator, 10)
    game = sold_game(room, caller, cashier, series, [(1, 60)], "manual")
    (path,) = Path(django_settings.HALL_DETECTOR_DIR).glob("*.idx")
    stranger = detect_index.load(path)
    stranger.card_ids = stranger.card_ids + 10**9  # same shape, cards of no sale here
    detect_index.save(stranger, path)
    detection.forget()
    loads = counting_loads(monkeypatch)
    draw.enter_ball(game=game, number=1, actor=caller)
    assert loads == [game.pk]
    for number in range(2, 91):
        draw.enter_ball(game=game, number=number, actor=caller)
    assert recorded(game) == expected(game)


def test_rebuilding_after_a_ball_changed_records_the_stored_balls_completions(
    venue: Any, operator: Any, room: Room, session: GameSession, caller: Any, cashier: Any, ball_set: Any
) -> None:
    """A ball's number corrected (as a mis-keyed ball is) in a transaction that rebuilds: the rows follow
    the stored balls, and the next balls, in this process and in a fresh one, go on from them."""
    series = new_series(venue, operator, 10)
    game = sold_game(room, caller, cashier, series, [(1, 60)], "manual")
    card = SoldCard.objects.filter(game=game).select_related("card").first()
    assert card is not None
    row = [n for n in CardGrid.from_json(card.card.grid).rows[0] if n]
    others = [n for n in range(90, 0, -1) if n not in row]
    for number in row[:4] + others[:36]:  # ball 40 is others[35], keyed for row[4]
        draw.enter_ball(game=game, number=number, actor=caller)
    assert ("line", card.card_id, 40) not in recorded(game)
    with transaction.atomic():
        locked = lock_game(game.pk)
        ball = Ball.objects.get(game=game, ordinal=40)
        BallCorrection.objects.create(  # the database lets a ball change only with its correction row
            game=game,
            ball=ball,
            ordinal=40,
            old_number=ball.number,
            new_number=row[4],
            reason="test",
            corrected_by=caller,
            corrected_at=timezone.now(),
        )
        Ball.objects.filter(game=game, ordinal=40).update(number=row[4])
        detection.rebuild_completions(locked)
        assert recorded(game) == expected(game)
    assert ("line", card.card_id, 40) in recorded(game)
    for number in others[35:60]:
        draw.enter_ball(game=game, number=number, actor=caller)
        assert recorded(game) == expected(game)
    detection.forget()
    wipe_files()
    for number in others[60:]:
        draw.enter_ball(game=game, number=number, actor=caller)
    assert recorded(game) == expected(game)
    assert completed(game, "bingo") == 60
