"""The roles of many venues in one query (halls.access.roles_in_each, inspected_venue_ids,
write_roles_in_each, may_write_any): the same answers as roles_in, inspects, write_roles_in and may_write
asked venue by venue, the same inspector's reads marked inside a read (even by a caller that stops early),
and as many queries for 20 venues as for 2."""

from __future__ import annotations

import contextvars
import itertools
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import pytest

from halls import access
from halls.models import Role, StaffRole, Venue
from tests.access_support import FEW, HOLDINGS, MANY, holding, make_venues, queries
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def scope(inside: bool) -> Any:
    return access.reading() if inside else nullcontext()


def hold(user: Any, venues: list[Venue], holdings: tuple[tuple[str, ...], ...]) -> None:
    StaffRole.objects.filter(user=user).delete()
    StaffRole.objects.bulk_create(
        [
            StaffRole(user=user, venue=v, role=r)
            for v, roles in zip(venues, holdings, strict=True)
            for r in roles
        ]
    )


def write_roles_as_written(user: Any, venue_id: int) -> frozenset[str]:
    """write_roles_in as it was written, one venue at a time: nothing for whom only inspects, else roles_in
    outside a read (in a copy of this context where no read runs: the database connection is the same)."""
    if access.only_inspects(user):
        return frozenset()

    def outside_a_read() -> frozenset[str]:
        access._reading.set(None)
        return access.roles_in(user, venue_id)

    return contextvars.copy_context().run(outside_a_read)


def may_write_as_written(user: Any, venue_id: int, *roles: str) -> bool:
    return bool(
        write_roles_as_written(user, venue_id).intersection(roles or access.ALL_ROLES - {Role.INSPECTOR})
    )


def both_ways(one_by_one: Callable[[], Any], at_once: Callable[[], Any], inside: bool) -> None:
    """The same answer, and the same inspector's read marked (inside a read), either way."""
    seen = []
    for read in (one_by_one, at_once):
        with scope(inside):
            seen.append((read(), access.inspector_reading()))
    assert seen[0] == seen[1], seen


def test_every_holding_reads_the_same_one_by_one_and_at_once() -> None:
    venues = make_venues(3, "E")
    user = make_user("each")
    ids = [v.pk for v in venues]
    asked = [ids[2], ids[0], ids[1]]  # the order asked is the order answered
    for holdings in itertools.product(HOLDINGS, repeat=3):
        hold(user, venues, holdings)
        for inside in (True, False):
            both_ways(
                lambda: [(v, access.roles_in(user, v)) for v in access.venue_ids_for(user)],
                lambda: [(v, r) for v, r in access.roles_in_each(user) if r != {Role.DOOR}],
                inside,
            )
            both_ways(
                lambda: [(v, access.roles_in(user, v)) for v in asked],
                lambda: list(access.roles_in_each(user, asked)),
                inside,
            )
            # a caller that stops at the first operator marks no further than roles_in did
            both_ways(
                lambda: any(Role.OPERATOR in access.roles_in(user, v) for v in access.venue_ids_for(user)),
                lambda: any(Role.OPERATOR in r for _, r in access.roles_in_each(user)),
                inside,
            )
            both_ways(
                lambda: {v for v in ids if access.inspects(user, v)},
                lambda: access.inspected_venue_ids(user, ids),
                inside,
            )
            for v in asked:
                both_ways(
                    lambda v=v: write_roles_as_written(user, v),  # type: ignore[misc]
                    lambda v=v: access.write_roles_in(user, v),  # type: ignore[misc]
                    inside,
                )
                both_ways(
                    lambda v=v: may_write_as_written(user, v),  # type: ignore[misc]
                    lambda v=v: access.may_write(user, v),  # type: ignore[misc]
                    inside,
                )
            both_ways(
                lambda: {v: write_roles_as_written(user, v) for v in asked},
                lambda: access.write_roles_in_each(user, asked),
                inside,
            )
            for roles in ((), (Role.CASHIER,), (Role.OPERATOR,)):
                both_ways(
                    lambda roles=roles: any(may_write_as_written(user, v, *roles) for v in asked),  # type: ignore[misc]
                    lambda roles=roles: access.may_write_any(user, asked, *roles),  # type: ignore[misc]
                    inside,
                )


def test_a_superuser_and_a_stranger() -> None:
    venues = make_venues(2, "S")
    ids = [v.pk for v in venues]
    boss = make_user("boss")
    boss.is_superuser = True
    boss.save()
    assert dict(access.roles_in_each(boss)) == dict.fromkeys(ids, access.ALL_ROLES)
    assert dict(access.roles_in_each(boss, ids[:1])) == {ids[0]: access.ALL_ROLES}
    assert access.inspected_venue_ids(boss) == set()
    stranger = make_user("stranger")
    assert list(access.roles_in_each(stranger)) == []
    assert dict(access.roles_in_each(stranger, ids)) == dict.fromkeys(ids, frozenset())
    assert not access.may_write_any(stranger, ids)


def asked_of(count: int, prefix: str, role: str) -> list[int]:
    """The queries of each helper, inside a read, for a user holding ``role`` in ``count`` venues."""
    venues = make_venues(count, prefix)
    ids = [v.pk for v in venues]
    user = holding(f"holder-{prefix}", venues, role)
    with access.reading():
        found, each = queries(lambda: dict(access.roles_in_each(user, ids)))
        assert len(found) == count
        return [
            each,
            queries(lambda: dict(access.roles_in_each(user)))[1],
            queries(lambda: access.venue_ids_with(user, role))[1],
            queries(lambda: access.inspected_venue_ids(user, ids))[1],
            queries(lambda: access.write_roles_in_each(user, ids))[1],
            queries(lambda: access.may_write_any(user, ids, Role.CASHIER))[1],
        ]


@pytest.mark.parametrize("role", [Role.OPERATOR, Role.INSPECTOR, Role.CASHIER])
def test_as_many_queries_for_many_venues_as_for_few(role: str) -> None:
    assert asked_of(FEW, "F", role) == asked_of(MANY, "M", role)
