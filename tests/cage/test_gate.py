"""The cage's gate at the payout (issue 27): a payout at or above the AML threshold (every prize kind, a
ticket redeemed in cash, a card cashed out) is not paid until the winner is identified, and nothing is
written before; with the identification it is paid and recorded; one person's payouts split under the
threshold within the window are flagged (structuring); a cash-in and out with little play is flagged."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.test import override_settings
from django.utils import timezone

from halls.cage.models import Flag, FlagKind, Identification, PayoutRecord
from halls.cage.services import identification
from halls.cashier.models import (
    LedgerTransaction,
    Payable,
    PayableKind,
    PayableState,
    Ticket,
    TicketState,
)
from halls.cashier.services import player_cards, tickets
from halls.door.services import admission
from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import AuditEntry, Venue
from tests.cage.cage_support import digest_of, drawer_shift, identify, pay, players_card, prize

pytestmark = [pytest.mark.django_db, pytest.mark.cashier_off_shift]

D = Decimal


def written() -> tuple[int, ...]:
    return (
        LedgerTransaction.objects.count(),
        AuditEntry.objects.count(),
        PayoutRecord.objects.count(),
        Flag.objects.count(),
        Payable.objects.filter(state=PayableState.PAID).count(),
    )


@contextmanager
def nothing_written() -> Iterator[None]:
    before = written()
    yield
    assert written() == before


@pytest.mark.parametrize(
    "kind", [PayableKind.LINE, PayableKind.BINGO, PayableKind.ACCUMULATED, PayableKind.TABLE]
)
def test_every_prize_kind_waits_for_the_winners_identification(
    venue: Venue, cashier: User, kind: str
) -> None:
    drawer_shift(cashier, venue)
    payable = prize(venue, "3000.00", kind)
    with nothing_written(), pytest.raises(Conflict) as refused:
        pay(payable, cashier)
    assert refused.value.code == "identification_required"
    assert "2.500,00" in refused.value.message or "2,500.00" in refused.value.message

    found = identify(venue, cashier)
    payout = pay(payable, cashier, identification=found.pk)
    assert payout.payable.state == PayableState.PAID
    record = PayoutRecord.objects.get()
    assert (record.kind, record.amount, record.identification_id, record.identified) == (
        kind,
        D("3000.00"),
        found.pk,
        True,
    )
    assert bytes(record.digest or b"") == digest_of() and record.payable_id == payable.pk
    assert record.transaction_id == payout.payable.payout_tx_id


def test_a_machine_hand_pay_waits_too(venue: Venue, cashier: User) -> None:
    """Refused before its payer (the machine's locks) is even called."""
    drawer_shift(cashier, venue)
    payable = prize(venue, "2500.00", PayableKind.MACHINE)
    with nothing_written(), pytest.raises(Conflict) as refused:
        pay(payable, cashier)
    assert refused.value.code == "identification_required"


@pytest.mark.parametrize("method", ["player_card", "ticket"])
def test_a_prize_paid_to_a_card_or_as_a_ticket_waits_too(venue: Venue, cashier: User, method: str) -> None:
    drawer_shift(cashier, venue)
    payable = prize(venue, "2600.00")
    card = player_cards.issue_card(venue_id=venue.pk, actor="test") if method == "player_card" else None
    with nothing_written(), pytest.raises(Conflict):
        pay(payable, cashier, method=method, card=card)
    pay(payable, cashier, method=method, card=card, identification=identify(venue).pk)
    assert PayoutRecord.objects.get().payable_id == payable.pk


def test_under_the_threshold_pays_without_identification_and_records_nothing(
    venue: Venue, cashier: User
) -> None:
    drawer_shift(cashier, venue)
    pay(prize(venue, "2499.99"), cashier)
    assert not PayoutRecord.objects.exists()


def test_an_identification_of_another_venue_or_too_old_is_refused(
    venue: Venue, other_venue: Venue, cashier: User
) -> None:
    drawer_shift(cashier, venue)
    payable = prize(venue, "3000.00")
    elsewhere = identify(other_venue)
    with nothing_written(), pytest.raises(NotFound) as unknown:
        pay(payable, cashier, identification=elsewhere.pk)
    assert unknown.value.code == "unknown_identification"
    old = identify(venue)
    Identification.objects.filter(pk=old.pk).update(identified_at=timezone.now() - timedelta(hours=25))
    with nothing_written(), pytest.raises(Conflict) as stale:
        pay(payable, cashier, identification=old.pk)
    assert stale.value.code == "identification_stale"


def test_the_threshold_is_a_setting_per_jurisdiction(venue: Venue, cashier: User) -> None:
    drawer_shift(cashier, venue)
    lower = {venue.jurisdiction: {"threshold": "1000.00"}}
    with override_settings(HALL_AML_BY_JURISDICTION=lower), pytest.raises(Conflict):
        pay(prize(venue, "1000.00"), cashier)
    pay(prize(venue, "1000.00"), cashier)  # the default, 2,500


def test_a_ticket_redeemed_in_cash_waits_for_identification(venue: Venue, cashier: User) -> None:
    drawer_shift(cashier, venue)
    issued = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("2500.00"), means="cash", key="t1", actor=cashier
    )
    number = issued.ticket.number
    with pytest.raises(Conflict) as refused:
        tickets.redeem_for_cash(venue_id=venue.pk, number=number, key="r1", actor=cashier)
    assert refused.value.code == "identification_required"
    assert Ticket.objects.get(number=number).state == TicketState.ISSUED
    assert not PayoutRecord.objects.exists()
    found = identify(venue, cashier)
    tickets.redeem_for_cash(
        venue_id=venue.pk, number=number, key="r2", actor=cashier, identification=found.pk
    )
    record = PayoutRecord.objects.get()
    assert (record.kind, record.ticket_id, record.identification_id) == ("ticket", issued.ticket.pk, found.pk)
    # Bought with cash and redeemed with nothing played in between: little play.
    flag = Flag.objects.get()
    assert (flag.kind, flag.cashed_in, flag.played, flag.ticket_id) == (
        FlagKind.LITTLE_PLAY,
        D("2500.00"),
        D("0.00"),
        issued.ticket.pk,
    )
    assert list(flag.records.all()) == [record]


