"""The tills of every venue of a cashier: as many queries for 20 venues as for 2
(halls.access.venue_ids_with)."""

from __future__ import annotations

import pytest

from halls.models import Role
from tests.access_support import few_and_many

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("role", [Role.CASHIER, Role.OPERATOR, Role.INSPECTOR])
def test_the_tills_list_asks_no_more_for_more_venues(role: str) -> None:
    few, many = few_and_many("/api/cashier/tills/", role, api=True)
    assert few == many
