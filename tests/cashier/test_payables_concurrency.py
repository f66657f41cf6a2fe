"""One prize, many cashiers at once (threads, own connections): it is paid once; a retry of the winning key
answers its payout, every other attempt is refused as already paid; the books hold."""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User

from halls.cashier.ledger import Kind
from halls.cashier.models import LedgerTransaction, Payable, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import payables
from halls.errors import Conflict
from halls.models import Venue
from tests.cashier.payable_support import balance, cash, new_cashier, on_shift
from tests.threads import in_threads

D = Decimal
CASHIERS = 12
RETRIES = 12


@pytest.mark.django_db(transaction=True)
def test_a_prize_paid_by_many_cashiers_at_once_is_paid_once(venue: Venue) -> None:
    payable = payables.create_payable(
        venue_id=venue.pk,
        kind="table",
        source="pool.award:424242",
        description="Mesa 1 · asiento 1 · póker",
        amount=D("5.00"),
        actor=None,
    )
    assert payable is not None
    people = [new_cashier(venue, f"cajero-{i}") for i in range(CASHIERS)]
    shifts = [on_shift(person, venue, "10.00") for person in people]
    paid: list[tuple[str, bool]] = []
    refused: list[str] = []
    guard = threading.Lock()

    def attempt(person: User, key: str) -> Any:
        def go() -> None:
            try:
                payout = payables.pay_payable(payable=payable, method="cash", actor=person, key=key)
            except Conflict as exc:
                with guard:
                    refused.append(exc.code)
                return
            with guard:
                paid.append((key, payout.replayed))

        return go

    workers = [attempt(person, f"own-{i}") for i, person in enumerate(people)]
    workers += [attempt(people[0], "double-click") for _ in range(RETRIES)]
    assert in_threads(workers, timeout=120) == []
    first = [key for key, replayed in paid if not replayed]
    assert len(first) == 1, paid
    replays = [key for key, replayed in paid if replayed]
    # Only the winning key is answered again (the double clicks, when one of them won); all else is refused.
    assert all(key == first[0] == "double-click" for key in replays)
    assert len(paid) + len(refused) == CASHIERS + RETRIES
    assert set(refused) == {"already_paid"}
    assert LedgerTransaction.objects.filter(kind=TxKind.PRIZE_PAYOUT).count() == 1
    assert sum((cash(shift) for shift in shifts), D(0)) == D("10.00") * CASHIERS - D("5.00")
    row = Payable.objects.get(pk=payable.pk)
    assert (row.state, row.receipt) == ("paid", "R-000001")
    assert balance(venue, Kind.PRIZES_PAYABLE) == D("0.00")
    assert books.trial_balance(venue.pk).holds
