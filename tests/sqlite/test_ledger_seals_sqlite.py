"""The embedded hall's SQLite: the cashier ledger's seals are checked the same way (issue 28). The triggers
dropped as whoever holds the file can, 1.00 moved between the two legs of a redemption with both balances
adjusted (the books still balance): `verify_audit` names the redemption."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from halls.cashier.services import ledger as books
from halls.models import Venue
from tests.cashier import ledger_seal_support as tamper

pytestmark = [pytest.mark.django_db, pytest.mark.cashier_off_shift]


@pytest.fixture(autouse=True)
def audit_key(settings: Any) -> None:
    settings.HALL_AUDIT_KEY = "ledger-seal-sqlite-key"


def test_on_sqlite_a_redemption_with_its_legs_edited_is_named(venue: Venue, cashier: User) -> None:
    assert connection.vendor == "sqlite"
    day = tamper.a_day(venue, cashier)
    assert tamper.ledger_report(venue)[1].ok
    tamper.move_one_between_the_legs(day.redemption)
    assert books.trial_balance(venue.pk).holds
    report, chain = tamper.ledger_report(venue)
    assert not report.ok and (chain.first_bad_id, chain.first_bad_seq) == (
        day.redemption.pk,
        tamper.position(day.redemption),
    )
    assert f"transaction {day.redemption.pk} (ticket_redeem" in chain.reason and "legs" in chain.reason
