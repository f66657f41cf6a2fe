"""32 threads at once on one card, one ticket and one idempotency key, each thread on its own database
connection: exactly the affordable spends succeed, the ticket pays once, a replayed key writes once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import (
    LedgerTransaction,
    Leg,
    Means,
    PlayerCard,
    Ticket,
    TicketState,
    Till,
    TxKind,
)
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards, shifts, tickets
from halls.errors import Conflict
from halls.models import Venue
from tests.threads import in_threads

D = Decimal
THREADS = 32


def _run(work: Callable[[int], object]) -> tuple[list[object], list[Conflict]]:
    """`work(i)` on THREADS threads at once: what succeeded, and the refusals (anything else fails)."""
    done: list[object] = []
    refused: list[Conflict] = []
    guard = threading.Lock()

    def one(i: int) -> Callable[[], None]:
        def run() -> None:
            try:
                result = work(i)
            except Conflict as exc:
                with guard:
                    refused.append(exc)
                return
            with guard:
                done.append(result)

        return run

    errors = in_threads([one(i) for i in range(THREADS)])
    assert not errors, errors
    assert len(done) + len(refused) == THREADS
    return done, refused


def _cash_in(venue: Venue, card: PlayerCard, amount: Decimal) -> None:
    house = books.venue_account(venue.pk, Kind.HOUSE)
    books.post(
        venue_id=venue.pk,
        kind=TxKind.CARD_CASH_IN,
        key=f"seed:{card.number}",
        legs=[ledger.debit(house.pk, amount), ledger.credit(books.card_account(card).pk, amount)],
        actor="test",
    )


def _spend(venue: Venue, card: PlayerCard, amount: Decimal, key: str) -> object:
    """A terminal's purchase through the cards service (card locked, then its account)."""
    return player_cards.spend(card=card, amount=amount, key=key, actor="terminal", device="T1")


@pytest.fixture
def card(venue: Venue) -> PlayerCard:
    return PlayerCard.objects.create(venue=venue, number="200000000001", created_at=timezone.now())


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("balance", "price"), [("50.00", "3.00"), ("31.99", "1.00"), ("5.00", "7.50")])
def test_thirty_two_spends_of_one_card_exactly_the_affordable_ones_succeed(
    venue: Venue, card: PlayerCard, balance: str, price: str
) -> None:
    B, x = D(balance), D(price)
    _cash_in(venue, card, B)
    done, refused = _run(lambda i: _spend(venue, card, x, f"spend:{i}"))
    n = int(B // x)
    assert len(done) == n
    assert {exc.code for exc in refused} <= {"insufficient_balance"} and len(refused) == THREADS - n
    account = books.card_account(card)
    assert account.balance == B - n * x >= 0
    assert LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).count() == n
    assert books.venue_account(venue.pk, Kind.SALES).balance == n * x
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db(transaction=True)
def test_thirty_two_replays_of_one_key_write_one_transaction(venue: Venue, card: PlayerCard) -> None:
    _cash_in(venue, card, D("100.00"))
    done, refused = _run(lambda i: _spend(venue, card, D("2.50"), "one-key"))
    assert not refused
    moves = [m for m in done if isinstance(m, player_cards.CardMove)]
    assert len(moves) == THREADS and len({m.transaction.pk for m in moves}) == 1
    assert sum(1 for m in moves if not m.replayed) == 1
    assert LedgerTransaction.objects.filter(key="card_spend:one-key").count() == 1
    assert Leg.objects.filter(transaction__key="card_spend:one-key").count() == 2
    assert books.card_account(card).balance == D("97.50")
    assert books.trial_balance(venue.pk).holds


@pytest.mark.cashier_off_shift  # its shift is opened here with a float of 500.00
@pytest.mark.django_db(transaction=True)
def test_thirty_two_redemptions_of_one_ticket_pay_it_once(venue: Venue, cashier: User) -> None:
    """The same ticket presented 32 times at once (each its own request): one pays, 31 are refused
    ticket_redeemed, and the drawer gave the amount once."""
    till = Till.objects.create(venue=venue, name="Caja 1")
    shift = shifts.open_shift(till=till, cashier=cashier, float_amount=D("500.00"), actor=cashier)
    amount = D("42.10")
    ticket = tickets.issue_for_payment(
        venue_id=venue.pk, amount=amount, means=Means.CASH, key="sell-1", actor=cashier
    ).ticket
    drawer = books.drawer(shift, Means.CASH)
    assert drawer.balance == D("542.10")

    done, refused = _run(
        lambda i: tickets.redeem_for_cash(venue_id=venue.pk, number=ticket.number, key=f"r{i}", actor=cashier)
    )
    assert len(done) == 1 and all(isinstance(r, tickets.Redeemed) and not r.replayed for r in done)
    assert {exc.code for exc in refused} == {"ticket_redeemed"} and len(refused) == THREADS - 1
    assert LedgerTransaction.objects.filter(kind=TxKind.TICKET_REDEEM).count() == 1
    assert Ticket.objects.get(pk=ticket.pk).state == TicketState.REDEEMED
    assert books.venue_account(venue.pk, Kind.TICKETS).balance == 0
    assert books.drawer(shift, Means.CASH).balance == D("500.00")
    assert books.trial_balance(venue.pk).holds
