"""The player-card API: cashier role, venue-scoped; JSON refusals naming the problem, writing nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from halls.cashier import cardnumber
from halls.cashier.models import LedgerTransaction, PlayerCard, Shift, Till
from halls.cashier.services import player_cards, shifts
from halls.models import AuditEntry, Role, Venue
from tests.api_support import api_client, refused
from tests.conftest import make_user

# The cashier opens its shift in each test, with the float the test counts.
pytestmark = pytest.mark.cashier_off_shift


D = Decimal


@pytest.fixture
def shift(venue: Venue, cashier: User) -> Shift:
    till = Till.objects.create(venue=venue, name="Caja 1")
    return shifts.open_shift(till=till, cashier=cashier, float_amount=D("50.00"), actor=cashier)


def _url(venue: Venue, rest: str = "") -> str:
    return f"/api/cashier/venues/{venue.pk}/cards/{rest}"


@pytest.mark.django_db
def test_a_cashier_issues_loads_spends_history_and_cashes_out(
    venue: Venue, cashier: User, shift: Shift
) -> None:
    client = api_client(cashier)
    issued = client.post(_url(venue), {}, format="json")
    assert issued.status_code == 201, issued.content
    body = issued.json()
    number = body["number"]
    assert body["qr"] == f"TJ:{number}" and body["balance"] == "0.00" and body["state"] == "active"
    assert body["printed"] == cardnumber.printed(number)
    loaded = client.post(
        _url(venue, f"TJ:{number}/cash-in/"),
        {"amount": "20.00", "means": "bank_card", "idempotency_key": "k1"},
        format="json",
    )
    assert loaded.status_code == 201, loaded.content
    assert loaded.json()["balance"] == "20.00" and loaded.json()["shift"] == shift.pk
    again = client.post(
        _url(venue, f"{number}/cash-in/"),
        {"amount": "20.00", "means": "bank_card", "idempotency_key": "k1"},
        format="json",
    )
    assert again.status_code == 200 and again.json()["transaction"] == loaded.json()["transaction"]
    refused(
        client.post(
            _url(venue, f"{number}/cash-in/"), {"amount": "21.00", "idempotency_key": "k1"}, format="json"
        ),
        409,
        "idempotency_key_reused",
    )
    card = PlayerCard.objects.get(number=number)
    player_cards.spend(card=card, amount=D("1.50"), key="t", actor="terminal-1", device="terminal-1")
    out = client.post(_url(venue, f"{number}/cash-out/"), {"amount": "8.50"}, format="json")
    assert out.status_code == 201 and out.json()["balance"] == "10.00"
    shown = client.get(_url(venue, f"{cardnumber.printed(number)}/"))
    assert shown.status_code == 200 and shown.json()["balance"] == "10.00"
    history = client.get(_url(venue, f"{number}/history/"), {"limit": 2}).json()
    assert [(e["kind"], e["amount"], e["balance"]) for e in history["entries"]] == [
        ("card_cash_out", "-8.50", "10.00"),
        ("card_spend", "-1.50", "18.50"),
    ]
    rest = client.post(_url(venue, f"{number}/cash-out/"), {}, format="json")
    assert rest.status_code == 201 and rest.json()["amount"] == "10.00" and rest.json()["balance"] == "0.00"


@pytest.mark.django_db
@pytest.mark.parametrize("amount", ["-5.00", "0", "0.00", "1.001", "abc", "", "NaN", "1e400"])
def test_bad_amounts_answer_400_naming_the_field(
    venue: Venue, cashier: User, shift: Shift, amount: str
) -> None:
    card = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    client = api_client(cashier)
    before = LedgerTransaction.objects.count(), AuditEntry.objects.count()
    for op in ("cash-in", "cash-out"):
        response = client.post(_url(venue, f"{card.number}/{op}/"), {"amount": amount}, format="json")
        assert response.status_code == 400, response.content
        error = response.json()["error"]
        assert "amount" in error["message"].lower()
        assert error.get("details", {}).get("field") == "amount" or "amount" in error.get("fields", {})
    assert (LedgerTransaction.objects.count(), AuditEntry.objects.count()) == before


@pytest.mark.django_db
def test_another_venues_card_is_404_and_a_typo_400(
    venue: Venue, other_venue: Venue, cashier: User, shift: Shift
) -> None:
    theirs = player_cards.issue_card(venue_id=other_venue.pk, actor="system")
    client = api_client(cashier)
    before = LedgerTransaction.objects.count()  # the float
    refused(client.get(_url(venue, f"{theirs.number}/")), 404, "unknown_card")
    refused(
        client.post(_url(venue, f"{theirs.number}/cash-in/"), {"amount": "5.00"}, format="json"),
        404,
        "unknown_card",
    )
    refused(
        client.get(_url(other_venue, f"{theirs.number}/")), 404, "unknown_venue"
    )  # not the cashier's venue
    typo = theirs.number[:-1] + str((int(theirs.number[-1]) + 1) % 10)
    refused(client.get(_url(venue, f"{typo}/")), 400, "bad_card_number", "card")
    assert LedgerTransaction.objects.count() == before


@pytest.mark.django_db
def test_blocking_unblocking_and_replacing_through_the_api(
    venue: Venue, cashier: User, operator: User, shift: Shift
) -> None:
    client = api_client(cashier)
    number = client.post(_url(venue), {}, format="json").json()["number"]
    client.post(_url(venue, f"{number}/cash-in/"), {"amount": "12.00"}, format="json")
    refused(
        client.post(_url(venue, f"{number}/block/"), {"reason": ""}, format="json"), 400, "invalid", "reason"
    )
    blocked = client.post(_url(venue, f"{number}/block/"), {"reason": "lost"}, format="json")
    assert blocked.status_code == 200 and blocked.json()["state"] == "blocked"
    before = LedgerTransaction.objects.count()
    refused(
        client.post(_url(venue, f"{number}/cash-in/"), {"amount": "1.00"}, format="json"), 409, "card_blocked"
    )
    refused(client.post(_url(venue, f"{number}/cash-out/"), {}, format="json"), 409, "card_blocked")
    assert LedgerTransaction.objects.count() == before
    refused(client.post(_url(venue, f"{number}/unblock/")), 403, "role_required")
    assert api_client(operator).post(_url(venue, f"{number}/unblock/")).json()["state"] == "active"
    refused(client.post(_url(venue, f"{number}/replace/")), 409, "card_not_blocked")
    client.post(_url(venue, f"{number}/block/"), {"reason": "lost again"}, format="json")
    replaced = client.post(_url(venue, f"{number}/replace/"))
    assert replaced.status_code == 201, replaced.content
    new = replaced.json()["new"]
    assert replaced.json()["moved"] == "12.00" and new["balance"] == "12.00"
    assert (
        replaced.json()["old"]["replaced_by"] == new["number"] and replaced.json()["old"]["balance"] == "0.00"
    )
    again = client.post(_url(venue, f"{number}/replace/"))
    assert again.status_code == 200 and again.json()["new"]["number"] == new["number"]


@pytest.mark.django_db
def test_players_register_and_link_without_personal_data_in_the_audit(
    venue: Venue, other_venue: Venue, cashier: User
) -> None:
    client = api_client(cashier)
    registered = client.post(
        f"/api/cashier/venues/{venue.pk}/players/",
        {"name": "Ana Pérez", "id_document": "12345678Z"},
        format="json",
    )
    assert registered.status_code == 201, registered.content
    player = registered.json()["id"]
    number = client.post(_url(venue), {"player": player}, format="json").json()["number"]
    assert client.get(f"/api/cashier/venues/{venue.pk}/players/{player}/").json()["cards"] == [number]
    unlinked = client.put(_url(venue, f"{number}/player/"), {"player": None}, format="json")
    assert unlinked.status_code == 200 and unlinked.json()["player"] is None
    linked = client.put(_url(venue, f"{number}/player/"), {"player": player}, format="json")
    assert linked.json()["player"] == player
    stranger = player_cards.register_player(venue_id=other_venue.pk, name="B", actor="system")
    refused(
        client.put(_url(venue, f"{number}/player/"), {"player": stranger.pk}, format="json"),
        404,
        "unknown_player",
    )
    refused(client.get(f"/api/cashier/venues/{venue.pk}/players/{stranger.pk}/"), 404, "unknown_player")
    assert not any("Ana" in str(e.data) or "12345678Z" in str(e.data) for e in AuditEntry.objects.all())


@pytest.mark.django_db
def test_only_cashiers_of_the_venue(venue: Venue, cashier: User) -> None:
    caller = make_user("caller2", venue, Role.CALLER)
    refused(api_client(caller).post(_url(venue), {}, format="json"), 403, "role_required")
    assert api_client(None).post(_url(venue), {}, format="json").status_code == 401
    assert PlayerCard.objects.count() == 0
