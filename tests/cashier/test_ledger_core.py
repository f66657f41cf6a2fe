"""The ledger's posting service: balanced, idempotent by key, guarded accounts never below zero, audited;
and the database's own balance rule (PostgreSQL at commit, SQLite once the declared legs are in)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.utils import timezone

from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, LedgerTransaction, Leg, Means, PlayerCard, Till, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import shifts
from halls.errors import Conflict
from halls.models import AuditEntry, Role, Venue
from tests.conftest import make_user

D = Decimal


@pytest.fixture
def card(venue: Venue) -> PlayerCard:
    return PlayerCard.objects.create(venue=venue, number="100000000001", created_at=timezone.now())


def _cash_in(venue: Venue, card: PlayerCard, amount: str, key: str) -> books.Posted:
    house = books.venue_account(venue.pk, Kind.HOUSE)
    mine = books.card_account(card)
    return books.post(
        venue_id=venue.pk,
        kind=TxKind.CARD_CASH_IN,
        key=key,
        legs=[ledger.debit(house.pk, D(amount)), ledger.credit(mine.pk, D(amount))],
        actor="test",
    )


def _spend(venue: Venue, card: PlayerCard, amount: str, key: str) -> books.Posted:
    sales = books.venue_account(venue.pk, Kind.SALES)
    mine = books.card_account(card)
    return books.post(
        venue_id=venue.pk,
        kind=TxKind.CARD_SPEND,
        key=key,
        legs=[ledger.debit(mine.pk, D(amount)), ledger.credit(sales.pk, D(amount))],
        actor="terminal-1",
    )


@pytest.mark.django_db
def test_a_posting_moves_balances_on_their_normal_sides_and_is_audited(
    venue: Venue, card: PlayerCard
) -> None:
    posted = _cash_in(venue, card, "20.00", "k1")
    _spend(venue, card, "7.50", "k2")
    assert not posted.replayed
    assert books.card_account(card).balance == D("12.50")  # credit-normal: what the hall owes the bearer
    assert books.venue_account(venue.pk, Kind.SALES).balance == D("7.50")
    assert books.venue_account(venue.pk, Kind.HOUSE).balance == D("-20.00")  # house is unguarded
    entry = AuditEntry.objects.get(action="ledger.card_cash_in")
    assert entry.data["legs"] == [["house", "20.00"], [f"card:{card.number}", "-20.00"]]
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db
def test_the_same_key_is_a_replay_and_another_operation_under_it_is_refused(
    venue: Venue, card: PlayerCard
) -> None:
    first = _cash_in(venue, card, "20.00", "k1")
    again = _cash_in(venue, card, "20.00", "k1")
    assert again.replayed and again.transaction.pk == first.transaction.pk
    assert books.card_account(card).balance == D("20.00")
    with pytest.raises(Conflict) as refused:
        _cash_in(venue, card, "25.00", "k1")
    assert refused.value.code == "idempotency_key_reused"
    assert LedgerTransaction.objects.count() == 1


@pytest.mark.django_db
def test_a_card_cannot_spend_more_than_it_holds_and_nothing_is_written(
    venue: Venue, card: PlayerCard
) -> None:
    _cash_in(venue, card, "5.00", "k1")
    with pytest.raises(Conflict) as refused:
        _spend(venue, card, "5.01", "k2")
    assert refused.value.code == "insufficient_balance"
    assert "5,00" in refused.value.message or "5.00" in refused.value.message
    assert LedgerTransaction.objects.count() == 1 and Leg.objects.count() == 2
    _spend(venue, card, "5.00", "k3")
    assert books.card_account(card).balance == D("0.00")


def test_check_refuses_unbalanced_zero_and_non_cent_legs() -> None:
    with pytest.raises(ledger.Unbalanced):
        ledger.check([ledger.debit(1, D("1.00")), ledger.credit(2, D("0.99"))])
    with pytest.raises(ledger.Unbalanced):
        ledger.check([ledger.debit(1, D("0.001")), ledger.credit(2, D("0.001"))])
    with pytest.raises(ledger.Unbalanced):
        ledger.check([ledger.debit(1, D("1")), ledger.credit(1, D("1"))])  # one account: no transfer
    legs = ledger.check([ledger.debit(3, D("1")), ledger.debit(3, D("1")), ledger.credit(2, D("2"))])
    assert legs == (ledger.Leg(2, D("-2")), ledger.Leg(3, D("2")))


def _write_unbalanced(venue: Venue) -> None:
    """Legs of 3.00 and 2.00 written by hand, past the service, in one transaction."""
    sales = books.venue_account(venue.pk, Kind.SALES)
    house = books.venue_account(venue.pk, Kind.HOUSE)
    with transaction.atomic():
        tx = LedgerTransaction.objects.create(
            venue=venue, kind=TxKind.SALE, key="bad", actor_label="x", created_at=timezone.now(), leg_count=2
        )
        Leg.objects.create(transaction=tx, account=sales, amount=D("-3.00"))
        Leg.objects.create(transaction=tx, account=house, amount=D("2.00"))
        if connection.vendor == "postgresql":
            connection.check_constraints()  # SET CONSTRAINTS ALL IMMEDIATE: the deferred trigger fires


@pytest.mark.django_db(transaction=True)
def test_the_database_refuses_legs_that_do_not_balance(venue: Venue) -> None:
    with pytest.raises((IntegrityError, DatabaseError), match="does not balance"):
        _write_unbalanced(venue)
    assert not LedgerTransaction.objects.filter(key="bad").exists()


@pytest.mark.django_db
def test_a_guarded_account_cannot_be_written_below_zero_by_the_database(
    venue: Venue, card: PlayerCard
) -> None:
    account = books.card_account(card)
    with pytest.raises(IntegrityError), transaction.atomic():
        Account.objects.filter(pk=account.pk).update(balance=D("-0.01"))


@pytest.mark.django_db
def test_opening_a_shift_puts_the_counted_float_in_its_cash_drawer(venue: Venue) -> None:
    cashier = make_user("cajera", venue, Role.CASHIER)  # off shift (the `cashier` fixture is on one)
    till = Till.objects.create(venue=venue, name="Caja 2")
    shift = shifts.open_shift(till=till, cashier=cashier, float_amount=D("150.00"), actor=cashier)
    assert books.drawer(shift, Means.CASH).balance == D("150.00")
    assert shifts.open_shift_of(venue_id=venue.pk, cashier=cashier) == shift
    with pytest.raises(Conflict) as refused:
        shifts.open_shift(till=till, cashier=cashier, float_amount=D("0"), actor=cashier)
    assert refused.value.code == "shift_already_open"
    assert books.trial_balance(venue.pk).holds
