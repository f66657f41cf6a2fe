"""Tickets through /api/cashier/: issue (cash, bank card, a card's balance), look up with the ticket's life,
redeem (cash, into a card) once, print (PDF without a printer, ESC/POS with one; later prints are reprints),
the terminals' ticket-out / ticket-in; every refusal a JSON error naming the problem, writing nothing."""

from __future__ import annotations

import hashlib
import io
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pypdf
import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from halls.cashier import cardnumber, tito
from halls.cashier.models import (
    CashDevice,
    DeviceKind,
    Means,
    PlayerCard,
    PlayerCardState,
    Shift,
    Ticket,
    Till,
)
from halls.cashier.services import ledger as books
from halls.models import AuditEntry, Role, Venue
from tests.api_support import api_client, refused
from tests.cashier.escpos_reader import read
from tests.cashier.printer_fakes import fake_printer
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
from tests.ports import free_port

# The cashier opens its shift in each test, with the float the test counts.
pytestmark = pytest.mark.cashier_off_shift


D = Decimal


@pytest.fixture
def shift(venue: Venue, cashier: User) -> Shift:
    return open_till(venue, cashier)


@pytest.fixture
def client(cashier: User) -> APIClient:
    return api_client(cashier)


@pytest.fixture
def card(venue: Venue) -> PlayerCard:
    return funded_card(venue)


def _url(venue: Venue, number: str = "", action: str = "") -> str:
    base = f"/api/cashier/venues/{venue.pk}/tickets/"
    if number:
        base += f"{number}/"
    return base + (f"{action}/" if action else "")


def _issue(client: APIClient, venue: Venue, **body: Any) -> Any:
    return client.post(_url(venue), {"amount": "20.00", **body}, format="json")


@pytest.mark.django_db
def test_issue_look_up_and_redeem_for_cash(client: APIClient, venue: Venue, shift: Shift) -> None:
    answer = _issue(client, venue, idempotency_key="i1")
    assert answer.status_code == 201, answer.content
    body = answer.json()
    number = body["number"]
    assert tito.is_valid(number) and body["printed"] == tito.grouped(number)
    assert body["barcode"] == {"symbology": "ITF", "value": number}
    assert (body["amount"], body["state"], body["issued_by"], body["venue"]) == (
        "20.00",
        "issued",
        "Caja 1",
        venue.pk,
    )
    assert [e["kind"] for e in body["events"]] == ["issued"]
    assert _issue(client, venue, idempotency_key="i1").status_code == 200  # a retry
    assert Ticket.objects.count() == 1
    looked = client.get(_url(venue, tito.grouped(number)))
    assert looked.status_code == 200 and looked.json()["expires_at"] == body["expires_at"]
    redeemed = client.post(
        _url(venue, number, "redeem"), {"into": "cash", "idempotency_key": "r1"}, format="json"
    )
    assert redeemed.status_code == 201, redeemed.content
    assert redeemed.json()["state"] == "redeemed"
    assert [e["kind"] for e in redeemed.json()["events"]] == ["issued", "redeemed"]
    assert (
        client.post(_url(venue, number, "redeem"), {"idempotency_key": "r1"}, format="json").status_code
        == 200
    )
    assert balance(books.drawer(shift, Means.CASH)) == D("100.00") and tickets_balance(venue) == D("0.00")
    assert holds(venue)


@pytest.mark.django_db
def test_redeemed_twice_answers_409_naming_when_and_writes_nothing(
    client: APIClient, venue: Venue, shift: Shift
) -> None:
    number = _issue(client, venue).json()["number"]
    client.post(_url(venue, number, "redeem"), {}, format="json")
    counted = books_count()
    again = client.post(_url(venue, number, "redeem"), {"idempotency_key": "other"}, format="json")
    ticket = Ticket.objects.get(number=number)
    assert ticket.closed_at is not None
    from halls.cashier.services.tickets import local

    error = refused(
        again, 409, "ticket_redeemed", "already redeemed", local(venue.pk, ticket.closed_at), "Caja 1"
    )
    assert error["details"]["redeemed_at"] == ticket.closed_at.isoformat()
    assert books_count() == counted
    life = client.get(_url(venue, number)).json()["events"]
    assert [e["kind"] for e in life] == ["issued", "redeemed", "refused"]
    assert life[-1]["reason"] == "ticket_redeemed"


@pytest.mark.django_db
def test_an_expired_ticket_answers_ticket_expired(client: APIClient, venue: Venue, shift: Shift) -> None:
    number = _issue(client, venue).json()["number"]
    ticket = Ticket.objects.get(number=number)
    Ticket.objects.filter(pk=ticket.pk).update(expires_at=ticket.issued_at - timedelta(seconds=1))
    counted = books_count()
    refused(
        client.post(_url(venue, number, "redeem"), {}, format="json"), 409, "ticket_expired", "expired on"
    )
    assert books_count() == counted


