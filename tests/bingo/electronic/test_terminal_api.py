"""The terminals' device API: a terminal authenticates as its cash device; hello, a card inserted, a purchase
and a cash-out are idempotent (201 then 200 with the first answer), refusals are 4xx JSON naming the problem
with nothing written."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from bingo.electronic.models import (
    ECard,
    Purchase,
    Terminal,
    TerminalMessage,
    TerminalSoftware,
)
from halls.cashier.ledger import Kind
from halls.cashier.models import CashierSettings, LedgerTransaction, Ticket, TxKind
from halls.cashier.services import devices, player_cards
from halls.cashier.services import ledger as books
from halls.models import AuditEntry, Venue
from tests.bingo.electronic.sales_support import OnSale, on_sale

pytestmark = pytest.mark.django_db
D = Decimal
URL = "/api/electronic/terminal/"


@pytest.fixture
def sale(venue: Venue, operator: User, cashier: User) -> OnSale:
    return on_sale(venue, operator, cashier)


def client_of(terminal: Terminal, token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"CashDevice {terminal.device.pk}:{token}")
    return client


@pytest.fixture
def api(sale: OnSale) -> APIClient:
    return client_of(sale.terminal, sale.token)


def _error(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.content
    body: dict[str, Any] = answer.json()["error"]
    assert body["code"] == code, body
    assert body["message"]
    return body


def test_a_terminal_must_present_its_device_token(sale: OnSale, venue: Venue, operator: User) -> None:
    _error(
        APIClient().post(URL + "card/", {"card": sale.card.number}, format="json"), 401, "not_authenticated"
    )
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION=f"CashDevice {sale.terminal.device.pk}:nope")
    _error(wrong.post(URL + "card/", {"card": sale.card.number}, format="json"), 401, "bad_device_token")
    reader, token = devices.register_device(
        venue_id=venue.pk, name="Lector", kind="bill_reader", actor=operator
    )
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"CashDevice {reader.pk}:{token}")
    _error(other.post(URL + "card/", {"card": sale.card.number}, format="json"), 403, "not_a_terminal")


def test_hello_records_the_software_and_the_clock_once_per_seq(
    api: APIClient, sale: OnSale, venue: Venue
) -> None:
    TerminalSoftware.objects.create(
        venue=venue, version="2.1.0", authorisation_ref="AUT-SW", approved_at=timezone.now()
    )
    clock = timezone.now() + timedelta(seconds=3)
    answer = api.post(
        URL + "hello/", {"seq": 1, "software_version": "2.1.0", "clock": clock.isoformat()}, format="json"
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["software_approved"] is True and body["refusal"] is None and body["state"] == "in_service"
    assert 2500 <= body["clock_offset_ms"] <= 3100
    terminal = Terminal.objects.get(pk=sale.terminal.pk)
    assert terminal.software_version == "2.1.0" and terminal.last_seen_at is not None
    assert terminal.clock_offset_ms == body["clock_offset_ms"]
    assert AuditEntry.objects.filter(action="electronic.terminal_software").count() == 1
    again = api.post(
        URL + "hello/", {"seq": 1, "software_version": "2.1.0", "clock": clock.isoformat()}, format="json"
    )
    assert again.status_code == 200 and again.json() == body
    _error(
        api.post(
            URL + "hello/", {"seq": 1, "software_version": "2.2.0", "clock": clock.isoformat()}, format="json"
        ),
        409,
        "seq_reused",
    )
    # The same version again is not a change to audit; an unapproved one is said so.
    api.post(
        URL + "hello/", {"seq": 2, "software_version": "2.1.0", "clock": clock.isoformat()}, format="json"
    )
    assert AuditEntry.objects.filter(action="electronic.terminal_software").count() == 1
    odd = api.post(
        URL + "hello/", {"seq": 3, "software_version": "9.9", "clock": clock.isoformat()}, format="json"
    )
    assert odd.json()["software_approved"] is False
    assert TerminalMessage.objects.filter(terminal=sale.terminal).count() == 3
    bad = _error(
        api.post(URL + "hello/", {"seq": -1, "software_version": "", "clock": "x"}, format="json"),
        400,
        "invalid",
    )
    assert set(bad["fields"]) == {"seq", "software_version", "clock"}


def test_a_purchase_then_its_retry_then_the_card_shows_the_cards(
    api: APIClient, sale: OnSale, venue: Venue
) -> None:
    body = {"card": sale.card.number, "cards": 3, "key": "p-1", "game": sale.game.pk}
    answer = api.post(URL + "purchase/", body, format="json")
    assert answer.status_code == 201, answer.content
    bought = answer.json()
    assert bought["amount"] == "1.50" and bought["balance"] == "18.50" and len(bought["cards"]) == 3
    assert bought["replayed"] is False and bought["game"] == sale.game.pk
    again = api.post(URL + "purchase/", body, format="json")
    assert again.status_code == 200 and again.json() == {**bought, "replayed": True}
    assert Purchase.objects.count() == 1 and ECard.objects.count() == 3
    _error(api.post(URL + "purchase/", {**body, "cards": 2}, format="json"), 409, "key_reused")
    card = api.post(URL + "card/", {"card": f"TJ:{sale.card.number}"}, format="json")
    assert card.status_code == 200
    shown = card.json()
    assert shown["balance"] == "18.50" and [g["game"] for g in shown["games"]] == [sale.game.pk]
    [game] = shown["games"]
    assert game["state"] == "selling"
    assert [c["cells"] for c in game["cards"]] == [c["cells"] for c in bought["cards"]]
    # Nothing drawn yet: a 90-ball card lacks 5 for a line and 15 for the bingo.
    assert all(c["missing"]["line"] == 5 and c["missing"]["full"] == 15 for c in game["cards"])


def test_purchase_refusals_are_named_and_write_nothing(
    api: APIClient, sale: OnSale, venue: Venue, other_venue: Venue
) -> None:
    def count() -> tuple[int, int]:
        return Purchase.objects.count(), LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).count()

    n = sale.card.number
    _error(api.post(URL + "purchase/", {"card": n, "cards": "x", "key": "a"}, format="json"), 400, "invalid")
    _error(api.post(URL + "purchase/", {"card": n, "cards": 9, "key": "a"}, format="json"), 409, "bad_count")
    _error(
        api.post(URL + "purchase/", {"card": "123", "cards": 1, "key": "a"}, format="json"),
        400,
        "bad_card_number",
    )
    foreign = player_cards.issue_card(venue_id=other_venue.pk, actor="test")
    _error(
        api.post(URL + "purchase/", {"card": foreign.number, "cards": 1, "key": "a"}, format="json"),
        404,
        "unknown_card",
    )
    _error(
        api.post(URL + "purchase/", {"card": n, "cards": 1, "key": "a", "game": 999999}, format="json"),
        409,
        "sales_closed",
    )
    player_cards.block_card(card=sale.card, reason="lost", actor="test")
    _error(
        api.post(URL + "purchase/", {"card": n, "cards": 1, "key": "a"}, format="json"), 409, "card_blocked"
    )
    _error(api.post(URL + "card/", {"card": n}, format="json"), 409, "card_blocked")
    assert count() == (0, 0)


def test_beyond_the_balance_is_refused(venue: Venue, operator: User, cashier: User) -> None:
    sale = on_sale(venue, operator, cashier, balance=D("1.00"))
    api = client_of(sale.terminal, sale.token)
    _error(
        api.post(URL + "purchase/", {"card": sale.card.number, "cards": 3, "key": "a"}, format="json"),
        409,
        "insufficient_balance",
    )
    assert Purchase.objects.count() == 0 and player_cards.balance(sale.card) == D("1.00")


def test_a_failed_terminal_cannot_buy(api: APIClient, sale: OnSale) -> None:
    Terminal.objects.filter(pk=sale.terminal.pk).update(state="failed")
    _error(
        api.post(URL + "purchase/", {"card": sale.card.number, "cards": 1, "key": "a"}, format="json"),
        409,
        "terminal_not_verified",
    )
    snap = api.post(URL + "snapshot/", {}, format="json").json()
    assert snap["terminal"]["refusal"] == "terminal_not_verified"


def test_a_cashout_above_the_venues_maximum_ticket_value_is_refused_and_moves_nothing(
    api: APIClient, sale: OnSale, venue: Venue
) -> None:
    CashierSettings.objects.create(venue=venue, ticket_max_amount=D("15.00"), ticket_cage_above=D("10.00"))
    body = {"seq": 3, "card": sale.card.number}
    error = _error(
        api.post(URL + "cashout/", body, format="json", HTTP_ACCEPT_LANGUAGE="es"),
        409,
        "ticket_above_maximum",
    )
    assert "15,00" in error["message"] and "20,00" in error["message"]
    assert not Ticket.objects.exists() and player_cards.balance(sale.card) == D("20.00")
    assert not TerminalMessage.objects.filter(terminal=sale.terminal, seq=3).exists()
    part = api.post(
        URL + "cashout/", {**body, "amount": "15.00"}, format="json"
    )  # the same seq, now answered
    assert part.status_code == 201, part.content
    assert part.json()["amount"] == "15.00" and part.json()["balance"] == "5.00"
    assert books.trial_balance(venue.pk).holds


def test_a_cashout_prints_the_balance_on_a_ticket_once(api: APIClient, sale: OnSale, venue: Venue) -> None:
    api.post(
        URL + "hello/",
        {"seq": 7, "software_version": "1", "clock": timezone.now().isoformat()},
        format="json",
    )
    api.post(URL + "purchase/", {"card": sale.card.number, "cards": 2, "key": "p"}, format="json")
    body = {"seq": 8, "card": sale.card.number}
    answer = api.post(URL + "cashout/", body, format="json")
    assert answer.status_code == 201, answer.content
    out = answer.json()
    assert out["amount"] == "19.00" and out["balance"] == "0.00"
    ticket = Ticket.objects.get(number=out["ticket"])
    assert ticket.amount == D("19.00") and ticket.issued_by == sale.terminal.device.name
    again = api.post(URL + "cashout/", body, format="json")
    assert again.status_code == 200 and again.json() == out
    assert Ticket.objects.count() == 1
    _error(api.post(URL + "cashout/", {"seq": 7, "card": sale.card.number}, format="json"), 409, "seq_reused")
    _error(
        api.post(URL + "cashout/", {"seq": 9, "card": sale.card.number}, format="json"),
        409,
        "insufficient_balance",
    )
    part = api.post(URL + "cashout/", {"seq": 10, "card": sale.card.number, "amount": "0"}, format="json")
    _error(part, 400, "bad_amount")
    assert Ticket.objects.count() == 1 and player_cards.balance(sale.card) == D("0.00")
    assert books.venue_account(venue.pk, Kind.TICKETS).balance == D("19.00")
    assert books.trial_balance(venue.pk).holds
