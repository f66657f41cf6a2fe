"""Casino tables set up through the API (issue 15): a table named as a pool member really plays into the
pool, and where a carrusel is formed by ALL the póquer sin descarte tables of the room (ML art. 61, AN96:
spec §6.2, §6.5, §6.12) one over only some of them is refused naming the missing ones, and a new table
joins it by itself (audited)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from halls.models import AuditEntry
from jackpots.models import Contribution, Pool, PoolMember
from jackpots.rulepacks import PACKS
from jackpots.tables.models import CasinoTable, Hand
from tests.api_support import api_client
from tests.four_eyes_support import applied, approve
from tests.jackpots.tables.conftest import BET, MINIMUM, Casino, make_pool, meter, nothing_written, play

D = Decimal
ROYAL, NOTHING, LITTLE = "AS KS QS JS TS", "2H 4D 6C 8S TH", "3H 5D 7C 9S JH"


def _client(user: User) -> APIClient:
    return api_client(user)


def _new_table(op: APIClient, venue: int, number: int, pack: str, game: str = "poker_sin_descarte") -> Any:
    return op.post(
        "/api/tables/",
        {
            "venue": venue,
            "number": number,
            "name": f"Mesa {number}",
            "game": game,
            "table_minimum": str(MINIMUM),
            "rule_pack": pack,
        },
        format="json",
    )


def test_only_the_ml_and_an96_carrusels_need_all_the_tables() -> None:
    assert {code for code, pack in PACKS.items() if pack.all_tables} == {
        "ML_PSD_CARRUSEL",
        "AN96_PSD_CARRUSEL",
    }


@pytest.mark.django_db
def test_a_table_named_as_a_pool_member_through_the_api_plays_into_the_pool() -> None:
    house = Casino("AN10")  # AN10: a carrusel of all or some tables of the room
    pool = make_pool(house.venue, house.operator, "AN10_PSD_CARRUSEL", rate=D("0.5"))
    op = _client(house.operator)
    made = _new_table(op, house.venue.pk, 7, "AN10_PSD_CARRUSEL")
    assert made.status_code == 201, made.content
    table_id = made.json()["id"]
    assert made.json()["meter"] is None
    member = applied(
        op.post(
            f"/api/pools/{pool.pk}/members/",
            {"source_type": "table", "source_id": str(table_id), "venue": house.venue.pk},
            format="json",
        )
    )
    table = CasinoTable.objects.get(pk=table_id)
    assert table.pool == pool
    before = meter(pool)
    hand = play(table, house.croupier, {1: NOTHING, 2: LITTLE})
    assert hand.state == "settled"
    assert Contribution.objects.filter(pool=pool, source__startswith=f"table:{table_id}/").count() == 2
    assert meter(pool) == before + 2 * BET * D("0.5")

    applied(op.delete(f"/api/pools/{pool.pk}/members/{member['result']['member']}/"))
    assert CasinoTable.objects.get(pk=table_id).pool is None
    croupier = _client(house.croupier)
    refused = croupier.post(f"/api/tables/{table_id}/hands/", {}, format="json")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "no_pool"
    applied(op.post(f"/api/tables/{table_id}/pool/", {"pool": pool.pk}, format="json"))
    assert op.get(f"/api/tables/{table_id}/").json()["meter"] is not None


@pytest.mark.django_db
@pytest.mark.parametrize(("jurisdiction", "pack"), [("ML", "ML_PSD_CARRUSEL"), ("AN96", "AN96_PSD_CARRUSEL")])
def test_a_carrusel_over_some_psd_tables_is_refused_naming_the_missing_ones(
    jurisdiction: str, pack: str
) -> None:
    house = Casino(jurisdiction)
    pool = make_pool(house.venue, house.operator, pack)
    op = _client(house.operator)
    ids = [_new_table(op, house.venue.pk, n, pack).json()["id"] for n in (1, 2, 3)]
    if jurisdiction == "ML":  # a progresivo table (art. 62.2) is not one of the carrusel's
        assert _new_table(op, house.venue.pk, 9, "ML_PSD_PROGRESIVO").status_code == 201
    # the pools API's member door knows no tables' rule: its proposal is refused when approved
    one_proposed = op.post(
        f"/api/pools/{pool.pk}/members/",
        {"source_type": "table", "source_id": str(ids[0]), "venue": house.venue.pk},
        format="json",
    )
    with nothing_written():
        some = op.post(f"/api/pools/{pool.pk}/tables/", {"tables": ids[:2]}, format="json")
        one = approve(one_proposed)
        single = op.post(f"/api/tables/{ids[0]}/pool/", {"pool": pool.pk}, format="json")
    assert some.status_code == 400, some.content
    error = some.json()["error"]
    assert error["code"] == "carrusel_needs_all_tables" and error["details"]["missing"] == [3]
    assert "3 (Mesa 3)" in error["message"] and "Mesa 9" not in error["message"]
    for answer in (one, single):
        assert answer.status_code == 400 and answer.json()["error"]["details"]["missing"] == [2, 3]

    formed = applied(op.post(f"/api/pools/{pool.pk}/tables/", {"tables": ids}, format="json"))
    assert formed["result"]["tables"] == sorted(ids)
    assert set(CasinoTable.objects.filter(pk__in=ids).values_list("pool", flat=True)) == {pool.pk}

    # A new PSD table of the room joins the carrusel by itself, audited as such; and plays into it.
    fourth = _new_table(op, house.venue.pk, 4, pack)
    assert fourth.status_code == 201 and fourth.json()["meter"] is not None
    table = CasinoTable.objects.get(pk=fourth.json()["id"])
    assert table.pool == pool
    entry = AuditEntry.objects.get(action="table.joined_pool", object_id=str(table.pk))
    assert entry.data["automatic"] is True and entry.actor == house.operator
    assert PoolMember.objects.filter(pool=pool, removed_at__isnull=True).count() == 4
    hand = play(table, house.croupier, {1: ROYAL, 2: NOTHING})
    assert Hand.objects.get(pk=hand.pk).settlement is not None

    # Leaving would make it a carrusel of some tables: refused (closing the table for a while is not).
    leave = op.delete(f"/api/tables/{ids[0]}/pool/")
    assert leave.status_code == 409 and leave.json()["error"]["code"] == "carrusel_needs_all_tables"


@pytest.mark.django_db
def test_table_setup_is_the_operators(db: None) -> None:
    house = Casino("ML")
    croupier = _client(house.croupier)
    assert _new_table(croupier, house.venue.pk, 1, "ML_PSD_CARRUSEL").status_code == 403
    other = Casino("ML")
    assert _new_table(_client(other.operator), house.venue.pk, 1, "ML_PSD_CARRUSEL").status_code == 404
    op = _client(house.operator)
    wrong = _new_table(op, house.venue.pk, 1, "AN10_PSD_CARRUSEL")
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == "rule_pack_jurisdiction"
    assert not CasinoTable.objects.filter(venue=house.venue).exists()
    foreign_pool = make_pool(other.venue, other.operator, "ML_PSD_CARRUSEL")
    mine = _new_table(op, house.venue.pk, 2, "ML_PSD_CARRUSEL").json()["id"]
    missing = op.post(f"/api/tables/{mine}/pool/", {"pool": foreign_pool.pk}, format="json")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_pool"
    assert Pool.objects.filter(pk=foreign_pool.pk).exists()
