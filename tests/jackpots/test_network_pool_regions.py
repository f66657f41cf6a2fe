"""A network pool spans its venues' regions only under their agreements (spec §5 IB-02…IB-04, R-14):
creating one over a cross-region network without a valid agreement is refused, nothing written."""

from __future__ import annotations

from decimal import Decimal

import pytest

from halls.errors import Conflict
from halls.models import Jurisdiction, Network
from halls.services import regions
from jackpots.models import Pool
from jackpots.services import pools
from jackpots.services.pools import LevelSpec
from tests.halls.region_support import agree, network, region, venue_in
from tests.halls.region_support import nothing_written as no_span_rows
from tests.jackpots.pool_fixtures import nothing_written as no_pool_rows

pytestmark = pytest.mark.django_db


def network_pool(red: Network, code: str) -> Pool:
    return pools.create_pool(
        name="Gran Bingo en red",
        code=code,
        jurisdiction=red.jurisdiction,
        authorisation_ref="AUT-RED-1",
        rule_pack="",
        network=red,
        levels=[LevelSpec(name="Gran Bingo", seed=Decimal("1000"), contribution_rate=Decimal("0.02"))],
        carousel_bet=None,
        actor="operator",
    )


def test_cross_region_network_pool_needs_the_agreement() -> None:
    ml, an = region("ML"), region("AN", Jurisdiction.AN10)
    red = network()
    melilla, sevilla = venue_in(ml, "ML-1"), venue_in(an, "AN-1")
    # Members placed before the agreement rule (written directly, as older installations have them).
    red.venues.set([melilla, sevilla])
    with no_pool_rows(), no_span_rows(), pytest.raises(Conflict) as refused:
        network_pool(red, "GB-1")
    assert refused.value.code == "no_region_agreement"
    assert refused.value.details["regions"] == ["AN", "ML"]
    assert not Pool.objects.exists()

    agreement = agree(ml, an)
    pool = network_pool(red, "GB-1")
    assert pool.network == red

    # Revoked: no new network pool, and no third region joins without its own agreements.
    regions.revoke_agreement(agreement=agreement, actor="test")
    with no_pool_rows(), no_span_rows(), pytest.raises(Conflict) as again:
        network_pool(red, "GB-2")
    assert again.value.details["missing"] == ["revoked"]


def test_a_venue_joining_a_network_with_a_pool_is_checked() -> None:
    ml, ct = region("ML"), region("CT", Jurisdiction.CT)
    red = network()
    regions.join_network(network=red, venue=venue_in(ml, "ML-1"), actor="test")
    regions.join_network(network=red, venue=venue_in(ml, "ML-2"), actor="test")
    network_pool(red, "GB-1")
    barcelona = venue_in(ct, "CT-1")
    with no_pool_rows(), no_span_rows(), pytest.raises(Conflict) as refused:
        regions.join_network(network=red, venue=barcelona, actor="test")
    assert refused.value.details == {"regions": ["CT", "ML"], "missing": ["agreement"], "network": "RED"}
    agree(ml, ct)
    regions.join_network(network=red, venue=barcelona, actor="test")
    assert red.venues.count() == 3
