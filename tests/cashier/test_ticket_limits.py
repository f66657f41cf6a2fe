"""A venue's ticket limits: no ticket above its maximum value is issued (a till's sale, a card's balance, a
terminal's cash-out, a prize paid as a ticket), and a ticket above its cage figure is paid only at a till,
never by a terminal; each refusal names the figure (in Spanish for a Spanish reader) and moves nothing. The
operator changes the figures in the admin through their service (audited); a blank figure follows the
jurisdiction's default."""

from __future__ import annotations

import hashlib
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.utils import translation
from rest_framework.test import APIClient

from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import (
    CashDevice,
    CashierSettings,
    DeviceKind,
    Means,
    Shift,
    Ticket,
    TicketEventKind,
    TicketState,
    TxKind,
)
from halls.cashier.services import cashier_settings, tickets
from halls.cashier.services import ledger as books
from halls.cashier.ticketrules import TicketLimits
from halls.errors import Conflict, InvalidInput, PermissionDenied
from halls.models import AuditEntry, Venue
from tests.api_support import api_client, refused
from tests.cashier.ticket_support import balance, books_count, funded_card, holds, open_till, tickets_balance

pytestmark = pytest.mark.cashier_off_shift

D = Decimal
TOKEN = "terminal-token"


@pytest.fixture
def shift(venue: Venue, cashier: User) -> Shift:
    return open_till(venue, cashier, float_amount="5000.00")


@pytest.fixture
def limits(venue: Venue) -> CashierSettings:
    """The venue's own figures: at most 500.00 a ticket, above 100.00 paid only at the cage."""
    return CashierSettings.objects.create(
        venue=venue, ticket_max_amount=D("500.00"), ticket_cage_above=D("100.00")
    )


@pytest.fixture
def terminal(venue: Venue) -> tuple[CashDevice, APIClient]:
    device = CashDevice.objects.create(
        venue=venue,
        name="Terminal 7",
        kind=DeviceKind.TERMINAL,
        token_hash=hashlib.sha256(TOKEN.encode()).hexdigest(),
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"CashDevice {device.pk}:{TOKEN}")
    return device, client


def _sell(venue: Venue, cashier: User, amount: str, key: str) -> Ticket:
    return tickets.issue_for_payment(
        venue_id=venue.pk, amount=D(amount), means=Means.CASH, key=key, actor=cashier
    ).ticket


# --- the figures in force -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_without_its_own_figures_a_venue_follows_its_jurisdiction_then_the_house_default(
    venue: Venue,
) -> None:
    assert cashier_settings.ticket_limits(venue.pk) == TicketLimits(D("3000.00"), D("1000.00"))
    with override_settings(HALL_TICKET_BY_JURISDICTION={venue.jurisdiction: {"max_amount": "2000"}}):
        assert cashier_settings.ticket_limits(venue.pk) == TicketLimits(D("2000.00"), D("1000.00"))
    CashierSettings.objects.create(venue=venue, ticket_cage_above=D("250.00"))
    assert cashier_settings.ticket_limits(venue.pk) == TicketLimits(D("3000.00"), D("250.00"))


# --- the maximum, when a ticket is issued ---------------------------------------------------------------


@pytest.mark.django_db
def test_a_ticket_of_the_maximum_is_sold_and_one_cent_more_is_refused_writing_nothing(
    venue: Venue, cashier: User, shift: Shift, limits: CashierSettings
) -> None:
    assert _sell(venue, cashier, "500.00", "at").amount == D("500.00")
    counted, audited = books_count(), AuditEntry.objects.count()
    with translation.override("es"), pytest.raises(Conflict) as refused_:
        _sell(venue, cashier, "500.01", "above")
    error = refused_.value
    assert error.code == "ticket_above_maximum" and error.status == 409
    assert error.details["maximum"] == "500.00"
    assert "500,01 €" in error.message and "500,00 €" in error.message
    assert "No se puede emitir" in error.message and "valor máximo" in error.message
    assert books_count() == counted and AuditEntry.objects.count() == audited
    assert Ticket.objects.count() == 1 and balance(books.drawer(shift, Means.CASH)) == D("5500.00")