@pytest.mark.django_db
def test_into_a_card_and_from_a_card(client: APIClient, venue: Venue, shift: Shift, card: PlayerCard) -> None:
    from_card = _issue(client, venue, funded_by="card", card=card.number, amount="15.00")
    assert from_card.status_code == 201, from_card.content
    assert balance(books.card_account(card)) == D("35.00")
    whole = client.post(_url(venue), {"funded_by": "card", "card": card.number}, format="json")
    assert whole.status_code == 201 and whole.json()["amount"] == "35.00"
    other = funded_card(venue, 2, "0.00")
    loaded = client.post(
        _url(venue, from_card.json()["number"], "redeem"),
        {"into": "card", "card": other.number},
        format="json",
    )
    assert loaded.status_code == 201, loaded.content
    assert balance(books.card_account(other)) == D("15.00")
    PlayerCard.objects.filter(pk=other.pk).update(state=PlayerCardState.BLOCKED)
    refused(
        client.post(
            _url(venue, whole.json()["number"], "redeem"),
            {"into": "card", "card": other.number},
            format="json",
        ),
        409,
        "card_blocked",
        cardnumber.printed(other.number),
    )
    refused(
        client.post(_url(venue, whole.json()["number"], "redeem"), {"into": "card"}, format="json"),
        400,
        "required",
        "card",
    )
    refused(client.post(_url(venue), {"funded_by": "card"}, format="json"), 400, "required", "card")
    missing = card_number(404)
    refused(
        client.post(_url(venue), {"funded_by": "card", "card": missing}, format="json"), 404, "unknown_card"
    )
    refused(
        client.post(_url(venue), {"funded_by": "card", "card": "404"}, format="json"), 400, "bad_card_number"
    )
    assert holds(venue)


@pytest.mark.django_db
@pytest.mark.parametrize("amount", ["0", "-1.00", "1.005", "abc", "1,50", "99999999999999", "NaN"])
def test_a_bad_amount_answers_400_naming_the_field_and_writes_nothing(
    client: APIClient, venue: Venue, shift: Shift, amount: str
) -> None:
    counted = books_count()
    error = refused(_issue(client, venue, amount=amount), 400, "bad_amount", "amount")
    assert error["details"]["field"] == "amount"
    assert books_count() == counted and not Ticket.objects.exists()


@pytest.mark.django_db
def test_missing_or_malformed_input(client: APIClient, venue: Venue, shift: Shift) -> None:
    refused(client.post(_url(venue), {}, format="json"), 400, "required", "amount")
    refused(
        client.post(_url(venue), {"amount": "1.00", "funded_by": "gold"}, format="json"),
        400,
        "invalid",
        "funded_by",
    )
    refused(client.get(_url(venue, "12345")), 400, "bad_ticket_number", "number")
    refused(client.post(_url(venue, "x" * 30, "redeem"), {}, format="json"), 400, "bad_ticket_number")


@pytest.mark.django_db
def test_unknown_and_another_venues_tickets_are_404(
    client: APIClient, venue: Venue, other_venue: Venue, shift: Shift
) -> None:
    theirs_cashier = make_user("their-cashier", other_venue, Role.CASHIER)
    open_till(other_venue, theirs_cashier)
    theirs = api_client(theirs_cashier)
    number = _issue(theirs, other_venue).json()["number"]
    refused(client.get(_url(venue, number)), 404, "unknown_ticket", tito.grouped(number))
    refused(client.post(_url(venue, number, "redeem"), {}, format="json"), 404, "unknown_ticket")
    refused(client.get(_url(other_venue, number)), 404, "unknown_venue")
    refused(client.post(_url(other_venue, number, "redeem"), {}, format="json"), 404, "unknown_venue")
    refused(client.get(_url(venue, tito.new_number())), 404, "unknown_ticket")
    assert Ticket.objects.get(number=number).state == "issued"


@pytest.mark.django_db
def test_the_cashier_role_is_needed_and_a_shift(venue: Venue, cashier: User) -> None:
    caller = api_client(make_user("a-caller", venue, Role.CALLER))
    refused(_issue(caller, venue), 403, "role_required")
    refused(_issue(api_client(cashier), venue), 409, "no_open_shift")
    assert api_client(None).post(_url(venue), {}, format="json").status_code == 401


@pytest.mark.django_db
def test_print_without_a_printer_is_a_pdf_and_a_second_print_is_a_reprint(
    client: APIClient, venue: Venue, shift: Shift
) -> None:
    number = _issue(client, venue).json()["number"]
    first = client.post(_url(venue, number, "print"), {}, format="json")
    assert first.status_code == 200 and first["Content-Type"] == "application/pdf"
    text = pypdf.PdfReader(io.BytesIO(first.content)).pages[0].extract_text()
    assert tito.grouped(number) in text and "DUPLICADO" not in text
    assert "VALE" in text and "Importe" in text and "20,00 €" in text  # the venue's language, Spanish
    second = client.post(_url(venue, number, "print"), {}, format="json")
    assert second.status_code == 200
    assert "VALE - DUPLICADO" in pypdf.PdfReader(io.BytesIO(second.content)).pages[0].extract_text()
    kinds = [e["kind"] for e in client.get(_url(venue, number)).json()["events"]]
    assert kinds == ["issued", "printed", "reprinted"]
    assert AuditEntry.objects.filter(action="cashier.printed").count() == 2


