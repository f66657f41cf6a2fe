"""The one lock order (halls.locks.Rank), asserted by the lock helpers of every app."""

from __future__ import annotations

import pytest
from django.db import transaction

from bingo.traditional.models import Game
from bingo.traditional.services import locks as bingo_locks
from halls import events
from halls.locks import LockOrderError, Rank, only_held_or_higher, take
from halls.models import Room
from halls.services import locks as hall_locks


class Boom(Exception):
    pass


def test_locks_in_the_order_pass(room: Room, manual_game: Game) -> None:
    with transaction.atomic():
        hall_locks.lock_room(room.pk)
        bingo_locks.lock_game(manual_game.pk)
        take(Rank.POOL, 7)
        take(Rank.POOL, 3)  # the same rank again
        hall_locks.lock_audit_head(room.venue_id)
        events.next_seq(room.stream)


def test_a_lock_against_the_order_raises_and_names_both(manual_game: Game) -> None:
    with transaction.atomic():
        take(Rank.POOL, 7)
        with pytest.raises(LockOrderError, match=rf"game {manual_game.pk} taken after pool 7"):
            bingo_locks.lock_game(manual_game.pk)


def test_an_audit_head_after_a_stream_cursor_raises(room: Room) -> None:
    with transaction.atomic():
        events.next_seq(room.stream)
        with pytest.raises(LockOrderError) as raised:
            hall_locks.lock_audit_head(room.venue_id)
    assert f"audit_head {room.venue_id} taken after stream {room.stream}" in str(raised.value)
    assert "AUDIT_HEAD comes before STREAM" in str(raised.value)


def test_a_lock_the_transaction_holds_may_be_taken_again(manual_game: Game) -> None:
    with transaction.atomic():
        bingo_locks.lock_game(manual_game.pk)
        take(Rank.POOL, 7)
        bingo_locks.lock_game(manual_game.pk)  # held already: it waits for nothing
        with pytest.raises(LockOrderError):
            take(Rank.GAME, manual_game.pk + 1)


def _fails_after_a_stream() -> None:
    with transaction.atomic():
        take(Rank.STREAM, "room.x")
        raise Boom


def test_each_transaction_starts_afresh(manual_game: Game) -> None:
    with transaction.atomic():
        take(Rank.STREAM, "room.x")
    with transaction.atomic():
        bingo_locks.lock_game(manual_game.pk)
    with pytest.raises(Boom):
        _fails_after_a_stream()
    with transaction.atomic():
        bingo_locks.lock_game(manual_game.pk)


@pytest.mark.django_db(transaction=True)
def test_a_committed_or_rolled_back_transaction_holds_nothing_after() -> None:
    with transaction.atomic():
        take(Rank.STREAM, "room.x")
        # A savepoint inside holds the outer transaction's locks too.
        with transaction.atomic(), pytest.raises(LockOrderError):
            take(Rank.ROOM, 1)
    with transaction.atomic():
        take(Rank.ROOM, 1)
    with pytest.raises(Boom):
        _fails_after_a_stream()
    with transaction.atomic():
        take(Rank.ROOM, 1)
    take(Rank.STREAM, "room.x")  # autocommit: a statement is its own transaction
    take(Rank.ROOM, 1)


@pytest.mark.django_db
def test_a_further_unit_takes_only_locks_held_or_of_a_higher_rank() -> None:
    with transaction.atomic():
        take(Rank.GAME, 5)
        take(Rank.POOL, 7)
        only_held_or_higher()
        take(Rank.GAME, 5)  # held
        take(Rank.POOL, 7)  # held
        with pytest.raises(LockOrderError, match="pool 8 taken after pool 7 by a further unit"):
            take(Rank.POOL, 8)  # the same rank, another key: not in order with the first unit's
        with pytest.raises(LockOrderError, match="game 6 taken after pool 7"):
            take(Rank.GAME, 6)
        take(Rank.AUDIT_HEAD, 1)  # above every rank held
    with transaction.atomic():
        take(Rank.POOL, 8)  # the next transaction starts afresh
        take(Rank.POOL, 9)


def _in_a_savepoint_rolled_back() -> None:
    with transaction.atomic():
        take(Rank.GAME, 5)
        raise Boom


@pytest.mark.django_db
def test_a_further_unit_after_a_rolled_back_savepoint_takes_nothing_more() -> None:
    from halls.locks import forget_further_units

    with transaction.atomic():
        take(Rank.GAME, 5)
        assert only_held_or_higher()
        with pytest.raises(Boom):
            _in_a_savepoint_rolled_back()  # the locks held are no longer known
        with pytest.raises(LockOrderError, match="no longer known"):
            take(Rank.AUDIT_HEAD, 1)
        assert not only_held_or_higher()
        forget_further_units()
        take(Rank.AUDIT_HEAD, 1)


@pytest.mark.django_db
def test_the_cashier_ranks_shift_payable_ticket_card_account_audit() -> None:
    """The cashier's locks in the order halls.locks.Rank gives them; each against it raises, naming both."""
    order = [Rank.SHIFT, Rank.PAYABLE, Rank.TICKET, Rank.PLAYER_CARD, Rank.ACCOUNT, Rank.AUDIT_HEAD]
    with transaction.atomic():
        for rank in order:
            take(rank, 1)
    for later, earlier in zip(order[1:], order, strict=False):
        with transaction.atomic():
            take(later, 2)
            with pytest.raises(
                LockOrderError, match=rf"{earlier.name.lower()} 1 taken after {later.name.lower()} 2"
            ):
                take(earlier, 1)