@pytest.mark.django_db
def test_a_cards_balance_above_the_maximum_stays_on_the_card(
    venue: Venue, cashier: User, shift: Shift, limits: CashierSettings
) -> None:
    card = funded_card(venue, amount="800.00")
    with pytest.raises(Conflict) as whole:
        tickets.issue_from_card(
            venue_id=venue.pk, card_number=card.number, amount=None, key="w", actor=cashier
        )
    assert whole.value.code == "ticket_above_maximum"
    assert balance(books.card_account(card)) == D("800.00") and not Ticket.objects.exists()
    part = tickets.issue_from_card(
        venue_id=venue.pk, card_number=card.number, amount=D("500.00"), key="p", actor=cashier
    )
    assert part.ticket.amount == D("500.00") and balance(books.card_account(card)) == D("300.00")


@pytest.mark.django_db
def test_a_retry_of_a_ticket_issued_before_the_maximum_was_lowered_answers_that_ticket(
    venue: Venue, cashier: User, operator: User, shift: Shift
) -> None:
    first = _sell(venue, cashier, "900.00", "k")
    cashier_settings.change_cashier_settings(
        venue_id=venue.pk,
        actor=operator,
        ticket_valid_days=30,
        ticket_max_amount="500.00",
        ticket_cage_above="250.00",
    )
    again = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("900.00"), means="cash", key="k", actor=cashier
    )
    assert again.replayed and again.ticket.pk == first.pk


@pytest.mark.django_db
def test_the_till_api_refuses_a_ticket_above_the_maximum_in_spanish(
    venue: Venue, cashier: User, shift: Shift, limits: CashierSettings
) -> None:
    client = api_client(cashier)
    url = f"/api/cashier/venues/{venue.pk}/tickets/"
    counted = books_count()
    answer = client.post(url, {"amount": "1000.00"}, format="json", HTTP_ACCEPT_LANGUAGE="es")
    error = refused(answer, 409, "ticket_above_maximum", "1.000,00 €", "500,00 €", "valor máximo")
    assert error["details"]["maximum"] == "500.00"
    assert books_count() == counted and not Ticket.objects.exists()
    assert client.post(url, {"amount": "499.99"}, format="json").status_code == 201


@pytest.mark.django_db
def test_a_terminal_cash_out_above_the_maximum_is_refused_with_its_code_and_a_retry_is_not_stuck(
    venue: Venue, limits: CashierSettings, terminal: tuple[CashDevice, APIClient]
) -> None:
    _device, client = terminal
    card = funded_card(venue, amount="600.00")
    url = "/api/cashier/device/ticket-out/"
    counted = books_count()
    answer = client.post(url, {"seq": 1, "card": card.number}, format="json", HTTP_ACCEPT_LANGUAGE="es")
    refused(answer, 409, "ticket_above_maximum", "600,00 €", "500,00 €")
    assert books_count() == counted and not Ticket.objects.exists()
    assert balance(books.card_account(card)) == D("600.00")
    # the player asks for part of it: the same seq was never answered, so it is free
    part = client.post(url, {"seq": 1, "card": card.number, "amount": "450.00"}, format="json")
    assert part.status_code == 201, part.content
    assert part.json()["card_balance"] == "150.00" and holds(venue)


@pytest.mark.django_db
def test_a_prize_is_not_paid_as_a_ticket_above_the_maximum(
    venue: Venue, cashier: User, shift: Shift, limits: CashierSettings
) -> None:
    prizes = books.venue_account(venue.pk, Kind.PRIZES_PAYABLE)
    house = books.venue_account(venue.pk, Kind.HOUSE)
    books.post(
        venue_id=venue.pk,
        kind=TxKind.PRIZE_AWARD,
        key="award",
        legs=[ledger.debit(house.pk, D("3000.00")), ledger.credit(prizes.pk, D("3000.00"))],
        actor="test",
    )
    with pytest.raises(Conflict) as refused_:
        tickets.issue_ticket(
            venue_id=venue.pk,
            amount=D("3000.00"),
            funded_by=prizes,
            key="payout",
            actor=cashier,
            shift=shift,
            kind=TxKind.PRIZE_PAYOUT,
        )
    assert refused_.value.code == "ticket_above_maximum"
    assert balance(prizes) == D("3000.00") and tickets_balance(venue) == D("0.00")


# --- the cage figure, when a ticket is redeemed ---------------------------------------------------------


