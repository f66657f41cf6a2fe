"""The cashier page is the till: the header, the tabs and their panels (halls.cashier's templates, composed by
bingo's view with its range sales), its scripts, for a cashier; no till for a caller."""

from __future__ import annotations

from typing import Any

from django.test import Client

from halls.models import Role, Venue
from tests.conftest import make_user


def test_a_cashier_gets_the_till_with_its_panels(venue: Venue, caller: Any) -> None:
    client = Client()
    client.force_login(make_user("cajera", venue, Role.CASHIER))
    page = client.get("/cashier/", HTTP_ACCEPT_LANGUAGE="en")
    assert page.status_code == 200
    html = page.content.decode()
    for tab in ("shift", "sales", "cards", "tickets", "prizes"):
        assert f'id="tab-{tab}"' in html and f'id="panel-{tab}"' in html, tab
    for part in (
        'id="head-cash"',
        'id="open-form"',
        'id="close-form"',
        'id="sell-form"',
        'id="cashin-form"',
        'id="ticket-issue-form"',
        'id="payables-table"',
    ):
        assert part in html, part
    panels = ("till", "till_shift", "till_cards", "till_tickets", "till_prizes")
    for script in (*(f"cashier/{name}.js" for name in panels), "bingo/cashier.js"):
        assert script in html, script
    assert f'"id": {venue.pk}' in html  # the venue the till works for (till-venues)
    spanish = client.get("/cashier/", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "Sin turno abierto" in spanish and "Abrir un turno" in spanish

    client.force_login(caller)
    assert client.get("/cashier/").status_code == 200  # a page with no venue to sell in, not a till
    assert f'"id": {venue.pk}' not in client.get("/cashier/").content.decode()
