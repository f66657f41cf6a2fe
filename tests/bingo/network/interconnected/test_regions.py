"""An interconnected prize across regions (IB-02…IB-04, R-14): contributions tagged with venue, operator,
region and game; no round without the regions' valid agreement (nothing written)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bingo.network.interconnected.models import PrizeRound, RoundContribution
from bingo.network.interconnected.services import prizes
from halls.errors import Conflict
from halls.link.models import StreamEntry
from halls.services import regions
from tests.bingo.network.interconnected.ib_support import (
    deliver,
    follow,
    make_hall,
    make_network,
    make_prize,
    on_sale,
)
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)
from tests.halls.region_support import agree, operator, region

pytestmark = pytest.mark.django_db


def test_contributions_are_tagged_and_rounds_need_the_regions_agreement() -> None:
    halls = [make_hall(n) for n in (1, 2, 3)]
    melilla, ceuta = region("ML"), region("CE")
    company = operator("B12345678")
    for hall, where in zip(halls, (melilla, melilla, ceuta), strict=True):
        regions.assign_venue(venue=hall.venue, region=where, operator=company, actor="test")
    agreement = agree(melilla, ceuta, company=company)
    prize = make_prize(make_network(halls), halls)
    prizes.open_round(prize=prize, actor="central-operator")
    follow()
    for hall in (halls[0], halls[2]):
        on_sale(hall)
        deliver(hall)
    tags = list(
        RoundContribution.objects.order_by("venue_id").values_list(
            "venue__licence_number", "operator", "region", "game_number", "sales"
        )
    )
    assert tags == [
        ("ML-B-0001", "B12345678 · Operator B12345678", "ML", 1, Decimal("60.00")),
        ("ML-B-0003", "B12345678 · Operator B12345678", "CE", 1, Decimal("60.00")),
    ]

    # The agreement revoked: no new round across Melilla and Ceuta, nothing written.
    regions.revoke_agreement(agreement=agreement, actor="test")
    entries = StreamEntry.objects.count()
    with pytest.raises(Conflict) as refused:
        prizes.open_round(prize=prize, actor="central-operator")
    assert refused.value.code == "no_region_agreement"
    assert refused.value.details["regions"] == ["CE", "ML"]
    assert (PrizeRound.objects.count(), StreamEntry.objects.count()) == (1, entries)
