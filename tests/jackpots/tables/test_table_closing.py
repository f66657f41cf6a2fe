"""A casino table closed for a while through the API (issue 15; spec §6.15): out of service for the night,
then opened again. While closed its hands are refused (nothing written), so it adds nothing to its
carrusel; it stays a member (a carrusel of ALL the póquer sin descarte tables still counts it, and it
cannot leave one), and opened again it plays into the same pool with no rejoining."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from halls.models import AuditEntry
from jackpots.models import PoolMember
from jackpots.tables.models import CasinoTable, TableState
from tests.api_support import api_client
from tests.four_eyes_support import applied
from tests.jackpots.tables.conftest import BET, Casino, make_pool, make_table, meter, nothing_written, play

D = Decimal
NOTHING, LITTLE = "2H 4D 6C 8S TH", "3H 5D 7C 9S JH"

pytestmark = pytest.mark.django_db


def _state(client: APIClient, table: CasinoTable, state: str, reason: str = "") -> Any:
    return client.post(f"/api/tables/{table.pk}/state/", {"state": state, "reason": reason}, format="json")


def _refused(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.content
    error: dict[str, Any] = answer.json()["error"]
    assert error["code"] == code, error
    return error


def test_a_closed_table_takes_no_hands_stays_in_its_carrusel_and_plays_again_when_reopened() -> None:
    house = Casino("ML")  # ML art. 61: the carrusel is formed by ALL the PSD tables of the room
    pool = make_pool(house.venue, house.operator, "ML_PSD_CARRUSEL", rate=D("0.5"))
    first, second = (make_table(house.venue, house.operator, "ML_PSD_CARRUSEL") for _ in range(2))
    op, croupier = api_client(house.operator), api_client(house.croupier)
    applied(op.post(f"/api/pools/{pool.pk}/tables/", {"tables": [first.pk, second.pk]}, format="json"))

    with nothing_written():
        _refused(_state(croupier, first, "closed", "Sin crupier"), 403, "role_required")
        _refused(_state(op, first, "closed"), 400, "reason_required")
        _refused(_state(op, first, "open"), 409, "already_open")
        _refused(_state(op, first, "broken", "x"), 400, "invalid")
    hand = croupier.post(f"/api/tables/{first.pk}/hands/", {}, format="json").json()
    with nothing_written():
        _refused(_state(op, first, "closed", "Sin crupier"), 409, "hand_open")
    croupier.post(f"/api/hands/{hand['id']}/void/", {"reason": "prueba"}, format="json")

    closed = _state(op, first, "closed", "  Fuera de servicio   esta noche ")
    assert closed.status_code == 200, closed.content
    view = closed.json()
    assert view["state"] == "closed" and view["meter"]["pool"] == pool.pk  # its meter keeps showing
    entry = AuditEntry.objects.filter(action="table.state_changed", object_id=str(first.pk)).latest("pk")
    assert entry.data["old"] == "open" and entry.data["new"] == "closed"
    assert entry.data["reason"] == "Fuera de servicio esta noche" and entry.actor == house.operator

    # Closed: no hand (nothing written), still a member; the carrusel of all the tables keeps it.
    before = meter(pool)
    with nothing_written():
        _refused(croupier.post(f"/api/tables/{first.pk}/hands/", {}, format="json"), 409, "table_closed")
        _refused(_state(op, first, "closed", "otra vez"), 409, "already_closed")
        _refused(op.delete(f"/api/tables/{first.pk}/pool/"), 409, "carrusel_needs_all_tables")
    assert PoolMember.objects.filter(pool=pool, source_id=str(first.pk), removed_at__isnull=True).exists()
    play(second, house.croupier, {1: NOTHING})  # the carrusel plays on at the other table
    assert meter(pool) == before + BET * D("0.5")
    listed = {t["number"]: t["state"] for t in op.get("/api/tables/").json()}
    assert listed == {first.number: "closed", second.number: "open"}

    reopened = _state(op, first, "open")
    assert reopened.status_code == 200 and reopened.json()["state"] == "open"
    assert CasinoTable.objects.get(pk=first.pk).pool == pool  # no rejoining
    play(CasinoTable.objects.get(pk=first.pk), house.croupier, {1: NOTHING, 2: LITTLE})
    assert meter(pool) == before + 3 * BET * D("0.5")
    assert AuditEntry.objects.filter(action="table.state_changed", object_id=str(first.pk)).count() == 2


def test_another_venues_table_cannot_be_closed(casino: Any) -> None:
    house, other = Casino("AN10"), Casino("AN10")
    table = house.table("AN10_PSD_CARRUSEL")
    with nothing_written():
        _refused(_state(api_client(other.operator), table, "closed", "x"), 404, "unknown_table")
    assert CasinoTable.objects.get(pk=table.pk).state == TableState.OPEN
