"""The pools' facts on the authority's feed: each award (pool.award, then the pool's amounts after it) from
the settlement that writes it, and every pool's amounts at its jurisdiction's interval (the beat's
`report_pool_amounts`). A venue's pools go in its messages; a network's pools (at its central) in the
central's own (venue null). Where an award was won is the licence of the winning member's venue."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from halls.feed import days
from halls.feed.kinds import FeedKind
from halls.feed.services import facts
from halls.feed.services.emit import emit
from jackpots.models import Pool, PoolLevel, PoolMember, PoolSettlement, SourceType
from jackpots.services.readmodels.meters import pool_meters
from jackpots.sources import PoolSource, SourceError

# What a member's type says of its pool's family, in this order (a network's pool is "network" first).
_FAMILIES = (
    (SourceType.TABLE, "carrusel"),
    (SourceType.MACHINE, "machines"),
)


def family_of(pool: Pool) -> str:
    """bingo | carrusel | machines | network, as the feed's schema names a pool's family."""
    if pool.network_id is not None:
        return "network"
    if pool.carousel_bet is not None or pool.rule_pack:
        return "carrusel"
    types = set(PoolMember.objects.filter(pool=pool).values_list("source_type", flat=True))
    for source_type, family in _FAMILIES:
        if source_type in types:
            return family
    return "bingo"


def _pools(pools: Iterable[Pool]) -> list[dict[str, Any]]:
    by_id = {p.pk: p for p in pools}
    meters = pool_meters(by_id)
    return [
        {
            "pool": meter.code,
            "name": meter.name,
            "family": family_of(by_id[pool_id]),
            "levels": [{"level": level.name, "amount": facts.amount(level.amount)} for level in meter.levels],
        }
        for pool_id, meter in sorted(meters.items())
    ]


def _emit_amounts(venue_id: int | None, pools: Iterable[Pool], at: datetime | None = None) -> None:
    payload = {"venue": facts.licence(venue_id), "pools": _pools(pools)}
    emit(FeedKind.POOL_AMOUNTS, payload, venue_id=venue_id, at=at)


def _where(pool: Pool, context: dict[str, Any]) -> str | None:
    """The licence of the venue whose member won (its source), else the pool's venue's."""
    try:
        member = PoolSource.parse(str(context.get("source", ""))).member
    except SourceError:
        member = None
    if member is not None:
        venue_id = (
            PoolMember.objects.filter(pool=pool, source_type=member.kind, source_id=member.id)
            .values_list("venue_id", flat=True)
            .first()
        )
        if venue_id is not None:
            return facts.licence(venue_id)
    return facts.licence(pool.venue_id)


def awarded(
    *, pool: Pool, level: PoolLevel, settlement: PoolSettlement, paid: Decimal, after: Decimal
) -> None:
    """In the settlement's transaction: the award, then the pool's amounts after it."""
    if not facts.feed_on(pool.venue_id):
        return
    if paid <= 0:
        return  # nothing won (a call that paid nothing): no award to report
    payload = {
        "venue": facts.licence(pool.venue_id),
        "pool": pool.code,
        "level": level.name,
        "amount": facts.amount(paid),
        "before": facts.amount(settlement.meter_before),
        "after": facts.amount(after),
        "where": _where(pool, dict(settlement.context or {})),
    }
    emit(FeedKind.POOL_AWARD, payload, venue_id=pool.venue_id, at=settlement.created_at)
    _emit_amounts(pool.venue_id, [pool], at=settlement.created_at)


def report_amounts(*, venue_id: int | None) -> bool:
    """One report of the active pools of a venue (None: the central's network pools); False with none."""
    with transaction.atomic():
        pools = Pool.objects.filter(active=True).order_by("pk")
        pools = pools.filter(venue_id=venue_id) if venue_id is not None else pools.filter(venue__isnull=True)
        found = list(pools)
        if not found or not facts.feed_on(venue_id):
            return False
        _emit_amounts(venue_id, found)
    return True


def report_pool_amounts(now: datetime | None = None) -> int:
    """The beat's tick: every fed venue (and the central's network pools) whose interval ended since the
    previous tick (HALL_FEED_POOL_TICK_SECONDS); how many reports were written."""
    moment = (now or timezone.now()).timestamp()
    tick = float(settings.HALL_FEED_POOL_TICK_SECONDS)
    done = 0
    for venue in facts.fed_venues():
        if days.interval_ended(moment, facts.pool_interval_seconds(venue.jurisdiction), tick):
            done += report_amounts(venue_id=venue.pk)
    if facts.enabled_in(None) and days.interval_ended(moment, facts.pool_interval_seconds(None), tick):
        done += report_amounts(venue_id=None)
    return done