@pytest.mark.django_db
def test_print_at_a_tills_printer_in_the_venues_language(
    client: APIClient, venue: Venue, cashier: User, shift: Shift
) -> None:
    number = _issue(client, venue, amount="1234.50").json()["number"]
    with fake_printer() as printer:
        Till.objects.filter(pk=shift.till_id).update(printer=printer.address)
        answer = client.post(_url(venue, number, "print"), {}, format="json")
        data = printer.job()
    assert answer.status_code == 200, answer.content
    assert answer.json()["medium"] == "printer" and answer.json()["reprint"] is False
    slip = read(data)
    assert slip.rows[:2] == [venue.name, "VALE"]  # the venue's language: Spanish
    assert slip.barcodes == [("ITF", number.encode())]
    assert tito.grouped(number) in slip.text
    assert [row.split() for row in slip.big_rows] == [["Importe", "1", "234,50", "€"]]  # 1 234,50 €


@pytest.mark.django_db
def test_a_printer_that_does_not_answer_is_503_and_nothing_is_recorded(
    client: APIClient, venue: Venue, shift: Shift
) -> None:
    number = _issue(client, venue).json()["number"]
    Till.objects.filter(pk=shift.till_id).update(printer=f"tcp://127.0.0.1:{free_port()}")
    refused(client.post(_url(venue, number, "print"), {}, format="json"), 503, "printer_unreachable")
    assert [e["kind"] for e in client.get(_url(venue, number)).json()["events"]] == ["issued"]
    assert not AuditEntry.objects.filter(action="cashier.printed").exists()


@pytest.mark.django_db
def test_a_closed_ticket_is_not_printed(client: APIClient, venue: Venue, shift: Shift) -> None:
    number = _issue(client, venue).json()["number"]
    client.post(_url(venue, number, "redeem"), {}, format="json")
    refused(client.post(_url(venue, number, "print"), {}, format="json"), 409, "ticket_redeemed")
    refused(client.post(_url(venue, number, "print"), {"till": 999999}, format="json"), 404, "unknown_till")


# --- terminals ------------------------------------------------------------------------------------------


TOKEN = "secret-token"


def _terminal(venue: Venue, token: str = TOKEN, active: bool = True) -> tuple[CashDevice, APIClient]:
    device = CashDevice.objects.create(
        venue=venue,
        name="Terminal 7",
        kind=DeviceKind.TERMINAL,
        token_hash=hashlib.sha256(token.encode()).hexdigest(),
        active=active,
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"CashDevice {device.pk}:{token}")
    return device, client


@pytest.mark.django_db
def test_a_terminal_cashes_out_to_a_ticket_and_takes_one_in(venue: Venue, card: PlayerCard) -> None:
    _device, terminal = _terminal(venue)
    out = terminal.post("/api/cashier/device/ticket-out/", {"seq": 1, "card": card.number}, format="json")
    assert out.status_code == 201, out.content
    assert out.json()["ticket"]["amount"] == "50.00" and out.json()["card_balance"] == "0.00"
    again = terminal.post("/api/cashier/device/ticket-out/", {"seq": 1, "card": card.number}, format="json")
    assert again.status_code == 200 and again.json()["ticket"]["number"] == out.json()["ticket"]["number"]
    number = out.json()["ticket"]["number"]
    into = terminal.post(
        "/api/cashier/device/ticket-in/", {"seq": 2, "number": number, "card": card.number}, format="json"
    )
    assert into.status_code == 201, into.content
    assert into.json()["card_balance"] == "50.00" and into.json()["ticket"]["state"] == "redeemed"
    counted = books_count()
    twice = terminal.post(
        "/api/cashier/device/ticket-in/", {"seq": 3, "number": number, "card": card.number}, format="json"
    )
    refused(twice, 409, "ticket_redeemed", "Terminal 7")
    assert books_count() == counted
    refused(
        terminal.post(
            "/api/cashier/device/ticket-out/", {"seq": 4, "card": card.number, "amount": "0"}, format="json"
        ),
        400,
        "bad_amount",
        "amount",
    )
    assert holds(venue)


@pytest.mark.django_db
def test_a_device_needs_its_token(venue: Venue, card: PlayerCard, cashier: User) -> None:
    device, _client = _terminal(venue)
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION=f"CashDevice {device.pk}:not-the-token")
    body = {"seq": 1, "card": card.number}
    refused(wrong.post("/api/cashier/device/ticket-out/", body, format="json"), 401, "bad_device_token")
    assert api_client(cashier).post("/api/cashier/device/ticket-out/", body, format="json").status_code in (
        401,
        403,
    )
    assert APIClient().post("/api/cashier/device/ticket-out/", body, format="json").status_code in (401, 403)
    assert balance(books.card_account(card)) == D("50.00")
