"""/api/cashier/venues/<venue>/payables/: the prizes waiting at the cashier, paying one, its receipt; the
game recall's payments."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from bingo.traditional.models import CardSeries, Game
from halls.cashier.models import LedgerTransaction, Payable, PlayerCard, Till
from halls.models import AuditEntry, Role, Venue
from tests.api_support import api_client, refused
from tests.cashier.payable_support import line_and_bingo, on_shift
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

D = Decimal


@pytest.fixture
def won(
    manual_game: Game, card_series: CardSeries, caller: User, cashier: User, venue: Venue
) -> dict[str, Any]:
    played = line_and_bingo(manual_game, card_series, caller, cashier)
    on_shift(cashier, venue, "10.00")
    return played


def url(venue: Venue, payable: Payable | int | None = None, action: str = "") -> str:
    base = f"/api/cashier/venues/{venue.pk}/payables/"
    if payable is None:
        return base
    pk = payable if isinstance(payable, int) else payable.pk
    return f"{base}{pk}/{action + '/' if action else ''}"


def pay(client: Any, venue: Venue, payable: Payable | int, **body: Any) -> Any:
    return client.post(url(venue, payable, "pay"), body, format="json")


def test_the_waiting_list_newest_first_for_the_venues_cashiers_only(
    won: dict[str, Any], venue: Venue, other_venue: Venue, cashier: User, caller: User
) -> None:
    client = api_client(cashier)
    listed = client.get(url(venue)).json()
    expected = [won["bingo"], *reversed(won["lines"])]
    assert [row["id"] for row in listed] == [p.pk for p in expected]
    first = listed[0]
    assert {k: first[k] for k in ("kind", "kind_label", "amount", "state", "paid_by", "receipt")} == {
        "kind": "bingo",
        "kind_label": "Bingo",
        "amount": "4.00",
        "state": "waiting",
        "paid_by": "",
        "receipt": "",
    }
    assert first["description"] == won["bingo"].description and first["awarded_at"]
    assert client.get(url(venue, won["bingo"])).json()["id"] == won["bingo"].pk
    refused(api_client(caller).get(url(venue)), 403, "role_required")
    stranger = make_user("cajero-ajeno", other_venue, Role.CASHIER)
    refused(api_client(stranger).get(url(venue)), 404, "unknown_venue")
    refused(api_client(stranger).get(url(other_venue, won["bingo"])), 404, "unknown_payable")
    refused(client.get(url(venue) + "?state=lost"), 400, "invalid")


def test_pay_in_cash_then_a_retry_answers_200_and_another_payment_409(
    won: dict[str, Any], venue: Venue, cashier: User
) -> None:
    client = api_client(cashier)
    bingo = won["bingo"]
    paid = pay(client, venue, bingo, method="cash", idempotency_key="p-1")
    assert paid.status_code == 201, paid.content
    body = paid.json()
    assert (body["state"], body["method"], body["paid_by"], body["receipt"]) == (
        "paid",
        "cash",
        "cashier",
        "R-000001",
    )
    again = pay(client, venue, bingo, method="cash", idempotency_key="p-1")
    assert again.status_code == 200 and again.json() == body
    error = refused(pay(client, venue, bingo, method="cash"), 409, "already_paid")
    assert error["details"]["paid_by"] == "cashier" and error["details"]["receipt"] == "R-000001"
    assert LedgerTransaction.objects.filter(kind="prize_payout").count() == 1
    listed = client.get(url(venue)).json()
    assert bingo.pk not in [row["id"] for row in listed]
    assert [row["id"] for row in client.get(url(venue) + "?state=paid").json()] == [bingo.pk]


def test_bad_requests_name_the_problem_and_pay_nothing(
    won: dict[str, Any], venue: Venue, other_venue: Venue, cashier: User
) -> None:
    client = api_client(cashier)
    line = won["lines"][0]
    foreign = PlayerCard.objects.create(venue=other_venue, number="300000000013", created_at=timezone.now())
    before = LedgerTransaction.objects.count()
    refused(pay(client, venue, line, method="cheque"), 400, "invalid")
    refused(pay(client, venue, line, method="player_card"), 400, "card_required")
    refused(pay(client, venue, line, method="player_card", card=foreign.number), 404, "unknown_card")
    refused(pay(client, venue, 999999, method="cash"), 404, "unknown_payable")
    refused(client.post(url(venue, line, "receipt"), {}, format="json"), 409, "not_paid")
    assert LedgerTransaction.objects.count() == before
    assert Payable.objects.get(pk=line.pk).state == "waiting"


def test_pay_to_a_player_card_by_its_number(won: dict[str, Any], venue: Venue, cashier: User) -> None:
    card = PlayerCard.objects.create(venue=venue, number="100000000033", created_at=timezone.now())
    answer = pay(api_client(cashier), venue, won["bingo"], method="player_card", card=card.number)
    assert answer.status_code == 201 and answer.json()["method"] == "player_card"


def test_the_receipt_prints_as_a_pdf_where_the_till_has_no_printer_and_later_as_a_duplicate(
    won: dict[str, Any], venue: Venue, cashier: User
) -> None:
    client = api_client(cashier)
    bingo = won["bingo"]
    pay(client, venue, bingo, method="cash")
    first = client.post(url(venue, bingo, "receipt"), {}, format="json")
    assert first.status_code == 200 and first["Content-Type"] == "application/pdf"
    assert first.content.startswith(b"%PDF") and "R-000001" in first["Content-Disposition"]
    till = Till.objects.create(venue=venue, name="Caja 9")
    second = client.post(url(venue, bingo, "receipt"), {"till": till.pk}, format="json")
    assert second.status_code == 200 and second.content != first.content
    prints = AuditEntry.objects.filter(action="cashier.printed", object_id=str(bingo.pk)).order_by("pk")
    own = on_shift(cashier, venue).till.name  # left out: the cashier's open shift's till
    assert [(e.data["kind"], e.data["till"]) for e in prints] == [("payout", own), ("payout", "Caja 9")]


def test_the_game_recall_shows_who_paid(
    won: dict[str, Any], venue: Venue, cashier: User, caller: User
) -> None:
    pay(api_client(cashier), venue, won["bingo"], method="cash")
    recall = api_client(caller).get(f"/api/games/{won['game'].pk}/recall/")
    assert recall.status_code == 200, recall.content
    rows = recall.json()["payouts"]
    bingo = next(r for r in rows if r["prize"] == "bingo")
    assert (bingo["serial"], bingo["amount"]) == (won["bingo_serial"], "4.00")
    assert {k: bingo["payout"][k] for k in ("state", "paid_by", "method", "receipt")} == {
        "state": "paid",
        "paid_by": "cashier",
        "method": "cash",
        "receipt": "R-000001",
    }
    assert [r["payout"]["state"] for r in rows if r["prize"] == "line"] == ["waiting"] * 3
