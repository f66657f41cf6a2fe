"""A network pool's doors check the user's roles in every venue of the network in one query
(halls.access.roles_in_each, write_roles_in_each), not once per venue: as many queries for a network of
20 venues as of 2, to refuse creating the pool, to read it, to propose and approve a change of it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import User

from halls.errors import PermissionDenied
from halls.models import Jurisdiction, Network, Role, StaffRole, Venue
from jackpots import api
from jackpots.services import proposal_kinds
from tests.access_support import FEW, MANY, queries
from tests.api_support import api_client
from tests.conftest import make_user
from tests.jackpots.pool_fixtures import nothing_written

pytestmark = pytest.mark.django_db


def network_of(count: int, prefix: str) -> tuple[Network, list[Venue]]:
    venues = [
        Venue.objects.create(name=f"Casino {prefix}{n}", licence_number=f"ML-{prefix}-{n}", jurisdiction="ML")
        for n in range(count)
    ]
    network = Network.objects.create(name=f"Red {prefix}", code=f"RED{prefix}", jurisdiction=Jurisdiction.ML)
    network.venues.set(venues)
    return network, venues


def operator_of(username: str, venues: list[Venue]) -> User:
    user = make_user(username)
    StaffRole.objects.bulk_create([StaffRole(user=user, venue=v, role=Role.OPERATOR) for v in venues])
    return user


def body(network: Network, code: str) -> dict[str, Any]:
    return {
        "name": "Bolsa de la red",
        "code": code,
        "jurisdiction": "ML",
        "authorisation_ref": "AUT-2026/7",
        "rule_pack": "ML_BJ_PROGRESIVO",
        "network": network.pk,
        "carousel_bet": None,
        "levels": [{"name": "Bolsa", "seed": "1000", "contribution_rate": "0.5"}],
    }


def create_and_read(count: int, prefix: str) -> tuple[int, int]:
    """The queries of refusing to create a network pool of ``count`` venues, then of reading it."""
    network, venues = network_of(count, prefix)
    new = body(network, f"P{prefix}")
    # an operator of every venue but the last: refused, having read every venue's roles
    half = api_client(operator_of(f"half-{prefix}", venues[:-1]))
    half.get("/api/pools/")
    with nothing_written():
        refused, refusing = queries(lambda: half.post("/api/pools/", new, format="json"))
    assert refused.status_code == 403, refused.content
    boss = api_client(operator_of(f"boss-{prefix}", venues))
    boss.get("/api/pools/")
    created = boss.post("/api/pools/", new, format="json")  # its writes are per venue: not counted
    assert created.status_code == 201, created.content
    url = f"/api/pools/{created.json()['id']}/"
    # a cashier of the last venue only reads it (a role in one of them): every venue's roles read
    cashier = api_client(make_user(f"cashier-{prefix}", venues[-1], Role.CASHIER))
    cashier.get("/api/pools/")
    read, reading = queries(lambda: cashier.get(url))
    assert read.status_code == 200, read.content
    return refusing, reading


def test_creating_and_reading_a_network_pool_ask_no_more_for_more_venues() -> None:
    assert create_and_read(FEW, "F") == create_and_read(MANY, "M")


def propose_and_approve(count: int, prefix: str) -> tuple[int, int]:
    """The queries of finding where an operator of every venue of ``count`` proposes a change of the
    network's pool, and of checking them as its approver."""
    network, venues = network_of(count, prefix)
    boss = operator_of(f"boss-{prefix}", venues)
    pool: Any = SimpleNamespace(venue_id=None, network_id=network.pk)
    request: Any = SimpleNamespace(user=boss)
    proposing, asked_proposing = queries(lambda: api._proposing_venue(request, pool))
    assert proposing == venues[0]
    _, asked_approving = queries(lambda: proposal_kinds._require_network_operator(pool, boss))
    # no longer the operator of the first venue: the next one is proposed in, and they may not approve
    StaffRole.objects.filter(user=boss, venue=venues[0]).delete()
    assert api._proposing_venue(request, pool) == venues[1]
    with pytest.raises(PermissionDenied):
        proposal_kinds._require_network_operator(pool, boss)
    return asked_proposing, asked_approving


def test_who_proposes_and_who_approves_a_network_pools_change_ask_no_more_for_more_venues() -> None:
    assert propose_and_approve(FEW, "F") == propose_and_approve(MANY, "M")
