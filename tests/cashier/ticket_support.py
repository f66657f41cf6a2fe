"""What the ticket tests share: a till with an open shift, a funded player card, the books' totals."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import User
from django.utils import timezone

from halls.cashier import cardnumber, ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, LedgerTransaction, Leg, PlayerCard, Shift, Till, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import shifts
from halls.models import Venue

D = Decimal


def open_till(venue: Venue, cashier: User, name: str = "Caja 1", float_amount: str = "100.00") -> Shift:
    till = Till.objects.create(venue=venue, name=name)
    return shifts.open_shift(till=till, cashier=cashier, float_amount=D(float_amount), actor=cashier)


def card_number(n: int) -> str:
    """A valid 16-digit card number (halls.cashier.cardnumber) made from `n`."""
    payload = f"{10**14 + n:015d}"
    return payload + cardnumber.check_digit(payload)


def funded_card(venue: Venue, n: int = 1, amount: str = "50.00") -> PlayerCard:
    number = card_number(n)
    card = PlayerCard.objects.create(venue=venue, number=number, created_at=timezone.now())
    if D(amount) > 0:
        house = books.venue_account(venue.pk, Kind.HOUSE)
        books.post(
            venue_id=venue.pk,
            kind=TxKind.CARD_CASH_IN,
            key=f"test:fund:{number}",
            legs=[ledger.debit(house.pk, D(amount)), ledger.credit(books.card_account(card).pk, D(amount))],
            actor="test",
        )
    return card


def balance(account: Account) -> Decimal:
    return Account.objects.get(pk=account.pk).balance


def tickets_balance(venue: Venue) -> Decimal:
    return balance(books.venue_account(venue.pk, Kind.TICKETS))


def books_count() -> tuple[int, int]:
    return LedgerTransaction.objects.count(), Leg.objects.count()


def holds(venue: Venue) -> bool:
    return books.trial_balance(venue.pk).holds
