"""The cashier ledger sealed in the venues' audit chains (issue 28): with the triggers off and every balance
adjusted so the trial balance still holds, each tamper is named by `verify_audit` (the first transaction
that differs, by id and position) and by `manage.py verify_audit`."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from halls.cashier.ledger import Kind
from halls.cashier.models import LedgerTransaction, Leg
from halls.cashier.services import ledger as books
from halls.models import AuditEntry, Venue
from halls.services.verify import verify_audit
from tests.cashier import ledger_seal_support as tamper
from tests.cashier.ledger_seal_support import Day, a_day, ledger_report, position

pytestmark = [pytest.mark.django_db, pytest.mark.cashier_off_shift]
D = Decimal


@pytest.fixture(autouse=True)
def audit_key(settings: Any) -> None:
    settings.HALL_AUDIT_KEY = "ledger-seal-test-key"


@pytest.fixture
def day(venue: Venue, cashier: User) -> Day:
    return a_day(venue, cashier)


def assert_named(venue: Venue, tx_id: int, at: int, *words: str) -> Any:
    report, chain = ledger_report(venue)
    assert not report.ok and not chain.ok
    assert (chain.first_bad_id, chain.first_bad_seq) == (tx_id, at), chain
    assert f"transaction {tx_id}" in chain.reason
    for word in words:
        assert word in chain.reason, chain.reason
    return chain


def test_an_intact_ledger_verifies_and_each_transaction_is_sealed_with_its_legs(
    venue: Venue, day: Day
) -> None:
    report, chain = ledger_report(venue)
    assert report.ok and chain.ok and chain.length == LedgerTransaction.objects.filter(venue=venue).count()
    entry = AuditEntry.objects.get(object_type="cashier.ledgertransaction", object_id=str(day.cash_in.pk))
    assert entry.data["legs"] == [
        [a.account.code, str(a.amount)] for a in day.cash_in.legs.order_by("account_id")
    ]
    assert entry.data["posted_at"] == day.cash_in.created_at.isoformat()


def test_one_euro_moved_between_the_legs_of_a_redemption_is_named_though_the_books_balance(
    venue: Venue, day: Day
) -> None:
    tamper.move_one_between_the_legs(day.redemption)
    assert books.trial_balance(venue.pk).holds  # what passed before: the books still balance
    assert_named(venue, day.redemption.pk, position(day.redemption), "legs", "edited")


def test_a_whole_cash_in_deleted_with_its_legs_is_named(venue: Venue, day: Day) -> None:
    at = position(day.cash_in)
    tamper.delete_with_legs(day.cash_in)
    assert books.trial_balance(venue.pk).holds
    assert_named(venue, day.cash_in.pk, at, "missing")


def test_a_legs_account_changed_is_named(venue: Venue, day: Day) -> None:
    tamper.move_leg_to(day.cash_in, Kind.DRAWER, tamper.venue_account(venue, Kind.HOUSE))
    assert books.trial_balance(venue.pk).holds
    assert_named(venue, day.cash_in.pk, position(day.cash_in), "legs")


def test_a_transactions_amount_changed_with_its_legs_is_named(venue: Venue, day: Day) -> None:
    tamper.change_amount(day.later_cash_in, D("500.00"))
    assert books.trial_balance(venue.pk).holds
    assert_named(venue, day.later_cash_in.pk, position(day.later_cash_in), "legs")


def test_a_balance_edited_alone_is_named_with_the_last_transaction_on_it(venue: Venue, day: Day) -> None:
    card_account = books.card_account(day.card)
    tamper.edit_balance(card_account, D("9999.00"))
    chain = assert_named(
        venue, day.later_cash_in.pk, position(day.later_cash_in), card_account.code, "9999.00"
    )
    assert "balance" in chain.reason


def test_a_leg_inserted_is_named(venue: Venue, day: Day) -> None:
    tamper.insert_leg(day.redemption, tamper.venue_account(venue, Kind.HOUSE), D("1.00"))
    assert_named(venue, day.redemption.pk, position(day.redemption), "legs")


def test_a_transaction_renumbered_is_named_where_it_stood(venue: Venue, day: Day) -> None:
    at = position(day.cash_in)
    tamper.renumber(day.cash_in, day.cash_in.pk + 100_000)
    assert Leg.objects.filter(transaction_id=day.cash_in.pk + 100_000).count() == 2
    chain = assert_named(venue, day.cash_in.pk, at, "missing")
    assert "and 1 more" in chain.reason  # the new number has no entry either


def test_a_deleted_seal_is_named_in_the_ledger_and_breaks_the_venues_chain(venue: Venue, day: Day) -> None:
    tamper.delete_seal(day.redemption)
    assert_named(venue, day.redemption.pk, position(day.redemption), "no audit entry")
    report = verify_audit(venue_ids=[venue.pk])
    assert not next(c for c in report.chains if c.kind == "venue").ok


def test_the_command_names_the_transaction(venue: Venue, day: Day) -> None:
    tamper.move_one_between_the_legs(day.redemption)
    out = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("verify_audit", "--venue", str(venue.pk), stdout=out)
    assert exited.value.code == 1
    line = next(line for line in out.getvalue().splitlines() if line.startswith("BAD  ledger"))
    assert f"first bad link {position(day.redemption)}" in line
    assert f"transaction {day.redemption.pk} (ticket_redeem" in line
