"""Pool members added through the API must name a real object of the member's venue (issue 10): a casino
table, bingo room, machine or venue of that venue, itself in the pool's scope. Refusals are 400 with the
error envelope, and nothing is written."""

# The shared fixtures are imported by name (tests/jackpots/pool_fixtures.py).
# ruff: noqa: F811

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from halls.models import Jurisdiction, Room, Venue
from jackpots.models import Pool, PoolMember
from jackpots.rulepacks import PACKS
from jackpots.tables.models import CasinoTable
from jackpots.tables.services import tables
from tests.four_eyes_support import applied
from tests.jackpots.pool_fixtures import (  # noqa: F401 - fixtures
    an10_venue,
    make_pool,
    nothing_written,
    pool_operator,
    venue_of,
)
from tests.machines.machine_fixtures import register


def table_of(venue: Venue, pool: Pool, actor: User, number: int) -> CasinoTable:
    return tables.create_table(
        venue=venue,
        number=number,
        name=f"Mesa {number}",
        game=PACKS[pool.rule_pack].game,
        table_minimum=Decimal("1.00"),
        rule_pack=pool.rule_pack,
        actor=actor,
    )


@pytest.fixture
def op(pool_operator: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=pool_operator).key}")
    return client


@pytest.fixture
def carousel(an10_venue: Venue, pool_operator: User) -> Pool:
    """A carrusel with no members yet."""
    return make_pool(an10_venue, pool_operator, members=())


@pytest.fixture
def elsewhere(db: None) -> Venue:
    return venue_of(Jurisdiction.AN10, "AN-C-0999", "Casino de enfrente")


def add(op: APIClient, pool: Pool, source_type: str, source_id: Any, venue: Venue) -> Any:
    return op.post(
        f"/api/pools/{pool.pk}/members/",
        {"source_type": source_type, "source_id": str(source_id), "venue": venue.pk},
        format="json",
    )


def refused(answer: Any, code: str, *words: str) -> None:
    assert answer.status_code == 400, answer.content
    error = answer.json()["error"]
    assert error["code"] == code, error
    for word in words:
        assert word in error["message"], error["message"]


def test_a_table_of_another_venue_is_refused(
    carousel: Pool, an10_venue: Venue, elsewhere: Venue, op: APIClient, pool_operator: User
) -> None:
    theirs = table_of(elsewhere, carousel, pool_operator, number=4)
    with nothing_written():
        refused(add(op, carousel, "table", theirs.pk, an10_venue), "source_outside_venue", str(theirs.pk))
    assert not PoolMember.objects.filter(pool=carousel, source_id=str(theirs.pk)).exists()
    ours = table_of(an10_venue, carousel, pool_operator, number=4)
    assert applied(add(op, carousel, "table", ours.pk, an10_venue))["status"] == "applied"


def test_sources_that_name_nothing_are_refused(carousel: Pool, an10_venue: Venue, op: APIClient) -> None:
    room = Room.objects.create(venue=an10_venue, name="Sala 1")
    with nothing_written():
        refused(add(op, carousel, "table", 999_999, an10_venue), "unknown_source", "999999")
        refused(add(op, carousel, "bingo_room", f"0{room.pk}", an10_venue), "unknown_source")
        refused(add(op, carousel, "machine", "99999999999999999999", an10_venue), "unknown_source")
        refused(add(op, carousel, "other", "caja-1", an10_venue), "unknown_source")
        refused(add(op, carousel, "venue", "abc", an10_venue), "unknown_source")


def test_rooms_machines_and_venues_of_the_venue_are_taken(
    carousel: Pool, an10_venue: Venue, elsewhere: Venue, op: APIClient, pool_operator: User
) -> None:
    room = Room.objects.create(venue=an10_venue, name="Sala 1")
    their_room = Room.objects.create(venue=elsewhere, name="Sala 1")
    machine, _token = register(an10_venue, pool_operator)
    with nothing_written():
        refused(add(op, carousel, "bingo_room", their_room.pk, an10_venue), "source_outside_venue")
        refused(add(op, carousel, "venue", elsewhere.pk, an10_venue), "source_outside_venue")
    taken = (("bingo_room", room.pk), ("machine", machine.pk), ("venue", an10_venue.pk))
    for source_type, source_id in taken:
        answer = applied(add(op, carousel, source_type, source_id, an10_venue))
        assert PoolMember.objects.get(pk=answer["result"]["member"]).key == f"{source_type}:{source_id}"
