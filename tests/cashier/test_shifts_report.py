"""The shift report: its figures from the ledger after a few operations (running while open, the cash-up
once closed), its printable page (cashier role, venue-scoped, Spanish and English) and its printing."""

from __future__ import annotations

import io
from dataclasses import replace
from decimal import Decimal

import pypdf
import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone, translation

from halls import i18n
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import (
    CashDevice,
    DeviceKind,
    Means,
    Payable,
    PayableKind,
    PayableState,
    PayoutMethod,
    Shift,
    Till,
    TxKind,
)
from halls.cashier.printing import escpos
from halls.cashier.printing.document import Field, layout
from halls.cashier.services import ledger as books
from halls.cashier.services import shifts, tickets
from halls.cashier.services.shift_report import document, shift_report
from halls.models import AuditEntry, Role, Venue
from tests.api_support import api_client, refused
from tests.cashier.escpos_reader import read
from tests.cashier.printer_fakes import fake_printer
from tests.conftest import make_user

# The cashier opens its shift in each test, with the float the test counts.
pytestmark = pytest.mark.cashier_off_shift


D = Decimal


@pytest.fixture
def till(venue: Venue) -> Till:
    return Till.objects.create(venue=venue, name="Caja 1")


def _sale(shift: Shift, amount: str, key: str, kind: TxKind = TxKind.SALE) -> None:
    sales = books.venue_account(shift.venue_id, Kind.SALES)
    cash = books.drawer(shift, Means.CASH)
    legs = [ledger.debit(cash.pk, D(amount)), ledger.credit(sales.pk, D(amount))]
    if kind == TxKind.SALE_RETURN:
        legs = [ledger.credit(cash.pk, D(amount)), ledger.debit(sales.pk, D(amount))]
    books.post(venue_id=shift.venue_id, kind=kind, key=key, legs=legs, actor="test", shift=shift)


def _prize_paid_in_cash(shift: Shift, kind: PayableKind, amount: str, source: str) -> None:
    """A prize awarded (sales to prizes payable, no shift) and paid at the till in cash."""
    venue_id = shift.venue_id
    payable_account = books.venue_account(venue_id, Kind.PRIZES_PAYABLE)
    award = books.post(
        venue_id=venue_id,
        kind=TxKind.PRIZE_AWARD,
        key=f"award:{source}",
        legs=[
            ledger.debit(books.venue_account(venue_id, Kind.SALES).pk, D(amount)),
            ledger.credit(payable_account.pk, D(amount)),
        ],
        actor="system",
    )
    payout = books.post(
        venue_id=venue_id,
        kind=TxKind.PRIZE_PAYOUT,
        key=f"payout:{source}",
        legs=[
            ledger.debit(payable_account.pk, D(amount)),
            ledger.credit(books.drawer(shift, Means.CASH).pk, D(amount)),
        ],
        actor="test",
        shift=shift,
    )
    Payable.objects.create(
        venue_id=venue_id,
        kind=kind,
        source=source,
        description=source,
        amount=D(amount),
        state=PayableState.PAID,
        awarded_at=timezone.now(),
        award_tx=award.transaction,
        paid_at=timezone.now(),
        method=PayoutMethod.CASH,
        payout_tx=payout.transaction,
    )


@pytest.fixture
def worked_shift(venue: Venue, till: Till, cashier: User) -> Shift:
    """A shift with a float of 100, sales of 30 and 12, a return of 2, a ticket sold for 20 cash and one
    for 15 by bank card, the cash one redeemed, a Line of 8 and a Bingo of 25 paid in cash, and a
    terminal's stacker of 40 collected."""
    shift = shifts.open_shift(till=till, cashier=cashier, float_amount=D("100.00"), actor=cashier)
    _sale(shift, "30.00", "s1")
    _sale(shift, "12.00", "s2")
    _sale(shift, "2.00", "r1", TxKind.SALE_RETURN)
    cash_ticket = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("20.00"), means=Means.CASH, key="t1", actor=cashier
    ).ticket
    tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("15.00"), means=Means.BANK_CARD, key="t2", actor=cashier
    )
    tickets.redeem_for_cash(venue_id=venue.pk, number=cash_ticket.number, key="t3", actor=cashier)
    _prize_paid_in_cash(shift, PayableKind.LINE, "8.00", "bingo.award:1")
    _prize_paid_in_cash(shift, PayableKind.BINGO, "25.00", "bingo.award:2")
    device = CashDevice.objects.create(
        venue=venue, name="Terminal 1", kind=DeviceKind.TERMINAL, token_hash="x"
    )
    stacker = books.device_account(device)
    books.post(
        venue_id=venue.pk,
        kind=TxKind.DEVICE_CASH_IN,
        key="notes",
        legs=[
            ledger.debit(stacker.pk, D("40.00")),
            ledger.credit(books.venue_account(venue.pk, Kind.TICKETS).pk, D("40.00")),
        ],
        actor="Terminal 1",
    )
    shift = shifts.open_shift_of(venue_id=venue.pk, cashier=cashier)
    shifts.empty_device(shift=shift, device=device, actor=cashier, key="e1")
    return shift


