"""Tickets (TITO) through their services: issued for cash, a bank card or a card's balance, redeemed once
for cash or into a card, refused when redeemed or expired (naming when and where, writing nothing but the
refusal in the ticket's life), expired by the beat's job into the house; the ledger balanced throughout."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from halls import events
from halls.cashier import cardnumber, ledger, tito
from halls.cashier.ledger import Kind
from halls.cashier.models import (
    CashDevice,
    CashierSettings,
    DeviceKind,
    LedgerTransaction,
    Means,
    PlayerCard,
    PlayerCardState,
    Shift,
    Ticket,
    TicketEventKind,
    TicketState,
    TxKind,
)
from halls.cashier.printing.document import Field
from halls.cashier.services import devices, tickets
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import lock_shift
from halls.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from halls.locks import Rank, take
from halls.models import AuditEntry, Role, Venue
from tests.cashier.ticket_support import (
    balance,
    books_count,
    card_number,
    funded_card,
    holds,
    open_till,
    tickets_balance,
)
from tests.conftest import make_user

# The cashier opens its shift in each test, with the float the test counts.
pytestmark = pytest.mark.cashier_off_shift


D = Decimal


@pytest.fixture
def shift(venue: Venue, cashier: User) -> Shift:
    return open_till(venue, cashier)


@pytest.fixture
def card(venue: Venue) -> PlayerCard:
    return funded_card(venue)


@pytest.fixture
def terminal(venue: Venue) -> CashDevice:
    return CashDevice.objects.create(
        venue=venue, name="Terminal 7", kind=DeviceKind.TERMINAL, token_hash="0" * 64
    )


def _kinds(ticket: Ticket) -> list[str]:
    return [e.kind for e in tickets.life(ticket)]


def _cash_ticket(venue: Venue, cashier: User, amount: str = "20.00", key: str = "k1") -> Ticket:
    return tickets.issue_for_payment(
        venue_id=venue.pk, amount=D(amount), means=Means.CASH, key=key, actor=cashier
    ).ticket


# --- issuing --------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_ticket_sold_for_cash_moves_the_drawer_to_the_tickets_account(
    venue: Venue, cashier: User, shift: Shift
) -> None:
    before = timezone.now()
    issued = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("20.00"), means="cash", key="k1", actor=cashier
    )
    ticket = issued.ticket
    assert not issued.replayed
    assert tito.is_valid(ticket.number)
    assert ticket.amount == D("20.00") and ticket.state == TicketState.ISSUED
    assert ticket.expires_at - ticket.issued_at == timedelta(days=30) and ticket.issued_at >= before
    assert ticket.issued_by == "Caja 1"
    assert balance(books.drawer(shift, Means.CASH)) == D("120.00")
    assert tickets_balance(venue) == D("20.00")
    tx = LedgerTransaction.objects.get(pk=ticket.issue_tx_id)
    assert tx.kind == TxKind.TICKET_ISSUE and tx.shift_id == shift.pk and tx.device == "Caja 1"
    [event] = tickets.life(ticket)
    assert event.kind == TicketEventKind.ISSUED and event.actor == cashier and event.transaction_id == tx.pk
    assert AuditEntry.objects.filter(action="cashier.ticket_issued", object_id=str(ticket.pk)).exists()
    assert holds(venue)


@pytest.mark.django_db
def test_a_retry_answers_the_same_ticket_and_another_amount_under_the_key_is_refused(
    venue: Venue, cashier: User, shift: Shift
) -> None:
    first = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("20.00"), means="cash", key="k1", actor=cashier
    )
    counted = books_count()
    again = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("20.00"), means="cash", key="k1", actor=cashier
    )
    assert again.replayed and again.ticket.pk == first.ticket.pk
    with pytest.raises(Conflict) as refused:
        tickets.issue_for_payment(venue_id=venue.pk, amount=D("25.00"), means="cash", key="k1", actor=cashier)
    assert refused.value.code == "idempotency_key_reused"
    assert books_count() == counted and Ticket.objects.count() == 1


@pytest.mark.django_db
def test_a_bank_card_payment_goes_to_that_drawer_and_the_validity_is_the_venues(
    venue: Venue, cashier: User, shift: Shift
) -> None:
    CashierSettings.objects.create(venue=venue, ticket_valid_days=7)
    ticket = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("5.50"), means=Means.BANK_CARD, key="k", actor=cashier
    ).ticket
    assert balance(books.drawer(shift, Means.BANK_CARD)) == D("5.50")
    assert balance(books.drawer(shift, Means.CASH)) == D("100.00")
    assert ticket.expires_at - ticket.issued_at == timedelta(days=7)


@pytest.mark.django_db
@pytest.mark.parametrize("amount", [D("0"), D("-1.00"), D("1.005"), "abc", D("1e13")])
def test_a_bad_amount_is_refused_naming_the_field_and_writes_nothing(
    venue: Venue, cashier: User, shift: Shift, amount: object
) -> None:
    counted = books_count()
    with pytest.raises(InvalidInput) as refused:
        tickets.issue_for_payment(venue_id=venue.pk, amount=amount, means="cash", key="k", actor=cashier)  # type: ignore[arg-type]
    assert refused.value.code == "bad_amount" and "amount" in refused.value.message
    assert books_count() == counted and not Ticket.objects.exists()


@pytest.mark.django_db
def test_no_open_shift_no_ticket(venue: Venue, cashier: User) -> None:
    with pytest.raises(Conflict) as refused:
        tickets.issue_for_payment(venue_id=venue.pk, amount=D("1.00"), means="cash", key="k", actor=cashier)
    assert refused.value.code == "no_open_shift"
    assert not Ticket.objects.exists()


@pytest.mark.django_db
def test_a_card_balance_becomes_a_ticket_whole_or_in_part(
    venue: Venue, cashier: User, shift: Shift, card: PlayerCard
) -> None:
    part = tickets.issue_from_card(
        venue_id=venue.pk, card_number=card.number, amount=D("15.00"), key="a", actor=cashier
    ).ticket
    assert balance(books.card_account(card)) == D("35.00") and part.amount == D("15.00")
    rest = tickets.issue_from_card(
        venue_id=venue.pk, card_number=card.number, amount=None, key="b", actor=cashier
    )
    assert rest.ticket.amount == D("35.00") and balance(books.card_account(card)) == D("0.00")
    retried = tickets.issue_from_card(
        venue_id=venue.pk, card_number=card.number, amount=None, key="b", actor=cashier
    )
    assert retried.replayed and retried.ticket.pk == rest.ticket.pk  # the whole balance, as it was then
    assert tickets_balance(venue) == D("50.00")
    assert LedgerTransaction.objects.get(pk=rest.ticket.issue_tx_id).shift_id == shift.pk
    with pytest.raises(Conflict) as empty:
        tickets.issue_from_card(
            venue_id=venue.pk, card_number=card.number, amount=None, key="c", actor=cashier
        )
    assert empty.value.code == "insufficient_balance"
    assert holds(venue)


@pytest.mark.django_db
def test_a_card_refuses_more_than_it_holds_and_a_blocked_card_refuses(
    venue: Venue, cashier: User, shift: Shift, card: PlayerCard
) -> None:
    counted = books_count()
    with pytest.raises(Conflict) as short:
        tickets.issue_from_card(
            venue_id=venue.pk, card_number=card.number, amount=D("50.01"), key="a", actor=cashier
        )
    assert short.value.code == "insufficient_balance"
    PlayerCard.objects.filter(pk=card.pk).update(state=PlayerCardState.BLOCKED, blocked_reason="lost")
    with pytest.raises(Conflict) as blocked:
        tickets.issue_from_card(
            venue_id=venue.pk, card_number=card.number, amount=D("1.00"), key="b", actor=cashier
        )
    assert blocked.value.code == "card_blocked"
    assert cardnumber.printed(card.number) in blocked.value.message
    with pytest.raises(NotFound) as unknown:
        tickets.issue_from_card(
            venue_id=venue.pk, card_number=card_number(999), amount=D("1.00"), key="c", actor=cashier
        )
    assert unknown.value.code == "unknown_card"
    assert books_count() == counted and not Ticket.objects.exists()


@pytest.mark.django_db
def test_issue_ticket_works_inside_a_callers_transaction_holding_shift_and_payable(
    venue: Venue, cashier: User, shift: Shift
) -> None:
    """How the payables pay a prize as a ticket: their shift and payable locks, then issue_ticket."""
    payable = books.venue_account(venue.pk, Kind.PRIZES_PAYABLE)
    funding = books.venue_account(venue.pk, Kind.POOL_FUNDING)
    books.post(
        venue_id=venue.pk,
        kind=TxKind.PRIZE_AWARD,
        key="award:1",
        legs=[ledger.debit(funding.pk, D("80.00")), ledger.credit(payable.pk, D("80.00"))],
        actor="test",
    )
    with transaction.atomic():
        locked = lock_shift(shift.pk)
        take(Rank.PAYABLE, 1)
        issued = tickets.issue_ticket(
            venue_id=venue.pk,
            amount=D("80.00"),
            funded_by=payable,
            key="payable:1:payout",
            actor=cashier,
            shift=locked,
            device="Caja 1",
            kind=TxKind.PRIZE_PAYOUT,
            memo="Line, game 4",
        )
    assert balance(payable) == D("0.00") and tickets_balance(venue) == D("80.00")
    tx = LedgerTransaction.objects.get(pk=issued.ticket.issue_tx_id)
    assert tx.kind == TxKind.PRIZE_PAYOUT and tx.key == "payable:1:payout" and tx.memo == "Line, game 4"
    again = tickets.issue_ticket(
        venue_id=venue.pk,
        amount=D("80.00"),
        funded_by=payable,
        key="payable:1:payout",
        actor=cashier,
        shift=shift,
        device="Caja 1",
        kind=TxKind.PRIZE_PAYOUT,
        memo="Line, game 4",
    )
    assert again.replayed and again.ticket.pk == issued.ticket.pk
    assert holds(venue)


# --- redeeming ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_ticket_redeemed_for_cash_pays_from_the_drawer_once(
    venue: Venue, cashier: User, shift: Shift
) -> None:
    ticket = _cash_ticket(venue, cashier, "20.00")
    redeemed = tickets.redeem_for_cash(venue_id=venue.pk, number=ticket.number, key="r1", actor=cashier)
    assert not redeemed.replayed and redeemed.ticket.state == TicketState.REDEEMED
    assert balance(books.drawer(shift, Means.CASH)) == D("100.00")
    assert tickets_balance(venue) == D("0.00")
    ticket.refresh_from_db()
    assert ticket.state == TicketState.REDEEMED and ticket.closed_at is not None
    tx = ticket.close_tx
    assert tx is not None
    assert tx.kind == TxKind.TICKET_REDEEM and tx.shift_id == shift.pk
    assert _kinds(ticket) == ["issued", "redeemed"]
    # The same request again (a retry): the first answer, nothing written.
    counted = books_count()
    again = tickets.redeem_for_cash(
        venue_id=venue.pk, number=tito.grouped(ticket.number), key="r1", actor=cashier
    )
    assert again.replayed and books_count() == counted and _kinds(ticket) == ["issued", "redeemed"]
    assert holds(venue)


@pytest.mark.django_db
def test_a_second_redemption_is_refused_naming_when_and_where_and_only_the_refusal_is_written(
    venue: Venue, cashier: User, shift: Shift, card: PlayerCard
) -> None:
    ticket = _cash_ticket(venue, cashier, "20.00")
    tickets.redeem_for_cash(venue_id=venue.pk, number=ticket.number, key="r1", actor=cashier)
    counted, card_before = books_count(), balance(books.card_account(card))
    with pytest.raises(Conflict) as refused:
        tickets.redeem_into_card(
            venue_id=venue.pk, number=ticket.number, card_number=card.number, key="r2", actor=cashier
        )
    ticket.refresh_from_db()
    assert ticket.closed_at is not None
    assert refused.value.code == "ticket_redeemed"
    assert tickets.local(venue.pk, ticket.closed_at) in refused.value.message
    assert "Caja 1, in cash" in refused.value.message
    assert refused.value.details["redeemed_at"] == ticket.closed_at.isoformat()
    assert books_count() == counted and balance(books.card_account(card)) == card_before
    assert _kinds(ticket) == ["issued", "redeemed", "refused"]
    assert tickets.life(ticket)[-1].reason == "ticket_redeemed"
    # The first request's key for another target: not a retry.
    with pytest.raises(Conflict) as reused:
        tickets.redeem_into_card(
            venue_id=venue.pk, number=ticket.number, card_number=card.number, key="r1", actor=cashier
        )
    assert reused.value.code == "idempotency_key_reused"
    assert holds(venue)


@pytest.mark.django_db
def test_a_ticket_redeemed_into_a_card_credits_it(
    venue: Venue, cashier: User, shift: Shift, card: PlayerCard
) -> None:
    ticket = _cash_ticket(venue, cashier, "12.34")
    tickets.redeem_into_card(
        venue_id=venue.pk, number=ticket.number, card_number=card.number, key="r", actor=cashier
    )
    assert balance(books.card_account(card)) == D("62.34")
    assert balance(books.drawer(shift, Means.CASH)) == D("112.34")  # the cash paid in stays
    assert tickets_balance(venue) == D("0.00")
    redeemed = tickets.life(ticket)[-1]
    assert (
        redeemed.kind == "redeemed"
        and redeemed.data["into"] == "card"
        and redeemed.data["card"] == card.number
    )
    assert holds(venue)


@pytest.mark.django_db
def test_a_drawer_that_cannot_pay_refuses_and_the_ticket_stays_issued(
    venue: Venue, cashier: User, shift: Shift, card: PlayerCard
) -> None:
    big = tickets.issue_from_card(
        venue_id=venue.pk, card_number=card.number, amount=D("50.00"), key="b", actor=cashier
    ).ticket
    take_out = books.venue_account(venue.pk, Kind.HOUSE)
    books.post(
        venue_id=venue.pk,
        kind=TxKind.CASH_UP,
        key="empty",
        legs=[ledger.debit(take_out.pk, D("80.00")), ledger.credit(books.drawer(shift).pk, D("80.00"))],
        actor="test",
        shift=shift,
    )
    counted = books_count()
    with pytest.raises(Conflict) as short:
        tickets.redeem_for_cash(venue_id=venue.pk, number=big.number, key="r", actor=cashier)
    assert short.value.code == "drawer_short"
    big.refresh_from_db()
    assert big.state == TicketState.ISSUED and books_count() == counted
    assert _kinds(big) == ["issued", "refused"] and tickets.life(big)[-1].reason == "drawer_short"


@pytest.mark.django_db
def test_a_blocked_card_takes_no_ticket(venue: Venue, cashier: User, shift: Shift, card: PlayerCard) -> None:
    ticket = _cash_ticket(venue, cashier)
    PlayerCard.objects.filter(pk=card.pk).update(state=PlayerCardState.BLOCKED)
    with pytest.raises(Conflict) as refused:
        tickets.redeem_into_card(
            venue_id=venue.pk, number=ticket.number, card_number=card.number, key="r", actor=cashier
        )
    assert refused.value.code == "card_blocked"
    ticket.refresh_from_db()
    assert ticket.state == TicketState.ISSUED


@pytest.mark.django_db
def test_unknown_another_venues_and_malformed_numbers(
    venue: Venue, other_venue: Venue, cashier: User, shift: Shift
) -> None:
    ticket = _cash_ticket(venue, cashier)
    elsewhere = make_user("other-cashier", other_venue, Role.CASHIER)
    open_till(other_venue, elsewhere)
    with pytest.raises(NotFound) as theirs:
        tickets.redeem_for_cash(venue_id=other_venue.pk, number=ticket.number, key="r", actor=elsewhere)
    assert theirs.value.code == "unknown_ticket" and tito.grouped(ticket.number) in theirs.value.message
    unknown = tito.new_number()
    with pytest.raises(NotFound) as nobody:
        tickets.redeem_for_cash(venue_id=venue.pk, number=unknown, key="r", actor=cashier)
    assert nobody.value.code == "unknown_ticket"
    typo = ticket.number[:-1] + str((int(ticket.number[-1]) + 1) % 10)
    with pytest.raises(InvalidInput) as bad:
        tickets.redeem_for_cash(venue_id=venue.pk, number=typo, key="r", actor=cashier)
    assert bad.value.code == "bad_ticket_number" and "number" in bad.value.message
    with pytest.raises(NotFound):
        tickets.find([other_venue.pk], ticket.number)
    assert tickets.find([venue.pk], tito.grouped(ticket.number)).pk == ticket.pk
    assert _kinds(ticket) == ["issued"]  # another venue's attempt is not this ticket's life


# --- expiry ---------------------------------------------------------------------------------------------


def _age(ticket: Ticket, days: int = 31) -> None:
    """Move the ticket's time back by `days` (as if issued then)."""
    Ticket.objects.filter(pk=ticket.pk).update(
        issued_at=ticket.issued_at - timedelta(days=days), expires_at=ticket.expires_at - timedelta(days=days)
    )
    ticket.refresh_from_db()


