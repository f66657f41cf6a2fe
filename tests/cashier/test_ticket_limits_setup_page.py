"""The tickets part of the setup page (/setup/, bingo.venuewide.setup_cashier), in Spanish: the figures in
force and the jurisdiction's defaults shown, the operator's own figures saved through the service (audited),
a blank figure back to the default, and a refusal shown on the page with nothing written."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from halls.cashier.models import CashierSettings
from halls.models import AuditEntry, Venue

pytestmark = pytest.mark.django_db
D = Decimal


def _page(user: User) -> Client:
    client = Client()
    client.force_login(user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    return client


def _form(venue: Venue, **figures: Any) -> dict[str, Any]:
    return {
        "action": "ticket_settings",
        "section": "tickets",
        "venue": venue.pk,
        "ticket_valid_days": "30",
        "ticket_max_amount": "",
        "ticket_cage_above": "",
        **figures,
    }


def test_the_operator_sees_the_defaults_and_saves_the_venues_own_figures(
    venue: Venue, operator: User
) -> None:
    page = _page(operator)
    shown = page.get("/setup/").content.decode()
    assert 'id="tickets"' in shown
    assert 'placeholder="3000,00"' in shown and 'placeholder="1000,00"' in shown
    assert "como máximo 3.000,00\u00a0€ por ticket" in shown and "1.000,00\u00a0€" in shown
    saved = page.post("/setup/", _form(venue, ticket_max_amount="1.500,00", ticket_cage_above="400"))
    assert saved.status_code == 302 and saved["Location"].endswith("#tickets")
    row = CashierSettings.objects.get(venue=venue)
    assert (row.ticket_max_amount, row.ticket_cage_above, row.ticket_valid_days) == (
        D("1500.00"),
        D("400.00"),
        30,
    )
    again = page.get("/setup/").content.decode()
    assert 'name="ticket_max_amount" value="1500,00"' in again
    assert "como máximo 1.500,00\u00a0€ por ticket" in again and "400,00\u00a0€" in again
    page.post("/setup/", _form(venue, ticket_cage_above="400"))  # the maximum back to the default
    row = CashierSettings.objects.get(venue=venue)
    assert row.ticket_max_amount is None and row.ticket_cage_above == D("400.00")
    assert AuditEntry.objects.filter(action="cashier.settings_changed").count() == 2


def test_a_cage_figure_above_the_maximum_is_refused_on_the_page_writing_nothing(
    venue: Venue, operator: User
) -> None:
    page = _page(operator)
    audited = AuditEntry.objects.count()
    answer = page.post("/setup/", _form(venue, ticket_max_amount="800", ticket_cage_above="900"))
    assert answer.status_code == 400
    body = answer.content.decode()
    assert 'data-code="cage_above_maximum"' in body and "(900,00" in body and "(800,00" in body
    bad = page.post("/setup/", _form(venue, ticket_max_amount="doce"))
    assert bad.status_code == 400 and 'data-code="bad_amount"' in bad.content.decode()
    assert not CashierSettings.objects.exists() and AuditEntry.objects.count() == audited


def test_a_cashier_cannot_change_the_figures(venue: Venue, cashier: User) -> None:
    answer = _page(cashier).post("/setup/", _form(venue, ticket_max_amount="10"))
    assert answer.status_code == 403
    assert not CashierSettings.objects.exists()
