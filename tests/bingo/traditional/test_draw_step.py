"""The RNG draw step on PostgreSQL: what it reads and writes, and how it stays right when it has to wait.

The step reads the game once (locked, with its room, its ball set and the numbers drawn), appends the ball,
audits it and numbers its event (and the consoles' unclaimed list), and hands the task the game it
locked. A step that waited for the game's lock while another transaction drew a ball sees the row as
committed but the balls as they were: it must read them again rather than draw a number twice.
"""

from __future__ import annotations

import secrets
import threading
import time
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bingo.cards import CardGrid
from bingo.traditional import tasks
from bingo.traditional.models import Ball, Card, DrawSource, Game, GameState
from bingo.traditional.services import console, draw, games, readmodels, sales
from halls import events
from halls.eventtypes import EventType, SessionClosed
from halls.models import AuditChainHead, AuditEntry, StreamCursor
from halls.services import audit


@pytest.fixture
def dispatched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, float]]:
    """The next steps the draw enqueued (after commit), instead of sending them to a broker."""
    sent: list[tuple[int, int, float]] = []
    monkeypatch.setattr(
        draw, "dispatch", lambda game_id, ordinal, countdown=0.0: sent.append((game_id, ordinal, countdown))
    )
    return sent


def rng_game(room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any) -> Game:
    game = games.create_game(
        room=room, actor=caller, draw_source=DrawSource.RNG, pace_seconds=Decimal("2"), ball_set=ball_set
    )
    games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=12, actor=cashier)
    games.close_sales(game=game, actor=caller)
    return games.start_draw(game=game, actor=caller)


def statements(captured: CaptureQueriesContext, table: str) -> list[str]:
    return [
        q["sql"] for q in captured.captured_queries if f'"{table}"' in q["sql"] or f" {table} " in q["sql"]
    ]