@pytest.mark.django_db
def test_a_terminal_refuses_a_ticket_above_the_cage_figure_and_sends_the_player_to_the_cage(
    venue: Venue, cashier: User, shift: Shift, limits: CashierSettings, terminal: tuple[CashDevice, APIClient]
) -> None:
    _device, client = terminal
    big = _sell(venue, cashier, "100.01", "big")
    card = funded_card(venue, amount="0.00")
    url = "/api/cashier/device/ticket-in/"
    counted = books_count()
    answer = client.post(
        url, {"seq": 5, "number": big.number, "card": card.number}, format="json", HTTP_ACCEPT_LANGUAGE="es"
    )
    error = refused(answer, 409, "ticket_cage_only", "100,01 €", "100,00 €", "solo en caja")
    assert error["details"]["cage_above"] == "100.00"
    assert books_count() == counted and balance(books.card_account(card)) == D("0.00")
    big.refresh_from_db()
    assert big.state == TicketState.ISSUED and tickets_balance(venue) == D("100.01")
    refusal = [e for e in tickets.life(big) if e.kind == TicketEventKind.REFUSED]
    assert [e.reason for e in refusal] == ["ticket_cage_only"] and refusal[0].device == "Terminal 7"
    # the cage pays it
    paid = tickets.redeem_for_cash(venue_id=venue.pk, number=big.number, key="cage", actor=cashier)
    assert paid.ticket.state == TicketState.REDEEMED and tickets_balance(venue) == D("0.00")
    assert holds(venue)


@pytest.mark.django_db
def test_a_ticket_of_the_cage_figure_is_taken_at_a_terminal(
    venue: Venue, cashier: User, shift: Shift, limits: CashierSettings, terminal: tuple[CashDevice, APIClient]
) -> None:
    _device, client = terminal
    ticket = _sell(venue, cashier, "100.00", "at")
    card = funded_card(venue, amount="0.00")
    answer = client.post(
        "/api/cashier/device/ticket-in/",
        {"seq": 1, "number": ticket.number, "card": card.number},
        format="json",
    )
    assert answer.status_code == 201, answer.content
    assert answer.json()["card_balance"] == "100.00"


@pytest.mark.django_db
def test_a_ticket_above_the_cage_figure_goes_into_a_card_at_the_till(
    venue: Venue, cashier: User, shift: Shift, limits: CashierSettings
) -> None:
    big = _sell(venue, cashier, "400.00", "big")
    card = funded_card(venue, amount="0.00")
    tickets.redeem_into_card(
        venue_id=venue.pk, number=big.number, card_number=card.number, key="r", actor=cashier
    )
    assert balance(books.card_account(card)) == D("400.00")


@pytest.mark.django_db
def test_an_already_redeemed_ticket_says_so_at_a_terminal_whatever_its_amount(
    venue: Venue, cashier: User, shift: Shift, limits: CashierSettings, terminal: tuple[CashDevice, APIClient]
) -> None:
    _device, client = terminal
    big = _sell(venue, cashier, "300.00", "big")
    tickets.redeem_for_cash(venue_id=venue.pk, number=big.number, key="cage", actor=cashier)
    card = funded_card(venue, amount="0.00")
    answer = client.post(
        "/api/cashier/device/ticket-in/", {"seq": 1, "number": big.number, "card": card.number}, format="json"
    )
    refused(answer, 409, "ticket_redeemed")


# --- the operator changes the figures -------------------------------------------------------------------


