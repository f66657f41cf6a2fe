"""The machines' hand-pay list and pages ask as many queries for a user holding roles in 20 venues as in
2: the venues where they hold the role come in one query (halls.access.venue_ids_with, roles_in_each)."""

from __future__ import annotations

import pytest

from halls.models import Role
from tests.access_support import few_and_many

pytestmark = pytest.mark.django_db


def test_the_pending_hand_pays_of_every_venue_ask_no_more_for_more_venues() -> None:
    """Which venues, and their hits: as many queries for 20 venues as for 2."""
    few, many = few_and_many("/api/machine-hits/", Role.CASHIER, api=True)
    assert few == many


@pytest.mark.parametrize(
    ("url", "role"),
    [
        ("/machines/floor/", Role.OPERATOR),
        ("/machines/floor/", Role.CALLER),
        ("/machines/floor/", Role.INSPECTOR),
        ("/machines/handpays/", Role.CASHIER),
    ],
)
def test_the_pages_ask_no_more_for_more_venues(url: str, role: str) -> None:
    few, many = few_and_many(url, role)
    assert few == many