def _by_kind(shift: Shift) -> dict[str, tuple[int, Decimal, Decimal, Decimal]]:
    return {
        t.kind: (t.count, t.amount, t.drawer["cash"], t.drawer["bank_card"])
        for t in shift_report(shift).totals
    }


@pytest.mark.django_db
def test_the_reports_figures_follow_the_ledger_while_open_and_after_the_cash_up(
    worked_shift: Shift, cashier: User, operator: User
) -> None:
    shift = worked_shift
    # Cash: 100 + 30 + 12 - 2 + 20 - 20 - 8 - 25 + 40 = 147; bank card: 15.
    running = shift_report(shift)
    assert running.expected == {"cash": D("147.00"), "bank_card": D("15.00")}
    assert running.counted is None and running.differences is None
    assert _by_kind(shift) == {
        "float": (1, D("100.00"), D("100.00"), D(0)),
        "sale": (2, D("42.00"), D("42.00"), D(0)),
        "sale_return": (1, D("2.00"), D("-2.00"), D(0)),
        "device_emptied": (1, D("40.00"), D("40.00"), D(0)),
        "prize_payout": (2, D("33.00"), D("-33.00"), D(0)),
        "ticket_issue": (2, D("35.00"), D("20.00"), D("15.00")),
        "ticket_redeem": (1, D("20.00"), D("-20.00"), D(0)),
    }
    assert [(p.kind, p.method, p.count, p.amount) for p in running.prizes] == [
        ("bingo", "cash", 1, D("25.00")),
        ("line", "cash", 1, D("8.00")),
    ]
    assert running.transactions == 10

    shifts.close_shift(
        shift=shift,
        counted={"cash": D("146.00"), "bank_card": D("15.00")},
        actor=cashier,
        witness="operator",
        witness_password="pw-operator",
    )
    shift.refresh_from_db()
    closed = shift_report(shift)
    assert closed.expected == {"cash": D("147.00"), "bank_card": D("15.00")}
    assert closed.counted == {"cash": D("146.00"), "bank_card": D("15.00")}
    assert closed.differences == {"cash": D("-1.00"), "bank_card": D("0.00")}
    assert closed.difference == D("-1.00")
    totals = _by_kind(shift)
    assert next(iter(totals)) == "float" and list(totals)[-2:] == ["over_short", "cash_up"]
    assert totals["over_short"] == (1, D("1.00"), D("-1.00"), D(0))
    assert totals["cash_up"] == (2, D("161.00"), D("-146.00"), D("-15.00"))
    # Every kind's drawer movements add up to the drawers' end: zero.
    assert sum(t[2] for t in totals.values()) == 0 and sum(t[3] for t in totals.values()) == 0
    assert books.trial_balance(shift.venue_id).holds


@pytest.mark.django_db
def test_the_printed_slip_carries_the_cash_up(worked_shift: Shift, cashier: User, operator: User) -> None:
    shifts.close_shift(
        shift=worked_shift,
        counted={"cash": D("150.00"), "bank_card": D("15.00")},
        actor=cashier,
        witness="operator",
        witness_password="pw-operator",
        note="sobra",
    )
    worked_shift.refresh_from_db()
    slip = document(shift_report(worked_shift))
    assert slip.kind == "shift_report" and slip.title == "Shift report"
    assert slip.amount == Field("Difference", "€3.00")
    assert Field("Cash counted", "€150.00") in slip.lines
    assert Field("Witness", "operator") in slip.lines
    assert Field("Card sale (2)", "€42.00") in slip.lines
    assert Field("Bingo, Cash (1)", "€25.00") in slip.lines
    assert layout(slip)  # it lays out on 80 mm paper


@pytest.mark.django_db
def test_the_report_page_prints_in_spanish_and_english_for_the_venues_cashiers_only(
    worked_shift: Shift, cashier: User, caller: User, other_venue: Venue
) -> None:
    url = f"/cashier/shifts/{worked_shift.pk}/report/"
    client = Client()
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(cashier)
    page = client.get(url, HTTP_ACCEPT_LANGUAGE="en")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Shift report" in html and "Still open: running totals" in html and "@media print" not in html
    assert "€147.00" in html and "Caja 1" in html and "cashier/report.css" in html  # as the till writes it
    client.cookies["django_language"] = "es"
    spanish = client.get(url).content.decode()
    assert "Informe del turno" in spanish and "147,00\u00a0€" in spanish and "EUR" not in spanish
    other = Client()
    other.force_login(caller)
    assert other.get(url).status_code == 403
    stranger = Client()
    stranger.force_login(make_user("ajeno", other_venue, Role.CASHIER))
    assert stranger.get(url).status_code == 404


