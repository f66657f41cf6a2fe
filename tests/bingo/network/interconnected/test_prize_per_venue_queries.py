"""An interconnected prize's doors check the user's roles in every member hall in one query
(halls.access.roles_in_each), not roles_in once per hall: as many queries for a prize of 20 halls as of 2."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest

from bingo.network.interconnected import api
from bingo.network.interconnected.services import prizes
from halls.errors import PermissionDenied
from halls.models import HallCategory, Jurisdiction, Network, Role, StaffRole, Venue
from tests.access_support import FEW, MANY, queries
from tests.api_support import api_client
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def prize_of(count: int, prefix: str) -> list[Venue]:
    """A network of ``count`` halls and its prize (code ``IB{prefix}``): the halls."""
    venues = [
        Venue.objects.create(
            name=f"Bingo {prefix}{n}",
            licence_number=f"ML-{prefix}-{n:04d}",
            jurisdiction=Jurisdiction.ML,
            hall_category=HallCategory.FIRST,
        )
        for n in range(count)
    ]
    network = Network.objects.create(name=f"Red {prefix}", code=f"RED{prefix}", jurisdiction=Jurisdiction.ML)
    network.venues.set(venues)
    prizes.create_prize(
        network=network,
        code=f"IB{prefix}",
        name="Interconexionado",
        percent=Decimal("10"),
        max_ball=40,
        seed=Decimal("100.00"),
        wait_seconds=900,
        authorisation_ref="ML-IB-2026/1",
        halls=venues,
        actor="central-operator",
    )
    return venues


def rounds_read(count: int, prefix: str) -> int:
    """The queries of a caller of the last hall only reading the rounds of a prize of ``count`` halls."""
    venues = prize_of(count, prefix)
    client = api_client(make_user(f"caller-{prefix}", venues[-1], Role.CALLER))
    url = f"/api/network/prizes/IB{prefix}/rounds/"
    client.get(url)
    answer, asked = queries(lambda: client.get(url))
    assert answer.status_code == 200, answer.content
    return asked


def test_the_rounds_of_a_prize_ask_no_more_for_more_halls() -> None:
    assert rounds_read(FEW, "F") == rounds_read(MANY, "M")


def every_hall_checked(count: int, prefix: str) -> int:
    """The queries of checking an operator of every one of ``count`` halls (then refused without the last)."""
    venues = prize_of(count, prefix)
    boss = make_user(f"boss-{prefix}")
    StaffRole.objects.bulk_create([StaffRole(user=boss, venue=v, role=Role.OPERATOR) for v in venues])
    request: Any = SimpleNamespace(user=boss)
    ids = [v.pk for v in venues]
    _, asked = queries(lambda: api._every_venue(request, ids, Role.OPERATOR))
    StaffRole.objects.filter(user=boss, venue=venues[-1]).delete()
    with pytest.raises(PermissionDenied):
        api._every_venue(request, ids, Role.OPERATOR)
    return asked


def test_an_operator_of_every_hall_is_checked_in_one_query() -> None:
    assert every_hall_checked(FEW, "F") == every_hall_checked(MANY, "M")