@pytest.mark.django_db
def test_a_step_reads_the_game_once_and_audits_and_numbers_in_few_statements(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    dispatched: list[tuple[int, int, float]], django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    game = rng_game(room, caller, cashier, card_series, ball_set)
    for ordinal in (1, 2):  # the venue's chain and the room's stream already have a head
        with django_capture_on_commit_callbacks(execute=True):
            draw.draw_rng_ball(game_id=game.pk, ordinal=ordinal)
    seq = events.current_seq(room.stream)
    staff_seq = events.current_seq(console.staff_stream(room.pk))
    entries = AuditEntry.objects.filter(venue_id=room.venue_id).count()

    with django_capture_on_commit_callbacks(execute=True), CaptureQueriesContext(connection) as captured:
        ball = draw.draw_rng_ball(game_id=game.pk, ordinal=3)
        assert ball is not None
        # What the task needs came with the step: no query for the room or the ball set.
        assert (ball.game.room, ball.game.ball_set) == (room, ball_set)

    games_read = statements(captured, "bingo_game")
    assert [s.split()[0] for s in games_read] == ["SELECT", "UPDATE"]  # read once (locked), updated once
    assert "FOR UPDATE" in games_read[0]
    # The room and the ball set come joined to the game's SELECT, the numbers drawn in its subquery.
    assert statements(captured, "halls_room") == statements(captured, "bingo_ballset") == games_read[:1]
    assert statements(captured, "bingo_ball") == [games_read[0]] + [
        s for s in statements(captured, "bingo_ball") if s.startswith("INSERT")
    ]
    heads = statements(captured, "halls_auditchainhead")
    assert len(heads) == 2 and "FOR NO KEY UPDATE" in heads[0]  # lock the tip; write entry and tip together
    assert statements(captured, "halls_auditentry") == heads[1:]
    # Three balls complete no card of twelve: no completion written, and the consoles' list is unchanged.
    assert [s.split()[0] for s in statements(captured, "halls_streamcursor")] == ["UPDATE"]
    assert statements(captured, "bingo_completion") == statements(captured, "bingo_claim") == []

    game.refresh_from_db()
    assert (game.balls_drawn, game.state) == (3, GameState.DRAWING)
    assert events.current_seq(room.stream) == seq + 1
    assert events.current_seq(console.staff_stream(room.pk)) == staff_seq
    assert AuditEntry.objects.filter(venue_id=room.venue_id).count() == entries + 1
    entry = AuditEntry.objects.filter(venue_id=room.venue_id).latest("pk")
    assert (entry.action, entry.data["ordinal"], entry.data["ball"]) == ("ball.drawn", 3, ball.number)
    check = audit.verify_chain(room.venue_id)
    head = AuditChainHead.objects.get(venue_id=room.venue_id)
    assert check.ok and head.length == check.entries and head.last_hash == entry.hash
    assert dispatched[-1] == (game.pk, 4, 2.0)
    # A repeated step (a redelivered message) is a no-op.
    assert draw.draw_rng_ball(game_id=game.pk, ordinal=3) is None
    assert Ball.objects.filter(game=game).count() == 3


@pytest.mark.django_db
def test_a_ball_completing_a_line_records_it_and_numbers_the_consoles_list(
    manual_game: Game, card_series: Any, caller: Any, cashier: Any, django_capture_on_commit_callbacks: Any
) -> None:
    game = games.open_sales(game=manual_game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=12, actor=cashier)
    game = games.start_draw(game=games.close_sales(game=game, actor=caller), actor=caller)
    card = Card.objects.get(series=card_series, serial=1)
    *first, last = sorted(n for n in CardGrid.from_json(card.grid).rows[0] if n)
    for number in first:
        draw.enter_ball(game=game, number=number, actor=caller)
    staff = console.staff_stream(game.room_id)
    with django_capture_on_commit_callbacks(execute=True), CaptureQueriesContext(connection) as captured:
        draw.enter_ball(game=game, number=last, actor=caller)
    # The line: one row for the ball (whatever the number of cards completing with it).
    assert [s.split()[0] for s in statements(captured, "bingo_completion")][:1] == ["INSERT"]
    # The consoles' list, in the same transaction: one read of the completion rows (the first balls' cards
    # with them) and one of the listed cards' serials; no claim read while no claim window is open, and
    # never the balls again. Numbered on the staff stream after the ball's event.
    assert statements(captured, "bingo_claim") == []
    assert [s.split()[0] for s in statements(captured, "bingo_completion")][1:] == ["SELECT"]
    assert len([s for s in statements(captured, "bingo_card") if "unnest" in s]) == 1
    assert not [s for s in statements(captured, "bingo_ball") if s.startswith("SELECT COUNT")]
    cursors = [s.split()[0] for s in statements(captured, "halls_streamcursor")]
    # (the staff stream's first event also makes its cursor row: SELECT, INSERT between the two)
    assert cursors[:1] == cursors[-1:] == ["UPDATE"] and cursors.count("UPDATE") == 3, cursors
    assert events.current_seq(staff) == 1
    found = readmodels.unclaimed_winners(game)
    assert {"series": "A", "serial": 1, "since_ball": len(first) + 1} in found["line"]


@pytest.mark.django_db
def test_the_task_reads_no_more_than_the_step(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    dispatched: list[tuple[int, int, float]],
) -> None:  # fmt: skip
    game = rng_game(room, caller, cashier, card_series, ball_set)
    with CaptureQueriesContext(connection) as captured:
        number = tasks.draw_next_ball.run(game.pk, 1)
    assert number == Ball.objects.get(game=game, ordinal=1).number
    assert len([s for s in statements(captured, "bingo_game") if s.startswith("SELECT")]) == 1
    assert tasks.draw_next_ball.run(game.pk, 1) is None


@pytest.mark.django_db(transaction=True)
def test_a_step_that_waited_for_the_lock_reads_the_balls_again(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    dispatched: list[tuple[int, int, float]], monkeypatch: pytest.MonkeyPatch, settings: Any,
) -> None:  # fmt: skip
    settings.HALL_VERIFIABLE_DRAWS = False  # the CSPRNG's step (a committed game's balls are the seed's)
    game = rng_game(room, caller, cashier, card_series, ball_set)
    numbers = list(range(3, 91))
    Ball.objects.bulk_create(  # 88 balls: 1 and 2 are left
        Ball(game=game, ordinal=ordinal, number=number, source=DrawSource.RNG, drawn_at=timezone.now())
        for ordinal, number in enumerate(numbers, start=1)
    )
    Game.objects.filter(pk=game.pk).update(balls_drawn=len(numbers))
    # The step always takes the lowest number it believes is left.
    monkeypatch.setattr(secrets, "choice", min)
    holding = threading.Event()
    errors: list[BaseException] = []
    drawn: list[Ball | None] = []

    def draw_ball_89_holding_the_lock() -> None:
        try:
            with transaction.atomic():
                locked = Game.objects.select_for_update().get(pk=game.pk)
                Ball.objects.create(
                    game=locked, ordinal=89, number=1, source=DrawSource.RNG, drawn_at=timezone.now()
                )
                Game.objects.filter(pk=game.pk).update(balls_drawn=89)
                holding.set()
                time.sleep(1.0)  # the other step's SELECT starts now and waits for the lock
        except BaseException as exc:
            errors.append(exc)
            holding.set()
        finally:
            connection.close()

    def draw_ball_90() -> None:
        try:
            holding.wait(10)
            drawn.append(draw.draw_rng_ball(game_id=game.pk, ordinal=90))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=draw_ball_89_holding_the_lock), threading.Thread(target=draw_ball_90)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    # Its subquery saw 88 balls (1 and 2 left, so 1 would be "lowest"); it read them again and drew 2.
    assert drawn and drawn[0] is not None and (drawn[0].ordinal, drawn[0].number) == (90, 2)
    assert sorted(Ball.objects.filter(game=game).values_list("number", flat=True)) == list(range(1, 91))


