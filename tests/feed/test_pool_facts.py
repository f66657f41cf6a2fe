"""The pools on the authority's feed (issue 29): each award with its amount, the meter before and after it
and where it was won, then the pool's amounts; every pool's amounts at its jurisdiction's interval; nothing
when the award rolls back or the feed is off."""

# ruff: noqa: F811 - the shared fixtures are imported by name (tests/jackpots/pool_fixtures.py)
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from halls.models import Jurisdiction, Network, Venue
from jackpots.models import Pool
from jackpots.services import awards, pools
from jackpots.services import feed as pool_feed
from tests.feed.conftest import Feed
from tests.jackpots.pool_fixtures import (  # noqa: F401 - fixtures
    an10_venue,
    carrusel_level,
    level_of,
    make_pool,
    pool_operator,
    set_meter,
    venue_of,
)

pytestmark = pytest.mark.django_db

# An instant on a whole minute (and half-minute) since the epoch: an interval of 60 s or 30 s ends on it.
ON_THE_MINUTE = datetime.fromtimestamp(1_800_000_000, tz=UTC)


def link_pool(venue: Venue, code: str = "LINK", **kw: Any) -> Pool:
    pool = make_pool(
        venue,
        "op",
        pack="",
        bet=None,
        code=code,
        source_type="machine",
        levels=[carrusel_level("100", "0.01", "0.002")],
        **kw,
    )
    set_meter(level_of(pool), "250.555")
    return pool


def award(pool: Pool, source: str, k: str) -> awards.AwardResult:
    return awards.award_level(
        level=level_of(pool), percent=Decimal("100"), winner={"source": source}, idempotency_key=k, actor="gw"
    )


def test_an_award_writes_the_award_and_then_the_pools_amounts(feed: Feed, an10_venue: Venue) -> None:
    pool = link_pool(an10_venue)
    assert feed.messages() == []  # a meter's correction is no award
    feed.run(award, pool, "machine:1", "m1")
    assert feed.kinds() == ["pool.award", "pool.amounts"]
    (won,) = feed.messages("pool.award")
    assert won == {
        "venue": "AN-C-0101",
        "pool": "LINK",
        "level": "Carrusel",
        "amount": "250.55",
        "before": "250.55",
        "after": "100.00",
        "where": "AN-C-0101",
    }
    (amounts,) = feed.messages("pool.amounts")
    assert amounts == {
        "venue": "AN-C-0101",
        "pools": [
            {
                "pool": "LINK",
                "name": "Carrusel LINK",
                "family": "machines",
                "levels": [{"level": "Carrusel", "amount": "100.00"}],
            }
        ],
    }
    feed.run(award, pool, "machine:1", "m1")  # the same award again: replayed, nothing new
    assert feed.kinds() == ["pool.award", "pool.amounts"]


def test_a_network_pool_is_the_centrals_and_names_the_venue_where_it_was_won(
    feed: Feed, an10_venue: Venue
) -> None:
    other = venue_of(Jurisdiction.AN10, "AN-B-0777", "Bingo Triana")
    network = Network.objects.create(name="Red Sur", code="SUR", jurisdiction=Jurisdiction.AN10)
    network.venues.set([an10_venue, other])
    pool = link_pool(an10_venue, code="NET", network=network, members=())
    pools.add_member(pool=pool, source_type="machine", source_id="7", venue=other, actor="op")
    feed.run(award, pool, "machine:7/seat:1", "n1")
    (won,) = feed.messages("pool.award")
    assert (won["venue"], won["pool"], won["where"]) == (None, "NET", "AN-B-0777")
    (amounts,) = feed.messages("pool.amounts")
    assert amounts["venue"] is None and amounts["pools"][0]["family"] == "network"


def test_an_award_that_rolls_back_writes_nothing(feed: Feed, an10_venue: Venue) -> None:
    pool = link_pool(an10_venue)
    feed.rolled_back(award, pool, "machine:1", "m1")
    assert feed.messages() == []


def test_with_the_feed_off_an_award_writes_nothing(feed_off: Feed, an10_venue: Venue) -> None:
    pool = link_pool(an10_venue)
    feed_off.run(award, pool, "machine:1", "m1")
    assert feed_off.messages() == []
    assert pool_feed.report_pool_amounts(ON_THE_MINUTE) == 0


def test_the_pools_amounts_at_each_jurisdictions_interval(
    feed: Feed, settings: Any, an10_venue: Venue, pool_operator: Any
) -> None:
    carousel = make_pool(an10_venue, pool_operator)  # a table's carrusel
    link_pool(an10_venue)
    ml = venue_of(Jurisdiction.ML, "ML-B-0009")
    link_pool(ml, code="ML-LINK")
    settings.HALL_FEED_POOL_TICK_SECONDS = 10
    settings.HALL_FEED_BY_JURISDICTION = {"ML": {"pool_interval_seconds": 30}}
    assert feed.run(pool_feed.report_pool_amounts, ON_THE_MINUTE) == 2  # both intervals end on the minute
    first, second = feed.messages("pool.amounts")
    assert first["venue"] == "AN-C-0101" and second["venue"] == "ML-B-0009"
    assert [(p["pool"], p["family"]) for p in first["pools"]] == [
        (carousel.code, "carrusel"),
        ("LINK", "machines"),
    ]
    assert [lv["amount"] for lv in first["pools"][0]["levels"]] == ["5000.00"]
    half = ON_THE_MINUTE + timedelta(seconds=30)
    assert feed.run(pool_feed.report_pool_amounts, half) == 1  # ML's 30 s, not AN10's 60 s
    assert feed.messages("pool.amounts")[-1]["venue"] == "ML-B-0009"
    assert feed.run(pool_feed.report_pool_amounts, half + timedelta(seconds=10)) == 0  # the next tick: none
    settings.HALL_FEED_BY_JURISDICTION = {"ML": {"enabled": False}}
    assert feed.run(pool_feed.report_pool_amounts, ON_THE_MINUTE) == 1  # ML's feed off
