"""The pool endpoints: meters in lists and details (never the must-hit-by value), creation, members,
parameter changes, corrections, the balancing report and the ledger; refusals are 4xx JSON and write
nothing."""

# The shared fixtures are imported by name (tests/jackpots/pool_fixtures.py): pytest injects them as
# arguments, which ruff reads as redefinitions.
# ruff: noqa: F811

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from halls.models import Jurisdiction, Network, Role, StaffRole, Venue
from jackpots.models import ParameterChange, Pool, PoolLevel, PoolMember
from jackpots.rulepacks import PACKS
from jackpots.services import contributions, guards
from jackpots.sources import PoolSource
from jackpots.tables.models import CasinoTable
from jackpots.tables.services import tables
from tests.api_support import api_client as client_for
from tests.conftest import make_user
from tests.four_eyes_support import applied, approve
from tests.jackpots.pool_fixtures import (  # noqa: F401 - fixtures
    an10_venue,
    carousel,
    key,
    level_of,
    make_pool,
    nothing_written,
    pool_operator,
    venue_of,
)


def member_table(venue: Venue, pool: Pool, actor: User, number: int) -> CasinoTable:
    """A casino table of ``venue`` playing ``pool``'s rule pack (pool members must name real objects)."""
    return tables.create_table(
        venue=venue,
        number=number,
        name=f"Mesa {number}",
        game=PACKS[pool.rule_pack].game,
        table_minimum=Decimal("1.00"),
        rule_pack=pool.rule_pack,
        actor=actor,
    )


def staff(username: str, venue: Venue, role: str) -> User:
    user = User.objects.create_user(username=username, password="pw")
    StaffRole.objects.create(user=user, venue=venue, role=role)
    return user


@pytest.fixture
def op(pool_operator: User) -> APIClient:
    return client_for(pool_operator)


@pytest.fixture
def croupier(an10_venue: Venue) -> APIClient:
    return client_for(staff("croupier", an10_venue, Role.CALLER))


@pytest.fixture
def stranger(db: None) -> APIClient:
    elsewhere = venue_of(Jurisdiction.EU, "EU-X-1")
    return client_for(staff("stranger", elsewhere, Role.OPERATOR))


def error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]


NEW_POOL = {
    "name": "Carrusel sala A",
    "code": "API-1",
    "jurisdiction": "AN10",
    "authorisation_ref": "AUT-2026/7",
    "rule_pack": "AN10_PSD_CARRUSEL",
    "carousel_bet": "1.00",
    "levels": [{"name": "Carrusel", "seed": "5000", "contribution_rate": "0.70", "reserve_rate": "0.10"}],
}


def test_list_and_detail_show_meters_and_never_the_secret(carousel: Pool, croupier: APIClient) -> None:
    PoolLevel.objects.filter(pool=carousel).update(
        mystery=True, ceiling=Decimal("9000"), must_hit_by=Decimal("8123.45")
    )
    contributions.contribute(
        pool=carousel,
        source=PoolSource.of("table", 1).at("seat", 3),
        bet=Decimal("0.37"),
        idempotency_key="k",
        actor="t",
    )
    listed = croupier.get("/api/pools/")
    assert listed.status_code == 200
    (pool,) = listed.json()
    assert pool["code"] == "CARR-1" and pool["carousel_bet"] == "1.00"
    assert pool["levels"][0]["amount"] == "5000.25" and pool["levels"][0]["seed"] == "5000.00"
    detail = croupier.get(f"/api/pools/{carousel.pk}/")
    assert detail.status_code == 200
    body = detail.json()
    assert (
        body["parameters"][0]["contribution_rate"] == "0.700000" and body["parameters"][0]["mystery"] is True
    )
    assert [m["key"] for m in body["members"]] == ["table:1", "table:2"]
    for text in (listed.content.decode(), detail.content.decode()):
        assert "must_hit" not in text and "8123.45" not in text
    assert croupier.get(f"/api/pools/?venue={carousel.venue_id}").json()[0]["id"] == carousel.pk


def test_pools_of_other_venues_are_unknown(carousel: Pool, stranger: APIClient) -> None:
    assert stranger.get("/api/pools/").json() == []
    error(stranger.get(f"/api/pools/{carousel.pk}/"), 404, "unknown_pool")
    error(stranger.get(f"/api/pools/{carousel.pk}/balance/"), 404, "unknown_pool")
    assert APIClient().get("/api/pools/").status_code == 401


