"""A player's limits at the cashier: a first or lower limit applies at once, a raise or a removal waits its
cooling-off (202, pending), a second raise while one waits is refused in Spanish with nothing written; a
registered player's limits hold on all their cards; audited with amounts, never personal data."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.utils import timezone

from halls.cashier.models import PlayerLimit
from halls.cashier.services import limits, player_cards
from halls.models import AuditEntry, Venue
from tests.api_support import api_client, refused

pytestmark = pytest.mark.django_db
D = Decimal


def _url(venue: Venue, number: str) -> str:
    return f"/api/cashier/venues/{venue.pk}/cards/{number}/limits/"


def _slot(body: dict[str, Any], kind: str, period: str) -> dict[str, Any]:
    found: dict[str, Any] = next(x for x in body["limits"] if (x["kind"], x["period"]) == (kind, period))
    return found


def test_a_first_limit_and_a_lower_one_apply_at_once(venue: Venue, cashier: User) -> None:
    card = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    client = api_client(cashier)
    listed = client.get(_url(venue, card.number))
    assert listed.status_code == 200, listed.content
    assert len(listed.json()["limits"]) == 6
    assert all(x["amount"] is None and x["left"] is None for x in listed.json()["limits"])
    first = client.put(
        _url(venue, card.number), {"kind": "loss", "period": "day", "amount": "50.00"}, format="json"
    )
    assert first.status_code == 200, first.content
    assert first.json()["outcome"] == "at_once" and first.json()["limit"]["amount"] == "50.00"
    assert first.json()["limit"]["left"] == "50.00" and first.json()["limit"]["used"] == "0.00"
    lower = client.put(
        _url(venue, card.number), {"kind": "loss", "period": "day", "amount": "20.00"}, format="json"
    )
    assert lower.status_code == 200 and lower.json()["limit"]["amount"] == "20.00"
    assert not lower.json()["limit"]["pending"]
    entries = list(AuditEntry.objects.filter(action="cashier.limit_at_once").order_by("pk"))
    assert [(e.data["from"], e.data["to"]) for e in entries] == [(None, "50.00"), ("50.00", "20.00")]
    assert set(entries[0].data) == {
        "card",
        "player",
        "kind",
        "period",
        "from",
        "to",
        "in_force",
        "pending_from",
    }


@override_settings(HALL_LIMITS_COOLING_OFF_HOURS=24.0)
def test_a_raise_waits_its_cooling_off_and_a_second_raise_is_refused(venue: Venue, cashier: User) -> None:
    card = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    client = api_client(cashier)
    url = _url(venue, card.number)
    client.put(url, {"kind": "spend", "period": "week", "amount": "100.00"}, format="json")
    raised = client.put(url, {"kind": "spend", "period": "week", "amount": "150.00"}, format="json")
    assert raised.status_code == 202, raised.content
    limit = raised.json()["limit"]
    assert raised.json()["outcome"] == "pending"
    assert (limit["amount"], limit["pending"], limit["pending_amount"]) == ("100.00", True, "150.00")
    applies = datetime.fromisoformat(limit["pending_from"])
    assert timedelta(hours=23, minutes=59) < applies - timezone.now() <= timedelta(hours=24)
    again = client.put(url, {"kind": "spend", "period": "week", "amount": "150.00"}, format="json")
    assert again.status_code == 202 and again.json()["outcome"] == "unchanged"  # a retry: that raise
    before = (AuditEntry.objects.count(), list(PlayerLimit.objects.values()))
    body = refused(
        client.put(
            url,
            {"kind": "spend", "period": "week", "amount": "500.00"},
            format="json",
            HTTP_ACCEPT_LANGUAGE="es",
        ),
        409,
        "limit_cooling_off",
        "límite semanal de gasto",
    )
    assert "150,00" in body["message"]
    removal = client.put(url, {"kind": "spend", "period": "week", "amount": None}, format="json")
    assert removal.status_code == 409
    assert (AuditEntry.objects.count(), list(PlayerLimit.objects.values())) == before  # nothing written
    # After the cooling-off the raise is in force, and another may be asked.
    later = timezone.now() + timedelta(hours=25)
    assert limits.limits_of(card, at=later)[3].amount is None  # spend/day untouched
    week = next(v for v in limits.limits_of(card, at=later) if (v.kind, v.period) == ("spend", "week"))
    assert week.amount == D("150.00") and not week.pending
    change = limits.set_limit(
        card=card, kind="spend", period="week", amount="200.00", actor=cashier, at=later
    )
    assert change.outcome == "pending" and change.limit.amount == D("150.00")
    # Lowering is always at once, and cancels the raise waiting.
    lowered = limits.set_limit(
        card=card, kind="spend", period="week", amount="80.00", actor=cashier, at=later
    )
    assert lowered.outcome == "at_once" and lowered.limit.amount == D("80.00") and not lowered.limit.pending


def test_a_removal_waits_too(venue: Venue, cashier: User) -> None:
    card = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    limits.set_limit(card=card, kind="loss", period="month", amount="300", actor=cashier)
    removal = limits.set_limit(card=card, kind="loss", period="month", amount=None, actor=cashier)
    assert removal.outcome == "pending" and removal.limit.amount == D("300.00")
    assert removal.limit.pending and removal.limit.pending_amount is None


def test_bad_limits_are_refused_naming_the_problem(venue: Venue, cashier: User) -> None:
    card = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    client = api_client(cashier)
    url = _url(venue, card.number)
    before = AuditEntry.objects.count()
    refused(client.put(url, {"kind": "win", "period": "day", "amount": "5"}, format="json"), 400, "bad_kind")
    refused(
        client.put(url, {"kind": "loss", "period": "year", "amount": "5"}, format="json"), 400, "bad_period"
    )
    for amount in ("-5", "0", "1.234", "abc"):
        refused(
            client.put(url, {"kind": "loss", "period": "day", "amount": amount}, format="json"),
            400,
            "bad_amount",
        )
    player_cards.block_card(card=card, reason="lost", actor=cashier)
    blocked = AuditEntry.objects.count()
    refused(
        client.put(url, {"kind": "loss", "period": "day", "amount": "5"}, format="json"), 409, "card_blocked"
    )
    assert AuditEntry.objects.count() == blocked == before + 1  # only the block
    assert not PlayerLimit.objects.exists()


def test_a_registered_players_limits_hold_on_all_their_cards(venue: Venue, cashier: User) -> None:
    player = player_cards.register_player(venue_id=venue.pk, name="Ana Pérez", id_document="", actor=cashier)
    one = player_cards.issue_card(venue_id=venue.pk, actor=cashier, player=player)
    two = player_cards.issue_card(venue_id=venue.pk, actor=cashier, player=player)
    client = api_client(cashier)
    client.put(_url(venue, one.number), {"kind": "spend", "period": "day", "amount": "30"}, format="json")
    seen = client.get(_url(venue, two.number)).json()
    assert seen["player"] == player.pk and _slot(seen, "spend", "day")["amount"] == "30.00"
    entry = AuditEntry.objects.get(action="cashier.limit_at_once")
    assert "Ana" not in str(entry.data) and entry.data["player"] == player.pk


def test_another_venues_card_is_unknown(venue: Venue, cashier: User, other_venue: Venue) -> None:
    card = player_cards.issue_card(venue_id=other_venue.pk, actor="t")
    refused(api_client(cashier).get(_url(venue, card.number)), 404, "unknown_card")


def test_the_limits_sessions_and_checks_are_read_in_the_admin(venue: Venue, cashier: User) -> None:
    card = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    limits.set_limit(card=card, kind="loss", period="day", amount="10", actor=cashier)
    admin = User.objects.create_superuser("root", "root@example.org", "pw")
    client = Client()
    client.force_login(admin)
    for model in ("playerlimit", "playsession", "realitycheck"):
        page = client.get(f"/admin/cashier/{model}/")
        assert page.status_code == 200, (model, page.status_code)
