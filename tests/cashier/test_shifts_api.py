"""/api/cashier/ tills and shifts: open, the current shift's running totals, close with the cash-up, the
report's data; the refusals (bad amounts named, another venue's till, a closed shift, no cashier role)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User

from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import LedgerTransaction, Means, Shift, ShiftState, Till, TxKind
from halls.cashier.services import ledger as books
from halls.models import AuditEntry, Role, Venue
from tests.api_support import api_client, refused
from tests.conftest import make_user

# The cashier opens its shift in each test, with the float the test counts.
pytestmark = pytest.mark.cashier_off_shift


D = Decimal
TILLS = "/api/cashier/tills/"
SHIFTS = "/api/cashier/shifts/"
CURRENT = "/api/cashier/shifts/current/"


@pytest.fixture
def till(venue: Venue) -> Till:
    return Till.objects.create(venue=venue, name="Caja 1", printer="tcp://10.0.0.5:9100")


def _open(user: User, till: Till, amount: str = "100.00") -> dict[str, Any]:
    response = api_client(user).post(SHIFTS, {"till": till.pk, "float": amount}, format="json")
    assert response.status_code == 201, response.content
    body: dict[str, Any] = response.json()
    return body


def _sell(shift_id: int, amount: str, key: str, means: str = Means.CASH) -> None:
    shift = Shift.objects.get(pk=shift_id)
    sales = books.venue_account(shift.venue_id, Kind.SALES)
    books.post(
        venue_id=shift.venue_id,
        kind=TxKind.SALE,
        key=key,
        legs=[ledger.debit(books.drawer(shift, means).pk, D(amount)), ledger.credit(sales.pk, D(amount))],
        actor="test",
        shift=shift,
    )


def _close(user: User, shift_id: object, body: Mapping[str, object]) -> Any:
    return api_client(user).post(f"{SHIFTS}{shift_id}/close/", body, format="json")


@pytest.mark.django_db
def test_a_cashier_lists_tills_opens_a_shift_sees_its_totals_and_closes_it(
    venue: Venue, till: Till, cashier: User
) -> None:
    client = api_client(cashier)
    assert client.get(TILLS).json() == [
        {
            "id": till.pk,
            "venue": venue.pk,
            "name": "Caja 1",
            "printer": "tcp://10.0.0.5:9100",
            "active": True,
            "open_shift": None,
            "open_shift_cashier": None,
        }
    ]
    refused(client.get(CURRENT), 404, "no_open_shift", "no open shift")
    opened = _open(cashier, till, "150.00")
    assert opened["state"] == "open" and opened["float"] == "150.00" and opened["till_name"] == "Caja 1"
    assert opened["expected"] == {"cash": "150.00", "bank_card": "0.00"}
    assert opened["counted"] is None and opened["difference"] is None
    assert opened["report_url"] == f"/cashier/shifts/{opened['id']}/report/"
    retry = client.post(SHIFTS, {"till": till.pk, "float": "150.00"}, format="json")
    assert retry.status_code == 200 and retry.json()["id"] == opened["id"]
    refused(
        client.post(SHIFTS, {"till": till.pk, "float": "10.00"}, format="json"), 409, "shift_already_open"
    )
    assert client.get(TILLS).json()[0]["open_shift"] == opened["id"]

    _sell(opened["id"], "24.00", "s1")
    _sell(opened["id"], "6.00", "s2")
    _sell(opened["id"], "10.00", "s3", Means.BANK_CARD)
    current = client.get(CURRENT).json()
    assert current["id"] == opened["id"]
    assert current["expected"] == {"cash": "180.00", "bank_card": "10.00"}
    sale = next(t for t in current["totals"] if t["kind"] == "sale")
    assert sale == {
        "kind": "sale",
        "kind_label": "Card sale",
        "count": 3,
        "amount": "40.00",
        "drawer": {"cash": "30.00", "bank_card": "10.00"},
    }
    assert current["transactions"] == 4  # the float and three sales

    response = _close(cashier, opened["id"], {"counted": {"cash": "180.00", "bank_card": "10.00"}})
    assert response.status_code == 200, response.content
    closed = response.json()
    assert closed["state"] == "closed" and closed["difference"] == "0.00" and closed["witness"] is None
    assert closed["differences"] == {"cash": "0.00", "bank_card": "0.00"}
    refused(client.get(CURRENT), 404, "no_open_shift")
    again = _close(cashier, opened["id"], {"counted": {"cash": "180.00", "bank_card": "10.00"}})
    refused(again, 409, "shift_closed", "closed")
    assert client.get(f"{SHIFTS}{opened['id']}/").json()["state"] == "closed"


@pytest.mark.django_db
def test_a_difference_needs_a_witness_who_signs_with_their_password(
    venue: Venue, till: Till, cashier: User
) -> None:
    make_user("jefa", venue, Role.OPERATOR)
    opened = _open(cashier, till)
    counted = {"cash": "95.50", "bank_card": "0.00"}
    before = (LedgerTransaction.objects.count(), AuditEntry.objects.count())
    refused(_close(cashier, opened["id"], {"counted": counted}), 409, "witness_required", "witness")
    wrong = {"counted": counted, "witness": {"username": "jefa", "password": "nope"}}
    refused(_close(cashier, opened["id"], wrong), 400, "bad_witness", "witness")
    self_signed = {"counted": counted, "witness": {"username": "cashier", "password": "pw-cashier"}}
    refused(_close(cashier, opened["id"], self_signed), 400, "bad_witness")
    assert (LedgerTransaction.objects.count(), AuditEntry.objects.count()) == before
    signed = {"counted": counted, "witness": {"username": "jefa", "password": "pw-jefa"}, "note": "cambio"}
    body = _close(cashier, opened["id"], signed).json()
    assert body["difference"] == "-4.50" and body["witness"] == "jefa" and body["note"] == "cambio"
    assert body["differences"] == {"cash": "-4.50", "bank_card": "0.00"}
    over_short = next(t for t in body["totals"] if t["kind"] == "over_short")
    assert over_short["drawer"] == {"cash": "-4.50", "bank_card": "0.00"}
    assert Shift.objects.get(pk=opened["id"]).state == ShiftState.CLOSED
    assert books.trial_balance(venue.pk).holds


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("counted", "field"),
    [
        ({"cash": "-1.00", "bank_card": "0"}, "cash"),
        ({"cash": "10.005", "bank_card": "0"}, "cash"),
        ({"cash": "ten", "bank_card": "0"}, "cash"),
        ({"cash": "10.00", "bank_card": "NaN"}, "bank_card"),
        ({"cash": "10.00"}, "bank_card"),
    ],
)
def test_bad_counted_amounts_answer_400_naming_the_field_and_write_nothing(
    till: Till, cashier: User, counted: dict[str, str], field: str
) -> None:
    opened = _open(cashier, till)
    before = (LedgerTransaction.objects.count(), AuditEntry.objects.count())
    error = refused(_close(cashier, opened["id"], {"counted": counted}), 400, "invalid", field)
    assert field in error["fields"]["counted"]
    assert (LedgerTransaction.objects.count(), AuditEntry.objects.count()) == before


@pytest.mark.django_db
@pytest.mark.parametrize("amount", ["-5.00", "1.001", "lots", "", None, "1e400"])
def test_a_bad_float_answers_400_naming_it(till: Till, cashier: User, amount: object) -> None:
    response = api_client(cashier).post(SHIFTS, {"till": till.pk, "float": amount}, format="json")
    refused(response, 400, "invalid", "float")
    assert not Shift.objects.exists()


@pytest.mark.django_db
def test_another_venues_till_and_shift_are_not_found(
    venue: Venue, other_venue: Venue, till: Till, cashier: User
) -> None:
    theirs = Till.objects.create(venue=other_venue, name="Caja 1")
    them = make_user("ajeno", other_venue, Role.CASHIER)
    their_shift = _open(them, theirs)
    client = api_client(cashier)
    refused(client.post(SHIFTS, {"till": theirs.pk, "float": "0"}, format="json"), 404, "unknown_till")
    refused(client.get(f"{SHIFTS}{their_shift['id']}/"), 404, "unknown_shift")
    body = {"counted": {"cash": "100.00", "bank_card": "0"}}
    refused(_close(cashier, their_shift["id"], body), 404, "unknown_shift")
    assert [t["id"] for t in client.get(TILLS).json()] == [till.pk]
    refused(client.get(TILLS, {"venue": other_venue.pk}), 404, "not_found")
    refused(client.get(f"{SHIFTS}999999/"), 404, "unknown_shift")


@pytest.mark.django_db
def test_without_the_cashier_role_the_shift_api_is_forbidden(
    venue: Venue, till: Till, cashier: User, caller: User
) -> None:
    opened = _open(cashier, till)
    client = api_client(caller)
    refused(client.post(SHIFTS, {"till": till.pk, "float": "0"}, format="json"), 403, "role_required")
    refused(client.get(f"{SHIFTS}{opened['id']}/"), 403, "role_required")
    refused(
        _close(caller, opened["id"], {"counted": {"cash": "100", "bank_card": "0"}}), 403, "role_required"
    )
    refused(client.get(TILLS, {"venue": venue.pk}), 403, "role_required")
    assert client.get(TILLS).json() == []
    refused(api_client(None).get(CURRENT), 401, "not_authenticated")
    other = make_user("cajero2", venue, Role.CASHIER)
    body = {"counted": {"cash": "100", "bank_card": "0"}}
    refused(_close(other, opened["id"], body), 403, "not_your_shift")
