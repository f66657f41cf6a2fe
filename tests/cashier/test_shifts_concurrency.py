"""Closing a shift while its till is busy: the close waits for the operations holding the shift, those
after it are refused, and the cash-up expects exactly what the ledger holds (threads, own connections)."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db import transaction

from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, LedgerTransaction, Means, Shift, ShiftState, Till, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import shifts
from halls.errors import Conflict
from halls.models import Venue
from tests.threads import in_threads

# The cashier opens its shift in each test, with the float the test counts.
pytestmark = pytest.mark.cashier_off_shift


D = Decimal
SELLERS = 16


@pytest.mark.django_db(transaction=True)
def test_a_close_among_sales_expects_exactly_the_sales_before_it(
    venue: Venue, cashier: User, operator: User
) -> None:
    till = Till.objects.create(venue=venue, name="Caja 1")
    shift = shifts.open_shift(till=till, cashier=cashier, float_amount=D("100.00"), actor=cashier)
    sales_account = books.venue_account(venue.pk, Kind.SALES)
    sold: list[int] = []
    refused: list[str] = []
    guard = threading.Lock()

    def sell(i: int) -> None:
        try:
            with transaction.atomic():
                mine = shifts.open_shift_of(venue_id=venue.pk, cashier=cashier)
                cash = books.drawer(mine, Means.CASH)
                books.post(
                    venue_id=venue.pk,
                    kind=TxKind.SALE,
                    key=f"sale:{i}",
                    legs=[ledger.debit(cash.pk, D("1.00")), ledger.credit(sales_account.pk, D("1.00"))],
                    actor=cashier,
                    shift=mine,
                )
        except Conflict as exc:
            with guard:
                refused.append(exc.code)
            return
        with guard:
            sold.append(i)

    def close() -> None:
        shifts.close_shift(
            shift=shift,
            counted={"cash": D("108.00"), "bank_card": D("0")},
            actor=cashier,
            witness="operator",
            witness_password="pw-operator",
        )

    workers = [lambda i=i: sell(i) for i in range(SELLERS)]
    errors = in_threads([*workers[: SELLERS // 2], close, *workers[SELLERS // 2 :]])
    assert not errors, errors
    assert len(sold) + len(refused) == SELLERS
    assert set(refused) <= {"no_open_shift"}  # a shift closed while a sale waited for it counts as none
    closed = Shift.objects.get(pk=shift.pk)
    assert closed.state == ShiftState.CLOSED
    expected = D("100.00") + len(sold)
    assert closed.expected == {"cash": f"{expected:.2f}", "bank_card": "0.00"}
    assert closed.difference == D("108.00") - expected
    sales = LedgerTransaction.objects.filter(kind=TxKind.SALE)
    assert sales.count() == len(sold)
    assert closed.closed_at is not None and all(tx.created_at <= closed.closed_at for tx in sales)
    assert all(a.balance == 0 for a in Account.objects.filter(shift=shift))
    assert books.trial_balance(venue.pk).holds
