"""A group of card spends or cash-ins costs a fixed number of statements, however many postings it holds
(issue 30: the ledger's group path at >= 1,000 postings/s), and what it writes is what it wrote before:
the books, each balance, the audit chain and every posting's seal."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from halls import locks
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, Means, Shift, ShiftState
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards
from halls.cashier.services.locks import lock_and_move_balances
from halls.errors import Conflict
from halls.models import AuditEntry, Venue
from halls.services import audit, verify
from tests.cashier.test_cards_spend_group import _order
from tests.cashier.ticket_support import funded_card

D = Decimal

# PostgreSQL's only (SQLite posts one by one): the SQLite run deselects this file (tests/conftest.py).


def _spend(card_id: int, venue_id: int, key: str) -> player_cards._Spend:
    return _order(card_id, venue_id, "0.50", key)


def _cash_in(card_id: int, venue_id: int, key: str, actor: User) -> player_cards._CashIn:
    return player_cards._CashIn(
        card_id=card_id,
        venue_id=venue_id,
        amount=D("2.00"),
        means=Means.CASH,
        ledger_key=f"card_cash_in:{key}",
        actor=actor,
        language=None,
    )


def _statements(write: object, orders: list[object]) -> int:
    with CaptureQueriesContext(connection) as captured:
        answers = write(orders)  # type: ignore[operator]
    assert not any(isinstance(a, BaseException) for a in answers), answers
    return len(captured.captured_queries)


@pytest.mark.django_db(transaction=True)
def test_a_group_of_spends_costs_the_same_statements_for_2_or_16_postings(venue: Venue) -> None:
    cards = [funded_card(venue, n, "10.00") for n in range(1, 17)]
    sales = books.venue_account(venue.pk, Kind.SALES)
    small = _statements(player_cards._spend_together, [_spend(c.pk, venue.pk, f"a{c.pk}") for c in cards[:2]])
    large = _statements(player_cards._spend_together, [_spend(c.pk, venue.pk, f"b{c.pk}") for c in cards])
    # The cards locked, their accounts locked, the sales account and the keys posted (one statement), the
    # transactions and legs, the
    # balances (locked and moved in one statement), the audit chain's head and its entries; BEGIN, COMMIT.
    assert small == large <= 7 + 2
    for card in cards:
        assert player_cards.balance(card) == D("10.00") - D("0.50") * (2 if card in cards[:2] else 1)
    assert Account.objects.get(pk=sales.pk).balance == D("9.00")
    assert books.trial_balance(venue.pk).holds
    assert verify.verify_audit(venue_ids=[venue.pk]).ok  # the chain and every posting's seal


@pytest.mark.django_db(transaction=True)
def test_a_group_of_cash_ins_costs_the_same_statements_for_2_or_16_postings(
    venue: Venue, cashier: User
) -> None:
    cards = [funded_card(venue, n, "0") for n in range(1, 17)]
    # The first group makes the cards' accounts and the drawer; then two groups of 2 and 16 cash-ins.
    player_cards._cash_ins_allowed([_cash_in(c.pk, venue.pk, f"z{c.pk}", cashier) for c in cards])
    small = _statements(
        player_cards._cash_ins_allowed, [_cash_in(c.pk, venue.pk, f"a{c.pk}", cashier) for c in cards[:2]]
    )
    large = _statements(
        player_cards._cash_ins_allowed, [_cash_in(c.pk, venue.pk, f"b{c.pk}", cashier) for c in cards]
    )
    # The open shifts (found and locked in one statement), the cards, the drawers and the cards' accounts
    # (one statement), the keys, the transactions and legs, the balances, the audit chain's head and its
    # entries; BEGIN, COMMIT.
    assert small == large <= 8 + 2
    for card in cards:
        assert player_cards.balance(card) == D("2.00") * (3 if card in cards[:2] else 2)
    shift = Shift.objects.get(cashier=cashier, state=ShiftState.OPEN)
    assert books.drawer(shift, Means.CASH).balance == D("2.00") * (16 + 2 + 16)
    assert books.trial_balance(venue.pk).holds
    assert verify.verify_audit(venue_ids=[venue.pk]).ok


@pytest.mark.django_db(transaction=True)
def test_a_replayed_key_in_a_group_is_answered_from_the_lookup_under_the_cards_locks(venue: Venue) -> None:
    card = funded_card(venue, 1, "10.00")
    first = player_cards._spend_together([_spend(card.pk, venue.pk, "k1"), _spend(card.pk, venue.pk, "k2")])
    again = player_cards._spend_together([_spend(card.pk, venue.pk, "k1"), _spend(card.pk, venue.pk, "k3")])
    assert [a.replayed for a in again] == [True, False]  # type: ignore[union-attr]
    assert again[0].transaction.pk == first[0].transaction.pk  # type: ignore[union-attr]
    assert player_cards.balance(card) == D("8.50")
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db(transaction=True)
def test_balances_locked_and_moved_in_one_statement_through_their_rank(venue: Venue) -> None:
    one, two = funded_card(venue, 1, "5.00"), funded_card(venue, 2, "5.00")
    a, b = books.card_account(one), books.card_account(two)
    with transaction.atomic():
        with CaptureQueriesContext(connection) as captured:
            assert lock_and_move_balances({b.pk: D("-1.25"), a.pk: D("0.25")}) == sorted([a.pk, b.pk])
        assert len(captured.captured_queries) == 1
        assert locks.holds(locks.Rank.ACCOUNT, {a.pk, b.pk})
    assert Account.objects.get(pk=a.pk).balance == D("5.25")
    assert Account.objects.get(pk=b.pk).balance == D("3.75")


@pytest.mark.django_db(transaction=True)
def test_append_many_writes_the_entries_record_many_would(venue: Venue, operator: User) -> None:
    card = funded_card(venue, 1, "0")
    entries: list[books.AuditItem] = [
        (operator, "test.one", card, {"amount": D("1.50"), "n": 1}),
        ("T1", "test.two", card, None),
        (None, "test.three", venue, {"nested": {"x": [1, "2"]}}),
    ]
    with transaction.atomic():
        audit.append_many(venue_id=venue.pk, entries=entries)
    with transaction.atomic():
        audit.record_many(venue_id=venue.pk, entries=entries)
    rows = list(
        AuditEntry.objects.filter(venue_id=venue.pk, action__startswith="test.")
        .order_by("pk")
        .values_list("actor_id", "actor_label", "action", "object_type", "object_id", "data", "alg")
    )
    assert rows[:3] == rows[3:]
    assert rows[0] == (
        operator.pk,
        "operator",
        "test.one",
        "cashier.playercard",
        str(card.pk),
        {"amount": "1.50", "n": 1},
        rows[0][6],
    )
    assert audit.verify_chain(venue.pk).ok


@pytest.mark.django_db(transaction=True)
def test_each_refusal_of_a_group_speaks_its_askers_language_whatever_the_writers(venue: Venue) -> None:
    from dataclasses import replace

    from django.utils import translation

    card = funded_card(venue, 1, "0.40")
    orders = [
        replace(_spend(card.pk, venue.pk, "es"), language="es"),
        replace(_spend(card.pk, venue.pk, "en"), language="en"),
    ]
    with translation.override("es"):  # the writer's thread speaks Spanish, as the first asker
        spanish, english = player_cards._spend_together(orders)
    assert isinstance(spanish, Conflict) and isinstance(english, Conflict)
    assert str(spanish.message).startswith("El saldo de la tarjeta")
    assert str(english.message).startswith("The card's balance")
