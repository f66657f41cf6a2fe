"""What the floor page and the cashier read: every machine of a venue with its state, link, last meters,
plays today and pending hits; the hits waiting to be paid by hand. Read-only, a few queries per call
whatever the number of machines (the floor refreshes every second)."""

from __future__ import annotations

import functools
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Count, OuterRef, Q, Subquery, Sum
from django.utils import timezone

from halls.cashier.services import readmodels as cashier_readmodels
from halls.models import Venue
from jackpots.models import Award
from machines.models import LinkMember, Machine, MeterSnapshot, ProgressiveHit

ZERO = Decimal("0.00")


@functools.lru_cache(maxsize=64)
def zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def venue_day(time_zone: str, at: datetime) -> date:
    """The venue-local day of `at` (a machine's plays are counted per venue day; the floor shows today's)."""
    return timezone.localtime(at, zone(time_zone)).date()


def floor_view(venue: Venue) -> list[dict[str, Any]]:
    """Every machine of the venue, by asset number."""
    link = LinkMember.objects.filter(machine=OuterRef("pk"), left_at__isnull=True)
    latest = MeterSnapshot.objects.filter(machine=OuterRef("pk")).order_by("-seq").values("pk")[:1]
    machines = list(
        Machine.objects.filter(venue=venue)
        .annotate(
            group_id=Subquery(link.values("group_id")[:1]),
            group_code=Subquery(link.values("group__code")[:1]),
            group_label=Subquery(link.values("group__name")[:1]),
            pending_hits=Count("hits", filter=Q(hits__paid_at__isnull=True)),
            pending_amount=Sum("hits__amount", filter=Q(hits__paid_at__isnull=True)),
            last_snapshot_id=Subquery(latest),
        )
        .order_by("asset_number")
    )
    # The latest snapshot per machine by a subquery, not DISTINCT ON: the embedded hall runs on SQLite.
    snapshot_ids = [m.last_snapshot_id for m in machines if m.last_snapshot_id is not None]
    last_meters = {s.machine_id: s for s in MeterSnapshot.objects.filter(pk__in=snapshot_ids)}
    today = venue_day(venue.time_zone, timezone.now())
    rows = []
    for m in machines:
        snapshot = last_meters.get(m.pk)
        group_id = getattr(m, "group_id", None)
        rows.append(
            {
                "id": m.pk,
                "asset": m.asset_number,
                "asset_number": m.asset_number,
                "type": m.machine_type,
                "machine_type": m.machine_type,
                "modality": m.modality,
                "positions": m.positions,
                "manufacturer": m.manufacturer,
                "model": m.model,
                "denomination": m.denomination,
                "location": m.location,
                "state": m.state,
                "lock_reason": m.lock_reason,
                "online": m.online,
                "last_seen_at": m.last_seen_at,
                "last_seq": m.last_seq,
                "group": None
                if group_id is None
                else {
                    "id": group_id,
                    "code": getattr(m, "group_code", ""),
                    "name": getattr(m, "group_label", ""),
                },
                "meters": None
                if snapshot is None
                else {
                    "seq": snapshot.seq,
                    "coin_in": snapshot.coin_in,
                    "coin_out": snapshot.coin_out,
                    "games_played": snapshot.games_played,
                    "jackpots_paid": snapshot.jackpots_paid,
                    "credits": snapshot.credits,
                    "taken_at": snapshot.taken_at,
                },
                "last_play_at": m.last_play_at,
                "plays_today": m.plays_today if m.plays_day == today else 0,
                "pending_hits": getattr(m, "pending_hits", 0),
                "pending_amount": getattr(m, "pending_amount", None),
            }
        )
    return rows


def hit_payouts(hits: list[ProgressiveHit]) -> dict[int, dict[str, Any]]:
    """The cashier's payables of these hits (payout_view), by hit; a hit without one is left out."""
    awards = dict(
        Award.objects.filter(
            settlement_id__in=[h.settlement_id for h in hits if h.settlement_id], order=0
        ).values_list("settlement_id", "pk")
    )
    sources = {
        h.pk: cashier_readmodels.pool_award_source(awards[h.settlement_id])
        if h.settlement_id in awards
        else cashier_readmodels.machine_hit_source(h.pk)
        for h in hits
    }
    paid = cashier_readmodels.payouts(sources.values())
    return {pk: paid[source] for pk, source in sources.items() if source in paid}


def hit_row(hit: ProgressiveHit, payout: dict[str, Any] | None) -> dict[str, Any]:
    """The hit as the API shows it, with its payable's payment (`hit_payouts`; None: it has none)."""
    machine = hit.machine
    return {
        "id": hit.pk,
        "machine": machine.pk,
        "asset_number": machine.asset_number,
        "location": machine.location,
        "group": hit.group.code,
        "level": hit.level_id,
        "level_name": hit.level.name,
        "game_id": hit.game_id,
        "amount": hit.amount,
        "settlement": hit.settlement_id,
        "seq": hit.seq,
        "reported_at": hit.reported_at,
        "paid_at": hit.paid_at,
        "paid_by": hit.paid_by_label,
        "payment_ref": hit.payment_ref,
        "payout": payout,
    }


def pending_hand_pays(venue: Venue) -> list[dict[str, Any]]:
    """The venue's progressive hits not yet paid by hand, oldest first."""
    return pending_hand_pays_in([venue.pk])


def pending_hand_pays_in(venue_ids: list[int]) -> list[dict[str, Any]]:
    """``pending_hand_pays`` of each venue, venue after venue in the order of ``venue_ids``, in as many
    queries for many venues as for one."""
    hits = (
        ProgressiveHit.objects.filter(machine__venue_id__in=venue_ids, paid_at__isnull=True)
        .select_related("machine", "group", "level")
        .order_by("reported_at", "pk")
    )
    place = {venue_id: n for n, venue_id in enumerate(venue_ids)}
    rows = sorted(hits, key=lambda hit: place[hit.machine.venue_id])  # stable: oldest first in each venue
    paid = hit_payouts(rows)
    return [hit_row(hit, paid.get(hit.pk)) for hit in rows]
