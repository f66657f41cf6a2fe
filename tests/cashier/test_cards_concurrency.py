"""The card services under 32 threads at once, each on its own connection: exactly the affordable spends
succeed; a block racing with spends leaves only spends decided before it; the bill reader's message
resent 32 times at once credits the card once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from halls.cashier.ledger import Kind
from halls.cashier.models import CashDevice, DeviceMessage, LedgerTransaction, PlayerCard, TxKind
from halls.cashier.services import devices, player_cards
from halls.cashier.services import ledger as books
from halls.errors import Conflict
from halls.models import AuditEntry, Venue
from tests.threads import in_threads

D = Decimal
THREADS = 32


def _run(work: Callable[[int], object]) -> tuple[list[object], list[Conflict]]:
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


def _loaded(venue: Venue, operator: User, amount: str) -> tuple[PlayerCard, CashDevice]:
    card = player_cards.issue_card(venue_id=venue.pk, actor=operator)
    device, _token = devices.register_device(
        venue_id=venue.pk, name="Lector", kind="bill_reader", actor=operator
    )
    devices.notes_in(device=device, seq=0, card=card.number, amount=amount)
    return card, device


@pytest.mark.django_db(transaction=True)
def test_thirty_two_spends_exactly_the_affordable_ones(venue: Venue, operator: User) -> None:
    card, _device = _loaded(venue, operator, "10.00")
    done, refused = _run(
        lambda i: player_cards.spend(card=card, amount=D("0.75"), key=f"s{i}", actor=f"t{i}")
    )
    assert len(done) == 13 and {exc.code for exc in refused} == {"insufficient_balance"}
    assert player_cards.balance(card) == D("0.25")
    assert LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).count() == 13
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db(transaction=True)
def test_a_block_racing_with_spends(venue: Venue, operator: User) -> None:
    card, _device = _loaded(venue, operator, "100.00")

    def work(i: int) -> object:
        if i == THREADS // 2:
            return player_cards.block_card(card=card, reason="lost", actor=operator)
        return player_cards.spend(card=card, amount=D("1.00"), key=f"s{i}", actor=f"t{i}")

    done, refused = _run(work)
    assert {exc.code for exc in refused} <= {"card_blocked"}
    spends = LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).order_by("pk")
    assert spends.count() == len(done) - 1 == THREADS - 1 - len(refused)
    assert player_cards.balance(card) == D("100.00") - spends.count()
    blocked = AuditEntry.objects.get(action="cashier.card_blocked")
    # Every spend that went through was written before the block (the card's lock orders them).
    assert all(tx.created_at <= blocked.created_at for tx in spends)
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db(transaction=True)
def test_one_bill_reader_message_resent_thirty_two_times_credits_once(venue: Venue, operator: User) -> None:
    card, device = _loaded(venue, operator, "5.00")
    done, refused = _run(lambda i: devices.notes_in(device=device, seq=1, card=card.number, amount="20.00"))
    assert not refused
    answers = [a for a in done if isinstance(a, devices.Answer)]
    assert sum(1 for a in answers if not a.replayed) == 1
    assert len({a.result["transaction"] for a in answers}) == 1
    assert DeviceMessage.objects.filter(device=device).count() == 2
    assert player_cards.balance(card) == D("25.00")
    assert books.venue_account(venue.pk, Kind.SALES).balance == 0
    assert books.trial_balance(venue.pk).holds
