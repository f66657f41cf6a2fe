"""The halls' pages and APIs that read the user's roles in every venue (the venues API, the regions page,
the central's network map): as many queries for a user holding roles in 20 venues as in 2
(halls.access.roles_in_each, inspected_venue_ids), with the same roles shown."""

from __future__ import annotations

import pytest

from halls.models import Role, StaffRole
from tests.access_support import asked, few_and_many, holding, make_venues

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "roles",
    [
        (Role.OPERATOR,),
        (Role.INSPECTOR,),
        (Role.INSPECTOR, Role.CASHIER),
        (Role.DOOR,),
        (Role.CALLER, Role.CASHIER),
    ],
)
def test_the_venues_api_asks_no_more_for_more_venues(roles: tuple[str, ...]) -> None:
    few, many = few_and_many("/api/venues/", *roles, api=True)
    assert few == many


def test_the_venues_api_shows_each_venues_roles() -> None:
    """An inspector (not operator) is shown as the inspector only; an operator with the inspector's role
    as both; elsewhere the roles held, sorted."""
    a, b, c, d = make_venues(4, "V")
    user = holding("mixed", [a], Role.INSPECTOR, Role.CASHIER)
    StaffRole.objects.bulk_create(
        [
            StaffRole(user=user, venue=b, role=Role.OPERATOR),
            StaffRole(user=user, venue=b, role=Role.INSPECTOR),
            StaffRole(user=user, venue=c, role=Role.DOOR),
            StaffRole(user=user, venue=d, role=Role.CASHIER),
            StaffRole(user=user, venue=d, role=Role.CALLER),
        ]
    )
    answer, _ = asked(user, "/api/venues/", api=True)
    shown = {v["id"]: v["roles"] for v in answer.json()}
    assert shown[a.pk] == [Role.INSPECTOR]
    assert set(shown[b.pk]) == {r.value for r in Role}
    assert shown[c.pk] == [Role.DOOR]
    assert shown[d.pk] == sorted([Role.CALLER.value, Role.CASHIER.value])


@pytest.mark.parametrize(("role", "status"), [(Role.OPERATOR, 200), (Role.CASHIER, 403)])
def test_the_regions_page_asks_no_more_for_more_venues(role: str, status: int) -> None:
    few, many = few_and_many("/regions/", role, status=status)
    assert few == many


@pytest.mark.parametrize(("roles", "status"), [((Role.OPERATOR,), 200), ((Role.CASHIER,), 403)])
def test_the_network_map_asks_no_more_for_more_venues(
    roles: tuple[str, ...], status: int, settings: pytest.FixtureRequest
) -> None:
    settings.HALL_ROLE = "central"  # type: ignore[attr-defined]
    few, many = few_and_many("/network/", *roles, status=status)
    assert few == many