@pytest.mark.django_db(transaction=True)
def test_concurrent_audit_entries_and_events_keep_one_chain_and_one_sequence(
    venue: Any, other_venue: Any
) -> None:
    """Threads append to two venues' chains (neither has a head yet) and number events on one new stream."""
    threads_n, per_thread = 8, 15
    start = threading.Barrier(threads_n)
    errors: list[BaseException] = []
    seqs: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        try:
            start.wait()
            for j in range(per_thread):
                with transaction.atomic():
                    target = venue if (i + j) % 2 else other_venue
                    audit.record(
                        venue_id=target.pk,
                        actor="test",
                        action="test.wrote",
                        obj=target,
                        data={"i": i, "j": j},
                    )
                    event = events.emit(
                        "room.test-concurrency", EventType.SESSION_CLOSED, SessionClosed(session=i * 1000 + j)
                    )
                with lock:
                    seqs.append(event.seq)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    total = threads_n * per_thread
    assert sorted(seqs) == list(range(1, total + 1))
    assert StreamCursor.objects.get(stream="room.test-concurrency").seq == total
    for v in (venue, other_venue):
        check = audit.verify_chain(v.pk)
        assert check.ok, check
        assert check.entries == AuditEntry.objects.filter(venue_id=v.pk).count() == total // 2
        assert AuditChainHead.objects.get(venue_id=v.pk).length == check.entries


@pytest.mark.django_db
def test_an_audit_entry_is_returned_as_stored(venue: Any, caller: Any) -> None:
    with transaction.atomic():
        entry = audit.record(
            venue_id=venue.pk, actor=caller, action="test.money", obj=venue,
            data={"amount": Decimal("12.50"), "when": venue.pk},
        )  # fmt: skip
    stored = AuditEntry.objects.get(pk=entry.pk)
    assert (stored.actor_id, stored.actor_label, stored.object_type, stored.object_id) == (
        caller.pk, "caller", "halls.venue", str(venue.pk),
    )  # fmt: skip
    assert (stored.data, stored.created_at, stored.prev_hash, stored.hash) == (
        {"amount": "12.50", "when": venue.pk}, entry.created_at, entry.prev_hash, entry.hash,
    )  # fmt: skip
    assert audit.verify_chain(venue.pk).ok
