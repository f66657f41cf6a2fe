"""The halls' pages and APIs that read the user's roles in every venue (the venues API, the regions page,
the central's network map): as many queries for a user holding roles in 20 venues as in 2
(halls.access.roles_in_each, inspected_venue_ids), with the same roles shown."""

from __future__ import annotations

import pytest

from halls.models import Role
from tests.access_support import few_and_many

pytestmark = pytest.mark.django_db


def test_the_regions_page_asks_no_more_for_more_venues() -> None:
    few, many = few_and_many("/regions/", Role.OPERATOR)
    assert few == many


@pytest.mark.parametrize(("roles", "status"), [((Role.OPERATOR,), 200), ((Role.CASHIER,), 403)])
def test_the_network_map_asks_no_more_for_more_venues(
    roles: tuple[str, ...], status: int, settings: pytest.FixtureRequest
) -> None:
    settings.HALL_ROLE = "central"  # type: ignore[attr-defined]
    few, many = few_and_many("/network/", *roles, status=status)
    assert few == many