@pytest.mark.django_db
def test_an_expired_ticket_is_refused_naming_when_then_goes_to_the_house_once(
    venue: Venue, cashier: User, shift: Shift
) -> None:
    old = _cash_ticket(venue, cashier, "20.00", key="old")
    young = _cash_ticket(venue, cashier, "5.00", key="young")
    _age(old)
    with pytest.raises(Conflict) as refused:
        tickets.redeem_for_cash(venue_id=venue.pk, number=old.number, key="r", actor=cashier)
    assert refused.value.code == "ticket_expired"
    assert tickets.local(venue.pk, old.expires_at) in refused.value.message
    house = books.venue_account(venue.pk, Kind.HOUSE)
    house_before = balance(house)
    assert tickets.expire_tickets() == 1
    old.refresh_from_db()
    young.refresh_from_db()
    assert old.state == TicketState.EXPIRED and young.state == TicketState.ISSUED
    assert balance(house) == house_before + D("20.00") and tickets_balance(venue) == D("5.00")
    tx = old.close_tx
    assert tx is not None
    assert tx.kind == TxKind.TICKET_EXPIRE and tx.shift_id is None and tx.actor_label == "beat"
    counted = books_count()
    assert tickets.expire_tickets() == 0 and books_count() == counted  # idempotent
    with pytest.raises(Conflict) as still:
        tickets.redeem_for_cash(venue_id=venue.pk, number=old.number, key="r2", actor=cashier)
    assert still.value.code == "ticket_expired"
    assert _kinds(old) == ["issued", "refused", "expired", "refused"]
    assert holds(venue)