def test_a_ticket_redeemed_into_a_card_is_no_payout(venue: Venue, cashier: User) -> None:
    drawer_shift(cashier, venue)
    issued = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("3000.00"), means="cash", key="t1", actor=cashier
    )
    card = player_cards.issue_card(venue_id=venue.pk, actor="test")
    tickets.redeem_into_card(
        venue_id=venue.pk, number=issued.ticket.number, card_number=card.number, key="r1", actor=cashier
    )
    assert not PayoutRecord.objects.exists() and not Flag.objects.exists()


def test_a_card_cash_out_waits_for_identification(venue: Venue, cashier: User) -> None:
    drawer_shift(cashier, venue)
    card = player_cards.issue_card(venue_id=venue.pk, actor="test")
    player_cards.cash_in(card=card, amount=D("3000.00"), means="cash", key="in", actor=cashier)
    player_cards.spend(card=card, amount=D("400.00"), key="s1", actor="terminal-1")
    with nothing_written(), pytest.raises(Conflict) as refused:
        player_cards.cash_out(card=card, amount=None, key="out", actor=cashier)
    assert refused.value.code == "identification_required"
    found = identify(venue, cashier)
    move = player_cards.cash_out(card=card, amount=None, key="out", actor=cashier, identification=found.pk)
    assert move.amount == D("2600.00")
    record = PayoutRecord.objects.get()
    assert (record.kind, record.card_id, record.amount) == ("card_cash_out", card.pk, D("2600.00"))
    assert not Flag.objects.exists()  # 400 of 3,000 played: more than 10 %
    again = player_cards.cash_out(card=card, amount=None, key="out", actor=cashier, identification=found.pk)
    assert again.replayed and PayoutRecord.objects.count() == 1


def test_structuring_three_payouts_of_900_to_one_player_in_an_hour(venue: Venue, cashier: User) -> None:
    drawer_shift(cashier, venue)
    card = players_card(venue)
    for _i in range(2):
        pay(prize(venue, "900.00", PayableKind.LINE), cashier, method="player_card", card=card)
    assert PayoutRecord.objects.count() == 2 and not Flag.objects.exists()
    # The third, in cash and identified at the cage: the same person by their document.
    pay(prize(venue, "900.00"), cashier, identification=identify(venue).pk)
    flag = Flag.objects.get()
    assert (flag.kind, flag.total, bytes(flag.digest or b"")) == (
        FlagKind.STRUCTURING,
        D("2700.00"),
        digest_of(),
    )
    assert flag.records.count() == 3
    # A fourth in the same window adds to a split already flagged: no second flag.
    pay(prize(venue, "900.00"), cashier, method="player_card", card=card)
    assert Flag.objects.count() == 1
    audit = AuditEntry.objects.get(action="cage.flagged")
    assert audit.data["kind"] == "structuring" and sorted(audit.data["records"]) == sorted(
        flag.records.values_list("pk", flat=True)
    )


def test_payouts_of_two_people_are_not_added_up(venue: Venue, cashier: User) -> None:
    drawer_shift(cashier, venue)
    one, two = players_card(venue), players_card(venue, "87654321X")
    for card in (one, two, one, two):
        pay(prize(venue, "900.00"), cashier, method="player_card", card=card)
    assert not Flag.objects.exists()


