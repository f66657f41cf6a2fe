"""The casino tables' index: as many queries for a croupier of 20 venues as of 2
(halls.access.venue_ids_with)."""

from __future__ import annotations

import pytest

from halls.models import Role
from jackpots.tables.api import CROUPIER
from tests.access_support import few_and_many

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("role", [CROUPIER, Role.OPERATOR, Role.INSPECTOR])
def test_the_table_index_asks_no_more_for_more_venues(role: str) -> None:
    few, many = few_and_many("/tables/", role)
    assert few == many