@pytest.mark.django_db
def test_the_expiry_job_is_resumable_in_batches_and_leaves_what_is_not_due(
    venue: Venue, cashier: User, shift: Shift
) -> None:
    made = [_cash_ticket(venue, cashier, "1.00", key=f"t{i}") for i in range(5)]
    for ticket in made[:4]:
        _age(ticket)
    tickets.redeem_for_cash(venue_id=venue.pk, number=made[4].number, key="r", actor=cashier)
    # A run cut short: one ticket done already, the job picks up the rest, a batch at a time.
    assert tickets.expire_tickets(batch=3, now=timezone.now() - timedelta(days=5)) == 0
    with transaction.atomic():
        tickets._expire_one(made[0].pk, timezone.now())
    assert tickets.expire_tickets(batch=1) == 3
    assert set(Ticket.objects.values_list("state", flat=True)) == {"expired", "redeemed"}
    assert tickets_balance(venue) == D("0.00")
    later = timezone.now() + timedelta(days=40)
    assert tickets.expire_tickets(later) == 0
    assert holds(venue)


@pytest.mark.django_db
def test_the_beat_task_calls_the_job(venue: Venue, cashier: User, shift: Shift) -> None:
    from halls.cashier import tasks

    ticket = _cash_ticket(venue, cashier)
    _age(ticket)
    assert tasks.expire_tickets() == 1
    ticket.refresh_from_db()
    assert ticket.state == TicketState.EXPIRED