@pytest.mark.django_db
def test_the_operator_changes_the_figures_audited_with_old_and_new(venue: Venue, operator: User) -> None:
    row = cashier_settings.change_cashier_settings(
        venue_id=venue.pk,
        actor=operator,
        ticket_valid_days=14,
        ticket_max_amount="2000",
        ticket_cage_above=D("600.00"),
    )
    assert (row.ticket_valid_days, row.ticket_max_amount, row.ticket_cage_above) == (
        14,
        D("2000.00"),
        D("600.00"),
    )
    assert cashier_settings.ticket_limits(venue.pk) == TicketLimits(D("2000.00"), D("600.00"))
    cashier_settings.change_cashier_settings(
        venue_id=venue.pk, actor=operator, ticket_valid_days=14, ticket_max_amount="", ticket_cage_above=None
    )
    assert cashier_settings.ticket_limits(venue.pk) == TicketLimits(D("3000.00"), D("1000.00"))
    first, second = AuditEntry.objects.filter(action="cashier.settings_changed").order_by("pk")
    assert first.data["before"] == {
        "ticket_valid_days": None,
        "ticket_max_amount": None,
        "ticket_cage_above": None,
    }
    assert first.data["after"] == {
        "ticket_valid_days": 14,
        "ticket_max_amount": "2000.00",
        "ticket_cage_above": "600.00",
    }
    assert second.data["before"] == first.data["after"]
    assert second.data["after"]["ticket_max_amount"] is None
    assert CashierSettings.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("figures", "code", "words"),
    [
        ({"ticket_max_amount": "0"}, "bad_amount", ["ticket_max_amount"]),
        ({"ticket_cage_above": "-5"}, "bad_amount", ["ticket_cage_above"]),
        ({"ticket_max_amount": "12,5"}, "bad_amount", ["ticket_max_amount"]),
        ({"ticket_max_amount": "1.001"}, "bad_amount", ["ticket_max_amount"]),
        ({"ticket_max_amount": "400"}, "cage_above_maximum", ["1.000,00 €", "400,00 €", "caja"]),
        ({"ticket_max_amount": "400", "ticket_cage_above": "400.01"}, "cage_above_maximum", ["400,01 €"]),
        ({"ticket_valid_days": 0}, "bad_valid_days", ["ticket_valid_days"]),
    ],
)
def test_bad_figures_are_refused_in_spanish_naming_the_problem_and_write_nothing(
    venue: Venue, operator: User, figures: dict[str, object], code: str, words: list[str]
) -> None:
    asked: dict[str, object] = {
        "ticket_valid_days": 30,
        "ticket_max_amount": "",
        "ticket_cage_above": "",
        **figures,
    }
    audited = AuditEntry.objects.count()
    with translation.override("es"), pytest.raises(InvalidInput) as refused_:
        cashier_settings.change_cashier_settings(venue_id=venue.pk, actor=operator, **asked)  # type: ignore[arg-type]
    assert refused_.value.code == code
    for word in words:
        assert word in refused_.value.message, (word, refused_.value.message)
    assert not CashierSettings.objects.exists() and AuditEntry.objects.count() == audited


@pytest.mark.django_db
def test_only_the_operator_changes_the_figures(venue: Venue, cashier: User) -> None:
    with pytest.raises(PermissionDenied):
        cashier_settings.change_cashier_settings(
            venue_id=venue.pk,
            actor=cashier,
            ticket_valid_days=30,
            ticket_max_amount="1",
            ticket_cage_above="1",
        )
    assert not CashierSettings.objects.exists()


@pytest.mark.django_db
def test_the_admin_edits_the_figures_through_the_service(admin_client: Client, venue: Venue) -> None:
    added = admin_client.post(
        "/admin/cashier/cashiersettings/add/",
        {"venue": venue.pk, "ticket_valid_days": 30, "ticket_max_amount": "1500.00", "ticket_cage_above": ""},
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    row = CashierSettings.objects.get(venue=venue)
    assert row.ticket_max_amount == D("1500.00") and row.ticket_cage_above is None
    assert AuditEntry.objects.filter(action="cashier.settings_changed", object_id=str(row.pk)).count() == 1
    bad = admin_client.post(
        f"/admin/cashier/cashiersettings/{row.pk}/change/",
        {"ticket_valid_days": 30, "ticket_max_amount": "900.00", "ticket_cage_above": "950.00"},
        HTTP_ACCEPT_LANGUAGE="es",
    )
    assert bad.status_code == 200 and "950,00 €" in bad.content.decode()
    row.refresh_from_db()
    assert row.ticket_max_amount == D("1500.00") and row.ticket_cage_above is None
    changed = admin_client.post(
        f"/admin/cashier/cashiersettings/{row.pk}/change/",
        {"ticket_valid_days": 10, "ticket_max_amount": "900.00", "ticket_cage_above": "250.00"},
    )
    assert changed.status_code == 302
    row = CashierSettings.objects.get(pk=row.pk)
    assert (row.ticket_valid_days, row.ticket_max_amount, row.ticket_cage_above) == (
        10,
        D("900.00"),
        D("250.00"),
    )
    assert AuditEntry.objects.filter(action="cashier.settings_changed").count() == 2
    assert admin_client.post(f"/admin/cashier/cashiersettings/{row.pk}/delete/").status_code == 403