def test_an_operator_creates_a_pool(an10_venue: Venue, op: APIClient) -> None:
    response = op.post("/api/pools/", {**NEW_POOL, "venue": an10_venue.pk}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["levels"][0]["amount"] == "5000.00" and body["parameters"][0]["seed"] == "5000.000000"
    assert Pool.objects.get(code="API-1").venue == an10_venue


@pytest.mark.parametrize(
    ("changes", "status", "code"),
    [
        (
            {"levels": [{"name": "C", "seed": "4999.99", "contribution_rate": "0.7"}]},
            400,
            "seed_below_minimum",
        ),
        ({"rule_pack": "EU_PSD_JACKPOT"}, 400, "rule_pack_jurisdiction"),
        ({"rule_pack": "NOPE"}, 400, "invalid"),
        ({"carousel_bet": None}, 400, "carousel_bet_required"),
        ({"levels": []}, 400, "no_levels"),
        ({"levels": [{"name": "C", "seed": "5000", "contribution_rate": "1.5"}]}, 400, "invalid"),
        ({"venue": None}, 400, "invalid"),
    ],
)
def test_bad_pools_answer_4xx_and_write_nothing(
    an10_venue: Venue, op: APIClient, changes: dict[str, Any], status: int, code: str
) -> None:
    with nothing_written():
        error(
            op.post("/api/pools/", {**NEW_POOL, "venue": an10_venue.pk, **changes}, format="json"),
            status,
            code,
        )


def test_only_operators_create_and_change(
    an10_venue: Venue, carousel: Pool, croupier: APIClient, stranger: APIClient
) -> None:
    level = level_of(carousel)
    with nothing_written():
        error(
            croupier.post("/api/pools/", {**NEW_POOL, "venue": an10_venue.pk}, format="json"),
            403,
            "role_required",
        )
        error(
            stranger.post("/api/pools/", {**NEW_POOL, "venue": an10_venue.pk}, format="json"),
            404,
            "unknown_venue",
        )
        error(
            croupier.post(
                f"/api/pools/{carousel.pk}/levels/{level.pk}/parameters/",
                {"changes": {"contribution_rate": "0.5"}, "authorisation_ref": "A"},
                format="json",
            ),
            403,
            "role_required",
        )
        error(croupier.get(f"/api/pools/{carousel.pk}/ledger/"), 403, "role_required")


def test_network_pools_need_an_operator_of_every_venue(db: None) -> None:
    a, b = venue_of(Jurisdiction.ML, "ML-A"), venue_of(Jurisdiction.ML, "ML-B")
    network = Network.objects.create(name="Red", code="RED", jurisdiction=Jurisdiction.ML)
    network.venues.set([a, b])
    half = client_for(staff("half", a, Role.OPERATOR))
    body = {
        **NEW_POOL,
        "jurisdiction": "ML",
        "rule_pack": "ML_BJ_PROGRESIVO",
        "network": network.pk,
        "carousel_bet": None,
        "levels": [{"name": "Bolsa", "seed": "1000", "contribution_rate": "0.5"}],
    }
    with nothing_written():
        error(half.post("/api/pools/", body, format="json"), 403, "role_required")
    StaffRole.objects.create(user=User.objects.get(username="half"), venue=b, role=Role.OPERATOR)
    created = half.post("/api/pools/", body, format="json")
    assert created.status_code == 201, created.content
    viewer = client_for(staff("viewer", b, Role.CASHIER))
    assert [p["code"] for p in viewer.get("/api/pools/").json()] == ["API-1"]

    # Its parameters: proposed by the operator of every venue; applied only by an approver who is one too.
    pool = Pool.objects.get(code="API-1")
    level = PoolLevel.objects.get(pool=pool)
    change = {"changes": {"contribution_rate": "0.4"}, "authorisation_ref": "AUT-N"}
    proposed = half.post(f"/api/pools/{pool.pk}/levels/{level.pk}/parameters/", change, format="json")
    only_a = make_user("only-a", a, Role.OPERATOR)
    error(approve(proposed, only_a), 403, "role_required")  # the generic door keeps the network's rule
    both = make_user("both", a, Role.OPERATOR)
    StaffRole.objects.create(user=both, venue=b, role=Role.OPERATOR)
    assert applied(proposed, both)["status"] == "applied"
    level.refresh_from_db()
    assert level.contribution_rate == Decimal("0.4")


def test_members_add_and_remove(
    carousel: Pool, an10_venue: Venue, op: APIClient, stranger: APIClient, pool_operator: User
) -> None:
    # A table of its own (ids restart on SQLite, so "table:1" of the fixture may be a real table's id there).
    members = set(PoolMember.objects.filter(pool=carousel).values_list("source_id", flat=True))
    table = next(
        made
        for made in (member_table(an10_venue, carousel, pool_operator, number=n) for n in range(9, 20))
        if str(made.pk) not in members
    )
    added = applied(
        op.post(
            f"/api/pools/{carousel.pk}/members/",
            {"source_type": "table", "source_id": str(table.pk), "venue": an10_venue.pk},
            format="json",
        )
    )
    member = PoolMember.objects.get(pk=added["result"]["member"])
    assert member.key == f"table:{table.pk}" and member.added_by == "second-operator"
    again = op.post(
        f"/api/pools/{carousel.pk}/members/",
        {"source_type": "table", "source_id": str(table.pk), "venue": an10_venue.pk},
        format="json",
    )
    with nothing_written():
        error(approve(again), 409, "already_member")  # refused at the approval, nothing applied
        error(
            op.post(
                f"/api/pools/{carousel.pk}/members/",
                {"source_type": "ufo", "source_id": "1", "venue": an10_venue.pk},
                format="json",
            ),
            400,
            "invalid",
        )
        error(stranger.delete(f"/api/pools/{carousel.pk}/members/{member.pk}/"), 404, "unknown_pool")
        error(op.delete(f"/api/pools/{carousel.pk}/members/999999/"), 404, "unknown_member")
    removed = applied(op.delete(f"/api/pools/{carousel.pk}/members/{member.pk}/"))
    member.refresh_from_db()
    assert removed["proposed_by"] == "pool-operator" and member.removed_by == "second-operator"


def test_parameter_changes_and_the_open_play_guard(carousel: Pool, op: APIClient) -> None:
    level = level_of(carousel)
    url = f"/api/pools/{carousel.pk}/levels/{level.pk}/parameters/"
    proposed = op.post(
        url, {"changes": {"contribution_rate": "0.65"}, "authorisation_ref": "AUT-3"}, format="json"
    )
    level.refresh_from_db()
    assert level.contribution_rate == Decimal("0.7")  # nothing changes before the second person
    done = applied(proposed)
    change = ParameterChange.objects.get(pk=done["result"]["parameter_change"])
    assert change.old == {"contribution_rate": "0.700000"} and change.actor == "second-operator"
    assert done["proposed_by"] == "pool-operator" and done["decided_by"] == "second-operator"

    def open_hand(pool: Pool) -> str | None:
        return "hand 4 is open at table 1"

    waiting = op.post(
        url, {"changes": {"contribution_rate": "0.6"}, "authorisation_ref": "AUT-4"}, format="json"
    )
    guards.register_open_play_guard(open_hand)
    try:
        with nothing_written():
            response = approve(waiting)
            error(response, 409, "pool_in_play")
            assert response.json()["error"]["details"]["problems"] == ["hand 4 is open at table 1"]
    finally:
        guards.unregister_open_play_guard(open_hand)
    with nothing_written():
        error(
            op.post(url, {"changes": {"must_hit_by": "1"}, "authorisation_ref": "A"}, format="json"),
            400,
            "unknown_parameter",
        )
        error(
            op.post(url, {"changes": {"seed": "100"}, "authorisation_ref": "A"}, format="json"),
            400,
            "seed_below_minimum",
        )
        error(op.post(url, {"authorisation_ref": "A"}, format="json"), 400, "invalid")
        error(
            op.post(
                f"/api/pools/{carousel.pk}/levels/999999/parameters/",
                {"changes": {"name": "x"}, "authorisation_ref": "A"},
                format="json",
            ),
            404,
            "unknown_level",
        )


def test_corrections_balance_and_ledger(carousel: Pool, op: APIClient) -> None:
    level = level_of(carousel)
    url = f"/api/pools/{carousel.pk}/levels/{level.pk}/corrections/"
    made = op.post(
        url,
        {"amount_delta": "12.345", "reason": "counter misread", "authorised_by": "jefe de sala"},
        format="json",
    )
    assert made.status_code == 201, made.content
    assert made.json()["amount"] == "12.345000" and made.json()["meter"] == "5012.34"
    with nothing_written():
        error(
            op.post(url, {"amount_delta": "-100", "reason": "r", "authorised_by": "j"}, format="json"),
            409,
            "correction_below_seed",
        )
        error(
            op.post(url, {"amount_delta": "1", "reason": "", "authorised_by": "j"}, format="json"),
            400,
            "invalid",
        )
    contributions.contribute(
        pool=carousel, source=PoolSource.of("table", 1), bet=Decimal("1.00"), idempotency_key=key(), actor="t"
    )
    balance = op.get(f"/api/pools/{carousel.pk}/balance/")
    assert balance.status_code == 200 and balance.json()["holds"] is True
    assert balance.json()["levels"][0]["corrections"] == "12.345000"
    error(
        op.get(f"/api/pools/{carousel.pk}/balance/?start=2026-01-02T00:00:00Z&end=2026-01-01T00:00:00Z"),
        400,
        "bad_period",
    )
    ledger = op.get(f"/api/pools/{carousel.pk}/ledger/?limit=1")
    assert ledger.status_code == 200
    page = ledger.json()
    assert len(page["contributions"]) == 1 and page["contributions"][0]["bet"] == "1.00"
    assert page["moves"][0]["kind"] == "correction" and page["next_before"] == page["contributions"][0]["id"]
    assert "must_hit" not in json.dumps(page)