@pytest.mark.django_db
def test_printing_the_report_without_a_printer_answers_its_pdf_and_audits_it(
    worked_shift: Shift, cashier: User, caller: User
) -> None:
    response = api_client(cashier).post(f"/api/cashier/shifts/{worked_shift.pk}/report/print/")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert response.content.startswith(b"%PDF")
    entry = AuditEntry.objects.get(action="cashier.printed")
    assert entry.data["kind"] == "shift_report" and entry.data["medium"] == "pdf"
    refused(
        api_client(caller).post(f"/api/cashier/shifts/{worked_shift.pk}/report/print/"), 403, "role_required"
    )


@pytest.mark.django_db
def test_a_device_is_emptied_into_the_callers_shift_through_the_api(
    venue: Venue, till: Till, cashier: User, other_venue: Venue
) -> None:
    device = CashDevice.objects.create(
        venue=venue, name="Lector 1", kind=DeviceKind.BILL_READER, token_hash="x"
    )
    client = api_client(cashier)
    url = f"/api/cashier/devices/{device.pk}/empty/"
    refused(client.post(url, {"idempotency_key": "k1"}, format="json"), 409, "no_open_shift")
    shift = shifts.open_shift(till=till, cashier=cashier, float_amount=D("10.00"), actor=cashier)
    refused(client.post(url, {"idempotency_key": "k1"}, format="json"), 409, "nothing_to_collect")
    books.post(
        venue_id=venue.pk,
        kind=TxKind.DEVICE_CASH_IN,
        key="notes",
        legs=[
            ledger.debit(books.device_account(device).pk, D("50.00")),
            ledger.credit(books.venue_account(venue.pk, Kind.TICKETS).pk, D("50.00")),
        ],
        actor="Lector 1",
    )
    refused(
        client.post(url, {"idempotency_key": "k1", "amount": "-5"}, format="json"), 400, "invalid", "amount"
    )
    first = client.post(url, {"idempotency_key": "k1"}, format="json")
    assert first.status_code == 201, first.content
    assert first.json() | {"transaction": 0} == {
        "device": device.pk,
        "shift": shift.pk,
        "transaction": 0,
        "amount": "50.00",
        "drawer_cash": "60.00",
    }
    again = client.post(url, {"idempotency_key": "k1"}, format="json")
    assert again.status_code == 200 and again.json()["transaction"] == first.json()["transaction"]
    theirs = CashDevice.objects.create(
        venue=other_venue, name="Lector 1", kind=DeviceKind.BILL_READER, token_hash="x"
    )
    refused(
        client.post(f"/api/cashier/devices/{theirs.pk}/empty/", {"idempotency_key": "k2"}, format="json"),
        404,
        "unknown_cash_device",
    )


@pytest.mark.django_db
def test_the_printed_slip_shows_amounts_as_the_screen_does_with_the_euro_in_the_printers_code_page(
    worked_shift: Shift, cashier: User, till: Till
) -> None:
    """Spanish: "147,00 €" on the printer (ESC t 19 selects PC858, where "€" is byte 0xD5) and in the PDF
    text, never "EUR"; the thousands grouped as on the screen ("1.234,50 €")."""
    url = f"/api/cashier/shifts/{worked_shift.pk}/report/print/"
    client = api_client(cashier)
    client.cookies["django_language"] = "es"
    with fake_printer() as printer:
        Till.objects.filter(pk=till.pk).update(printer=printer.address)
        answer = client.post(url)
        data = printer.job()
    assert answer.status_code == 200, answer.content
    assert b"\x1bt\x13" in data  # ESC t 19: code page PC858 (CP858), which has the euro sign
    assert "147,00 €".encode("cp858") == b"147,00 \xd5" and b"147,00 \xd5" in data
    assert b"EUR" not in data and b"147.00" not in data
    assert "Efectivo esperado" in read(data).text and "147,00 €" in read(data).text
    Till.objects.filter(pk=till.pk).update(printer="")
    pdf = client.post(url)
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    text = "".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf.content)).pages)
    assert "147,00 €" in text and "EUR" not in text and "Informe del turno" in text
    # A grouped figure, laid out and encoded as the printer gets it.
    with translation.override("es"):
        slip = document(shift_report(worked_shift))
    big = replace(slip, lines=(*slip.lines, Field("Total", i18n.amount(D("1234.50"), "EUR"))))
    assert b"1.234,50 \xd5" in escpos.render(big)