# --- terminals ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_terminal_cashes_a_card_out_to_a_ticket_and_takes_one_in_idempotently(
    venue: Venue, cashier: User, shift: Shift, card: PlayerCard, terminal: CashDevice
) -> None:
    out = tickets.cash_out_to_ticket(device=terminal, card_number=card.number, seq=1)
    assert out.ticket.amount == D("50.00") and balance(books.card_account(card)) == D("0.00")
    assert out.ticket.issued_by == "Terminal 7"
    tx = LedgerTransaction.objects.get(pk=out.ticket.issue_tx_id)
    assert tx.shift_id is None and tx.device == "Terminal 7" and tx.key == tickets.device_key(terminal, 1)
    resent = tickets.cash_out_to_ticket(device=terminal, card_number=card.number, seq=1)
    assert resent.replayed and resent.ticket.pk == out.ticket.pk
    other = funded_card(venue, 2, "0.00")
    into = tickets.redeem_at_device(
        device=terminal, number=out.ticket.number, card_number=other.number, seq=2
    )
    assert not into.replayed and balance(books.card_account(other)) == D("50.00")
    counted = books_count()
    again = tickets.redeem_at_device(
        device=terminal, number=out.ticket.number, card_number=other.number, seq=2
    )
    assert again.replayed and books_count() == counted
    with pytest.raises(Conflict) as twice:
        tickets.redeem_at_device(device=terminal, number=out.ticket.number, card_number=other.number, seq=3)
    assert twice.value.code == "ticket_redeemed"
    assert f"Terminal 7, into card {cardnumber.printed(other.number)}" in twice.value.message
    assert _kinds(out.ticket) == ["issued", "redeemed", "refused"]
    assert holds(venue)