def test_payouts_outside_the_window_are_not_added_up(venue: Venue, cashier: User) -> None:
    drawer_shift(cashier, venue)
    card = players_card(venue)
    for _ in range(2):
        pay(prize(venue, "900.00"), cashier, method="player_card", card=card)
    PayoutRecord.objects.update(at=timezone.now() - timedelta(hours=25))
    pay(prize(venue, "900.00"), cashier, method="player_card", card=card)
    assert not Flag.objects.exists()


def test_little_play_on_a_card(venue: Venue, cashier: User) -> None:
    drawer_shift(cashier, venue)
    card = players_card(venue)
    player_cards.cash_in(card=card, amount=D("1200.00"), means="cash", key="in", actor=cashier)
    player_cards.spend(card=card, amount=D("50.00"), key="s1", actor="terminal-1")
    player_cards.cash_out(card=card, amount=None, key="out", actor=cashier)
    flag = Flag.objects.get()
    assert (flag.kind, flag.cashed_in, flag.played, flag.total, flag.card_id) == (
        FlagKind.LITTLE_PLAY,
        D("1200.00"),
        D("50.00"),
        D("1150.00"),
        card.pk,
    )
    assert bytes(flag.digest or b"") == digest_of()  # the card's player
    # The next cycle starts after the cash-out: a real session is not flagged.
    player_cards.cash_in(card=card, amount=D("1200.00"), means="cash", key="in2", actor=cashier)
    player_cards.spend(card=card, amount=D("600.00"), key="s2", actor="terminal-1")
    player_cards.cash_out(card=card, amount=None, key="out2", actor=cashier)
    assert Flag.objects.count() == 1


def test_little_play_under_the_minimum_is_not_flagged(venue: Venue, cashier: User) -> None:
    drawer_shift(cashier, venue)
    card = player_cards.issue_card(venue_id=venue.pk, actor="test")
    player_cards.cash_in(card=card, amount=D("200.00"), means="cash", key="in", actor=cashier)
    player_cards.cash_out(card=card, amount=None, key="out", actor=cashier)
    assert not Flag.objects.exists()


def test_identify_refuses_bad_input_writing_nothing(venue: Venue) -> None:
    document = admission.document_from("DNI", "12345678Z")
    good = {
        "venue": venue,
        "document": document,
        "full_name": "Ana",
        "birth_date": date(1980, 1, 1),
        "nationality": "ES",
        "scan_reference": "s.pdf",
        "actor": "test",
    }
    for change, code in (
        ({"full_name": "  "}, "bad_full_name"),
        ({"scan_reference": ""}, "bad_scan_reference"),
        ({"nationality": "ZZZ"}, "bad_nationality"),
        ({"birth_date": timezone.localdate() + timedelta(days=3)}, "birth_in_future"),
        ({"birth_date": timezone.localdate() - timedelta(days=365 * 10)}, "winner_minor"),
    ):
        before = (Identification.objects.count(), AuditEntry.objects.count())
        with pytest.raises(InvalidInput) as refused:
            identification.identify(**{**good, **change})  # type: ignore[arg-type]
        assert refused.value.code == code
        assert (Identification.objects.count(), AuditEntry.objects.count()) == before
    with pytest.raises(InvalidInput) as bad_letter:
        admission.document_from("DNI", "12345678A")
    assert bad_letter.value.code == "bad_check_letter"


def test_little_play_through_a_ticket_printed_from_a_card(venue: Venue, cashier: User) -> None:
    """Cash onto a card, a little played, the rest printed onto a ticket, the ticket redeemed in cash: the
    card's cycle before the ticket decides."""
    drawer_shift(cashier, venue)
    card = player_cards.issue_card(venue_id=venue.pk, actor="test")
    player_cards.cash_in(card=card, amount=D("1500.00"), means="bank_card", key="in", actor=cashier)
    player_cards.spend(card=card, amount=D("20.00"), key="s1", actor="terminal-1")
    issued = tickets.issue_from_card(
        venue_id=venue.pk, card_number=card.number, amount=None, key="t", actor=cashier
    )
    assert not Flag.objects.exists()  # a ticket printed is no payout yet
    tickets.redeem_for_cash(venue_id=venue.pk, number=issued.ticket.number, key="r", actor=cashier)
    flag = Flag.objects.get()
    assert (flag.kind, flag.cashed_in, flag.played, flag.card_id, flag.ticket_id) == (
        FlagKind.LITTLE_PLAY,
        D("1500.00"),
        D("20.00"),
        card.pk,
        issued.ticket.pk,
    )
    assert flag.digest is None and not PayoutRecord.objects.exists()  # tied to nobody: no record


def test_a_prize_paid_as_a_ticket_is_no_cash_in(venue: Venue, cashier: User) -> None:
    drawer_shift(cashier, venue)
    payout = pay(prize(venue, "1500.00"), cashier, method="ticket")
    ticket = payout.ticket
    assert ticket is not None
    tickets.redeem_for_cash(venue_id=venue.pk, number=ticket.number, key="r", actor=cashier)
    assert not Flag.objects.exists()
