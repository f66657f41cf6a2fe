"""Two cashiers redeeming one ticket at the same moment, with other ticket traffic around them (tickets
issued, others redeemed, printed refusals), on PostgreSQL with a connection per thread: every ticket is
redeemed exactly once, the loser is refused (409), nothing fails with a database error (a deadlock or a
serialization failure is retried inside the service), and the books balance."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from halls import metrics
from halls.cashier.models import LedgerTransaction, Ticket, TicketEvent, TicketEventKind, TicketState, TxKind
from halls.cashier.services import tickets
from halls.errors import Conflict
from halls.models import Role, Venue
from tests.cashier.ticket_support import holds, open_till, tickets_balance
from tests.conftest import make_user
from tests.threads import in_threads

pytestmark = pytest.mark.cashier_off_shift

D = Decimal
CASHIERS = 8
TICKETS = 16


def _cashiers(venue: Venue) -> list[User]:
    users = [make_user(f"cajero{i}", venue, Role.CASHIER) for i in range(CASHIERS)]
    for i, user in enumerate(users):
        open_till(venue, user, name=f"Caja {i}", float_amount="1000.00")
    return users


@pytest.mark.django_db(transaction=True)
def test_racing_redemptions_with_other_traffic_redeem_each_ticket_once(venue: Venue) -> None:
    users = _cashiers(venue)
    issued = [
        tickets.issue_for_payment(
            venue_id=venue.pk, amount=D("5.00") + i, means="cash", key=f"t{i}", actor=users[i % CASHIERS]
        ).ticket
        for i in range(TICKETS)
    ]
    rng = random.Random(30)
    work: list[Callable[[], None]] = []
    won: list[int] = []
    refused: list[str] = []
    other: list[str] = []
    guard = threading.Lock()

    def redeem(user: User, ticket: Ticket, key: str) -> Callable[[], None]:
        def run() -> None:
            try:
                tickets.redeem_for_cash(venue_id=venue.pk, number=ticket.number, key=key, actor=user)
            except Conflict as exc:
                with guard:
                    refused.append(exc.code)
                return
            with guard:
                won.append(ticket.pk)

        return run

    def traffic(user: User, n: int) -> Callable[[], None]:
        def run() -> None:
            for k in range(3):  # a ticket issued and redeemed at once by the same till
                made = tickets.issue_for_payment(
                    venue_id=venue.pk, amount=D("2.00"), means="cash", key=f"o{n}:{k}", actor=user
                ).ticket
                tickets.redeem_for_cash(venue_id=venue.pk, number=made.number, key=f"r{n}:{k}", actor=user)
                with guard:
                    other.append(made.number)

        return run

    for i, ticket in enumerate(issued):
        a, b = rng.sample(users, 2)
        work += [redeem(a, ticket, f"a{i}"), redeem(b, ticket, f"b{i}")]
    work += [traffic(users[n % CASHIERS], n) for n in range(CASHIERS)]
    rng.shuffle(work)

    retried_before = _retries()
    errors = in_threads(work)

    assert not errors, errors
    assert sorted(won) == sorted(t.pk for t in issued)  # each once
    assert refused == ["ticket_redeemed"] * TICKETS
    assert len(other) == 3 * CASHIERS
    assert not Ticket.objects.filter(venue=venue).exclude(state=TicketState.REDEEMED).exists()
    assert LedgerTransaction.objects.filter(venue=venue, kind=TxKind.TICKET_REDEEM).count() == TICKETS + len(
        other
    )
    assert tickets_balance(venue) == 0
    refusals = TicketEvent.objects.filter(ticket__venue=venue, kind=TicketEventKind.REFUSED).count()
    assert refusals == TICKETS
    assert holds(venue)
    # The lock order (and FOR NO KEY UPDATE under commit-time foreign-key checks) leaves no deadlock to retry.
    assert _retries() == retried_before


def _retries() -> float:
    return sum(
        sample.value
        for metric in metrics.DB_RETRIES.collect()
        for sample in metric.samples
        if sample.name.endswith("_total") and sample.labels.get("reason") == "deadlock"
    )
