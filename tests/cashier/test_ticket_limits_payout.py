"""A prize is never paid as a ticket above the venue's maximum ticket value: the payout is refused (409
ticket_above_maximum, in Spanish), the prize stays payable and nothing is written; paid in cash it goes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import translation

from bingo.traditional.models import CardSeries, Game
from halls.cashier.ledger import Kind
from halls.cashier.models import CashierSettings, LedgerTransaction, Leg, Payable, Ticket
from halls.cashier.services import payables
from halls.errors import Conflict
from halls.models import AuditEntry, Venue
from tests.cashier.payable_support import balance, line_and_bingo, on_shift

pytestmark = pytest.mark.django_db
D = Decimal


def _written() -> tuple[int, int, int, int]:
    return (
        LedgerTransaction.objects.count(),
        Leg.objects.count(),
        AuditEntry.objects.count(),
        Ticket.objects.count(),
    )


def test_a_bingo_above_the_maximum_is_not_paid_as_a_ticket(
    manual_game: Game, card_series: CardSeries, caller: User, cashier: User, venue: Venue
) -> None:
    won: dict[str, Any] = line_and_bingo(manual_game, card_series, caller, cashier)
    bingo: Payable = won["bingo"]  # 4.00
    CashierSettings.objects.create(venue=venue, ticket_max_amount=D("3.00"), ticket_cage_above=D("1.00"))
    on_shift(cashier, venue, "10.00")
    before = _written()
    with translation.override("es"), pytest.raises(Conflict) as refused:
        payables.pay_payable(payable=bingo, method="ticket", actor=cashier, key="t-1")
    assert refused.value.code == "ticket_above_maximum"
    assert "4,00" in refused.value.message and "3,00" in refused.value.message
    assert _written() == before and Payable.objects.get(pk=bingo.pk).state != "paid"
    assert balance(venue, Kind.TICKETS) == D("0.00")
    paid = payables.pay_payable(payable=bingo, method="cash", actor=cashier, key="c-1")
    assert paid.payable.state == "paid" and paid.ticket is None