@pytest.mark.django_db
def test_an_inactive_terminal_is_refused(venue: Venue, card: PlayerCard, terminal: CashDevice) -> None:
    terminal.active = False
    terminal.save()
    with pytest.raises(PermissionDenied) as refused:
        tickets.cash_out_to_ticket(device=terminal, card_number=card.number, seq=1)
    assert refused.value.code == "device_inactive"


@pytest.mark.django_db
def test_a_devices_seq_is_one_message_whatever_its_kind(
    venue: Venue, card: PlayerCard, terminal: CashDevice
) -> None:
    devices.notes_in(device=terminal, seq=5, card=card.number, amount="10.00")
    counted = books_count()
    with pytest.raises(Conflict) as out:
        tickets.cash_out_to_ticket(device=terminal, card_number=card.number, seq=5)
    assert out.value.code == "seq_reused"
    issued = tickets.cash_out_to_ticket(device=terminal, card_number=card.number, seq=6, amount=D("5.00"))
    with pytest.raises(Conflict) as other_amount:
        tickets.cash_out_to_ticket(device=terminal, card_number=card.number, seq=6, amount=D("6.00"))
    assert other_amount.value.code == "seq_reused"
    with pytest.raises(Conflict) as into:
        tickets.redeem_at_device(device=terminal, number=issued.ticket.number, card_number=card.number, seq=6)
    assert into.value.code == "seq_reused"
    assert books_count() == (counted[0] + 1, counted[1] + 2)  # the one ticket issued
    assert issued.ticket.state == TicketState.ISSUED


