"""Pages and APIs that list every venue of a user, in a number of queries that does not grow with how many
venues the user holds roles in (halls.access.venue_ids_with / roles_in_each: one query for them all)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from halls.models import Jurisdiction, Role, StaffRole, Venue
from tests.api_support import api_client
from tests.conftest import make_user

# How many venues "few" and "many" are: the second ten times the first.
FEW, MANY = 2, 20
# The roles a user may hold in one venue, as the rule (`roles_in`) reads them.
HOLDINGS: list[tuple[str, ...]] = [
    (),
    (Role.DOOR,),
    (Role.CASHIER,),
    (Role.INSPECTOR,),
    (Role.OPERATOR,),
    (Role.INSPECTOR, Role.OPERATOR),
    (Role.INSPECTOR, Role.CASHIER),
]


def make_venues(count: int, prefix: str) -> list[Venue]:
    return [
        Venue.objects.create(
            name=f"Sala {prefix}{n:03}", licence_number=f"{prefix}-{n}", jurisdiction=Jurisdiction.AN10
        )
        for n in range(count)
    ]


def holding(username: str, venues: list[Venue], *roles: str) -> User:
    """A user holding each of ``roles`` in every one of ``venues``."""
    user = make_user(username)
    StaffRole.objects.bulk_create([StaffRole(user=user, venue=v, role=r) for v in venues for r in roles])
    return user


def queries(fn: Callable[[], Any]) -> tuple[Any, int]:
    """What ``fn()`` answers, and how many queries it asked."""
    with CaptureQueriesContext(connection) as captured:
        found = fn()
    return found, len(captured.captured_queries)


def asked(user: User, url: str, *, api: bool = False) -> tuple[Any, int]:
    """A GET of ``url`` as ``user`` (by token for the API, else a logged-in session) and its queries,
    once the first request (the token's or session's first use) is out of the way."""
    client: Any = api_client(user) if api else Client()
    if not api:
        client.force_login(user)
    client.get(url)
    return queries(lambda: client.get(url))


def few_and_many(url: str, *roles: str, api: bool = False, status: int = 200) -> list[int]:
    """The queries of a GET of ``url`` by a user holding ``roles`` in FEW venues, then by one holding them
    in MANY (each answered ``status``)."""
    counts = []
    for count, prefix in ((FEW, "F"), (MANY, "M")):
        user = holding(f"holder-{prefix}", make_venues(count, prefix), *roles)
        response, n = asked(user, url, api=api)
        assert response.status_code == status, (url, count, response.status_code, response.content[:300])
        counts.append(n)
    return counts
