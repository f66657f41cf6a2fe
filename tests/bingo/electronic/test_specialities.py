"""Specialities: created with their version and pools; bad rules refused with every problem named."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bingo.electronic.models import Speciality, SpecialityPool, SpecialityVersion
from bingo.electronic.services import specialities
from halls.errors import InvalidInput
from halls.models import Room
from tests.bingo.electronic.support import RULES_90, RULES_AUTOMATIC, make_speciality

pytestmark = pytest.mark.django_db


def test_a_speciality_has_version_one_and_a_seeded_pool_per_accumulated_prize(venue, operator) -> None:
    speciality = make_speciality(venue, operator)
    version = specialities.version_in_force(speciality)
    assert version.number == 1 and version.rules["prizes"][0]["code"] == "linea"
    pool = specialities.pool_of(speciality, "acumulado").pool
    level = pool.levels.get(position=0)
    assert level.amount == Decimal("100.00") and level.contribution_rate == Decimal("0.02")
    assert level.reserve_rate == Decimal("0.01")


def test_automatic_speciality_gets_a_pool_for_each_super_extra_and_network_prize(venue, operator) -> None:
    speciality = make_speciality(venue, operator, rules=RULES_AUTOMATIC)
    codes = set(SpecialityPool.objects.filter(speciality=speciality).values_list("prize_code", flat=True))
    assert codes == {"superlinea", "superbingo", "bingoextra", "granlinea", "granbingo"}


def test_bad_rules_are_refused_naming_every_problem_and_nothing_is_written(venue, operator) -> None:
    room = Room.objects.create(venue=venue, name="Sala mala")
    bad = {**RULES_90, "card_price": "0", "prizes": [{"code": "x", "type": "super_bingo", "percent": "10"}]}
    with pytest.raises(InvalidInput) as caught:
        specialities.create_speciality(
            room=room, code="BAD", name="Mala", rules=bad, authorisation_ref="A", actor=operator
        )
    assert caught.value.code == "bad_rules"
    text = str(caught.value.details["problems"])
    assert "card_price" in text and "super_bingo is not a prize of electronic bingo" in text
    assert not Speciality.objects.exists() and not SpecialityVersion.objects.exists()
