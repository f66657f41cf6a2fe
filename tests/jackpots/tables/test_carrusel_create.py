"""A carrusel pool created over chosen tables in one call (POST /api/carrusels/, issue 15): the pool and
its tables' memberships all or nothing. Where the rules form the carrusel with ALL the póquer sin descarte
tables of the room (ML art. 61, AN96; spec §6.2, §6.5, §6.12) one over some of them is refused naming the
missing ones, and no pool is left behind; AN10 allows all or some (CJ-AN10-04)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from halls.models import AuditEntry
from jackpots.models import Pool
from jackpots.tables.models import CasinoTable
from tests.api_support import api_client
from tests.jackpots.tables.conftest import BET, Casino, make_table, meter, nothing_written, play

D = Decimal
NOTHING = "2H 4D 6C 8S TH"

pytestmark = pytest.mark.django_db


def _body(house: Casino, pack: str, tables: list[CasinoTable], **changes: Any) -> dict[str, Any]:
    return {
        "venue": house.venue.pk,
        "name": "Carrusel Póquer",
        "code": f"CARR-{house.venue.pk}",
        "rule_pack": pack,
        "authorisation_ref": "AUT-2026/7",
        "carousel_bet": "1.00",
        "seed": "5000.00",
        "contribution_rate": "0.70",
        "tables": [t.pk for t in tables],
        **changes,
    }


def _refused(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.content
    error: dict[str, Any] = answer.json()["error"]
    assert error["code"] == code, error
    return error


@pytest.mark.parametrize(("jurisdiction", "pack"), [("ML", "ML_PSD_CARRUSEL"), ("AN96", "AN96_PSD_CARRUSEL")])
def test_a_carrusel_of_all_the_psd_tables_is_created_over_all_of_them_or_not_at_all(
    jurisdiction: str, pack: str
) -> None:
    house = Casino(jurisdiction)
    tables = [make_table(house.venue, house.operator, pack) for _ in range(3)]
    op = api_client(house.operator)
    with nothing_written():
        some = op.post("/api/carrusels/", _body(house, pack, tables[:2]), format="json")
    error = _refused(some, 400, "carrusel_needs_all_tables")
    assert error["details"]["missing"] == [tables[2].number]
    assert f"{tables[2].number} (Mesa {pack})" in error["message"]
    assert not Pool.objects.exists()  # no pool left behind

    made = op.post("/api/carrusels/", _body(house, pack, tables), format="json")
    assert made.status_code == 201, made.content
    assert [t["number"] for t in made.json()] == sorted(t.number for t in tables)
    pool = Pool.objects.get(code=f"CARR-{house.venue.pk}")
    assert {t["meter"]["pool"] for t in made.json()} == {pool.pk}
    assert pool.carousel_bet == BET and meter(pool) == D("5000")
    assert AuditEntry.objects.filter(action="pool.created", object_id=str(pool.pk)).exists()
    assert AuditEntry.objects.filter(action="table.joined_pool").count() == 3
    play(CasinoTable.objects.get(pk=tables[0].pk), house.croupier, {1: NOTHING})
    assert meter(pool) == D("5000") + BET * D("0.7")
    # A later table joins by itself; the code is taken now.
    fourth = make_table(house.venue, house.operator, pack)
    assert fourth.pool == pool
    with nothing_written():
        _refused(
            op.post("/api/carrusels/", _body(house, pack, [fourth]), format="json"), 409, "pool_code_taken"
        )


def test_an_an10_carrusel_may_take_some_tables_and_every_refusal_writes_nothing() -> None:
    house, other = Casino("AN10"), Casino("AN10")
    pack = "AN10_PSD_CARRUSEL"
    tables = [make_table(house.venue, house.operator, pack) for _ in range(3)]
    foreign = make_table(other.venue, other.operator, pack)
    op = api_client(house.operator)
    with nothing_written():
        _refused(
            api_client(house.croupier).post("/api/carrusels/", _body(house, pack, tables)),
            403,
            "role_required",
        )
        _refused(
            op.post("/api/carrusels/", _body(house, pack, [foreign]), format="json"), 404, "unknown_table"
        )
        low = op.post("/api/carrusels/", _body(house, pack, tables, seed="4999.99"), format="json")
        _refused(low, 400, "seed_below_minimum")  # AN10: at least 5,000 × the bet (CJ-AN10-08)
        _refused(op.post("/api/carrusels/", _body(house, pack, []), format="json"), 400, "invalid")
        bj = op.post("/api/carrusels/", _body(house, "AN10_BJ_BOLSA", tables), format="json")
        _refused(bj, 400, "pool_pack_mismatch")
        _refused(
            op.post("/api/carrusels/", _body(house, "NOPE", tables), format="json"), 400, "unknown_rule_pack"
        )
    made = op.post("/api/carrusels/", _body(house, pack, tables[:2]), format="json")
    assert made.status_code == 201, made.content
    assert CasinoTable.objects.get(pk=tables[2].pk).pool is None
    with nothing_written():
        again = op.post("/api/carrusels/", _body(house, pack, tables[1:], code="OTRO"), format="json")
        _refused(again, 409, "already_in_pool")
