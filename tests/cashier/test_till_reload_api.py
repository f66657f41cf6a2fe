"""What the till reloads from the server, so nothing is lost on a reload of the page (issue 26): the open
shift's tickets (GET /api/cashier/shifts/<id>/tickets/) and the cashier's last closed shift with its report
(GET /api/cashier/shifts/last-closed/)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from halls.cashier.models import Means, Shift, Till
from halls.cashier.services import player_cards, shifts, tickets
from halls.models import Role, Venue
from tests.api_support import api_client
from tests.cashier_support import on_shift
from tests.conftest import make_user

pytestmark = pytest.mark.cashier_off_shift

D = Decimal


def _shift_tickets(user: User, shift: Shift) -> list[dict[str, str]]:
    response = api_client(user).get(f"/api/cashier/shifts/{shift.pk}/tickets/")
    assert response.status_code == 200, response.content
    rows: list[dict[str, str]] = response.json()
    return rows


@pytest.mark.django_db
def test_a_shift_lists_its_tickets_issued_and_redeemed_newest_first(
    venue: Venue, cashier: User, till: Till
) -> None:
    shift = on_shift(cashier, venue, till=till, float=D("50"))
    for_cash = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("20.00"), means=Means.CASH, key="t1", actor=cashier
    ).ticket
    card = player_cards.issue_card(venue_id=venue.pk, actor=cashier)
    player_cards.cash_in(card=card, amount=D("30.00"), means=Means.BANK_CARD, key="c1", actor=cashier)
    from_card = tickets.issue_from_card(
        venue_id=venue.pk, card_number=card.number, amount=None, key="t2", actor=cashier
    ).ticket
    tickets.redeem_into_card(
        venue_id=venue.pk, number=for_cash.number, card_number=card.number, key="r1", actor=cashier
    )
    tickets.redeem_for_cash(venue_id=venue.pk, number=from_card.number, key="r2", actor=cashier)

    rows = _shift_tickets(cashier, shift)
    assert [(r["number"], r["kind"], r["means"], r["amount"]) for r in rows] == [
        (from_card.number, "redeemed", "cash", "30.00"),
        (for_cash.number, "redeemed", "card", "20.00"),
        (from_card.number, "issued", "card", "30.00"),
        (for_cash.number, "issued", "cash", "20.00"),
    ]
    assert rows == sorted(rows, key=lambda r: r["at"], reverse=True)

    # Another shift (another cashier's, at another till) lists only its own.
    other = make_user("cajero2", venue, Role.CASHIER)
    other_shift = on_shift(other, venue, float=D("10"))
    issued = tickets.issue_for_payment(
        venue_id=venue.pk, amount=D("5.00"), means=Means.BANK_CARD, key="t3", actor=other
    ).ticket
    assert [(r["number"], r["means"]) for r in _shift_tickets(other, other_shift)] == [
        (issued.number, "bank_card")
    ]
    assert len(_shift_tickets(cashier, shift)) == 4


@pytest.mark.django_db
def test_another_venues_shift_tickets_are_not_found(venue: Venue, cashier: User, till: Till) -> None:
    shift = on_shift(cashier, venue, till=till)
    elsewhere = Venue.objects.create(name="Otra", licence_number="ML-B-0002")
    stranger = make_user("ajeno", elsewhere, Role.CASHIER)
    response = api_client(stranger).get(f"/api/cashier/shifts/{shift.pk}/tickets/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_shift"


@pytest.mark.django_db
def test_the_last_closed_shift_is_the_cashiers_latest(venue: Venue, cashier: User, till: Till) -> None:
    client = api_client(cashier)
    last_closed = f"/api/cashier/shifts/last-closed/?venue={venue.pk}"
    none = client.get(last_closed, HTTP_ACCEPT_LANGUAGE="es")
    assert none.status_code == 404
    no_shift = {"code": "no_closed_shift", "message": "Todavía no ha cerrado ningún turno."}
    assert none.json()["error"] == no_shift

    counted: dict[str, object] = {"cash": D("0"), "bank_card": D("0")}
    first = on_shift(cashier, venue, till=till)
    shifts.close_shift(shift=first, counted=counted, actor=cashier)
    second = on_shift(cashier, venue, till=till)
    shifts.close_shift(shift=second, counted=counted, actor=cashier)
    on_shift(cashier, venue, till=till)  # open again: the open one is not "closed"

    answer = client.get(last_closed)
    assert answer.status_code == 200
    body = answer.json()
    assert (body["id"], body["state"], body["report_url"]) == (
        second.pk,
        "closed",
        f"/cashier/shifts/{second.pk}/report/",
    )
    # Another cashier's closed shifts are not yours.
    other = make_user("cajero2", venue, Role.CASHIER)
    assert api_client(other).get(last_closed).status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("which", ["last-closed", "current"])
@pytest.mark.parametrize("venue_param", ["abc", "0", "-1", str(2**63), str(10**30)])
def test_a_bad_venue_for_a_shift_look_up_is_a_4xx(cashier: User, which: str, venue_param: str) -> None:
    """Never a server error, on either database (SQLite overflowed on an id past 2**63 - 1)."""
    answer = api_client(cashier).get(f"/api/cashier/shifts/{which}/?venue={venue_param}")
    assert 400 <= answer.status_code < 500, answer.content
    assert answer.json()["error"]["message"]