# --- the slip and the till pages ------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_slip_speaks_the_venues_language_and_a_reprint_says_so(
    venue: Venue, cashier: User, shift: Shift
) -> None:
    ticket = _cash_ticket(venue, cashier, "1234.50")
    Venue.objects.filter(pk=venue.pk).update(language="en")
    english = tickets.ticket_document(ticket)
    assert (english.venue, english.title, english.kind) == (venue.name, "TICKET", "ticket")
    assert english.amount is not None and english.amount.value == "1,234.50 €"
    assert english.barcode is not None and english.barcode.value == ticket.number
    assert english.barcode.symbology == "ITF"
    shown = {line.label: line.value for line in english.lines if isinstance(line, Field)}
    assert shown["Validation number"] == tito.grouped(ticket.number)
    assert shown["Valid until"] == tickets.local(venue.pk, ticket.expires_at)
    assert shown["Issued at"] == "Caja 1"
    Venue.objects.filter(pk=venue.pk).update(language="es")
    again = tickets.ticket_document(ticket, reprinted_at=timezone.now())
    assert again.title == "VALE - DUPLICADO"
    assert any(isinstance(line, Field) and line.label == "Reimpreso" for line in again.lines)


@pytest.mark.django_db
def test_the_till_pages_hear_of_each_ticket_on_the_venues_cashier_stream(
    venue: Venue, cashier: User, shift: Shift
) -> None:
    stream = tickets.stream(venue.pk)
    start = events.current_seq(stream)  # the shift's opening was told there too
    ticket = _cash_ticket(venue, cashier)
    assert events.current_seq(stream) == start + 1
    tickets.redeem_for_cash(venue_id=venue.pk, number=ticket.number, key="r", actor=cashier)
    assert events.current_seq(stream) == start + 2
    old = _cash_ticket(venue, cashier, key="old")
    _age(old)
    tickets.expire_tickets()
    assert events.current_seq(stream) == start + 4
    with pytest.raises(Conflict):
        tickets.redeem_for_cash(venue_id=venue.pk, number=ticket.number, key="r2", actor=cashier)
    assert events.current_seq(stream) == start + 4  # a refusal tells nobody
