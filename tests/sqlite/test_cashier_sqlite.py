"""The cashier on SQLite (the embedded hall): card spends from several threads are written one by one (no
group commit: one writer at a time), exact; a ticket issued and redeemed once through the locks that are
FOR NO KEY UPDATE on PostgreSQL (no row locks on SQLite: its transactions hold the write lock)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from django.db import connection

from halls.cashier.models import LedgerTransaction, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards, tickets
from halls.errors import Conflict
from halls.models import Role, Venue
from tests.cashier.ticket_support import funded_card, open_till
from tests.conftest import make_user
from tests.threads import in_threads

pytestmark = pytest.mark.django_db(transaction=True)
D = Decimal


def test_spends_from_threads_are_exact_without_a_group(venue: Venue) -> None:
    assert connection.vendor == "sqlite"
    card = funded_card(venue, 1, "3.00")
    group = player_cards._spend_group.get()
    before = group.items
    answers: list[object] = []

    def spend(i: int) -> None:
        try:
            answers.append(player_cards.spend(card=card, amount=D("1.00"), key=f"s{i}", actor=f"T{i}"))
        except Conflict as exc:
            answers.append(exc.code)

    def worker(i: int) -> Callable[[], None]:
        return lambda: spend(i)

    assert not in_threads([worker(i) for i in range(5)])
    assert sorted(str(a) for a in answers if isinstance(a, str)) == ["insufficient_balance"] * 2
    assert player_cards.balance(card) == 0
    assert LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).count() == 3
    assert group.items == before  # alone, each in its own transaction
    assert books.trial_balance(venue.pk).holds


def test_a_ticket_is_redeemed_once_on_sqlite(venue: Venue) -> None:
    cashier = make_user("cajera", venue, Role.CASHIER)
    open_till(venue, cashier)
    ticket = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("5.00"), means="cash", key="i", actor=cashier
    )
    tickets.redeem_for_cash(venue_id=venue.pk, number=ticket.ticket.number, key="r1", actor=cashier)
    with pytest.raises(Conflict) as refused:
        tickets.redeem_for_cash(venue_id=venue.pk, number=ticket.ticket.number, key="r2", actor=cashier)
    assert refused.value.code == "ticket_redeemed"
    assert books.trial_balance(venue.pk).holds
