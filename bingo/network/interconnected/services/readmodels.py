"""What the doors show of interconnected prizes: a prize with its live meter, its rounds with their
decisions hall by hall (contribution tags, result, share), a room's membership; and what a venue's session
minutes and statistics (bingo.venuewide.records, through bingo.traditional.hooks) read of its games played in
a round.
Read-only."""

from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from bingo.network.interconnected.models import (
    NetworkPrize,
    PrizeRound,
    RoomMembership,
    RoundGame,
    SpecialityMembership,
)
from bingo.traditional.hooks import WonPrize
from jackpots.services.readmodels import meters


def live_meter(prize: NetworkPrize) -> Decimal:
    """What the prize's meter shows now (folded + unfolded, whole cents down)."""
    return meters.pool_meter(prize.pool_id).levels[0].amount


def prize_view(prize: NetworkPrize) -> dict[str, Any]:
    return {
        "id": prize.pk,
        "network": prize.network.code,
        "code": prize.code,
        "kind": prize.kind,
        "name": prize.name,
        "percent": prize.percent,
        "reserve_percent": prize.reserve_percent,
        "max_ball": prize.max_ball,
        "wait_seconds": prize.wait_seconds,
        "auto_rounds": prize.auto_rounds,
        "pool": prize.pool_id,
        "meter": live_meter(prize),
        "halls": sorted(prize.halls.values_list("venue__licence_number", flat=True)),
        "active": prize.active,
    }


def _hall_rows(rnd: PrizeRound) -> list[dict[str, Any]]:
    contributions = {c.venue.licence_number: c for c in rnd.contributions.select_related("venue")}
    results = {r.venue.licence_number: r for r in rnd.results.select_related("venue")}
    rows = []
    for hall in rnd.expected:
        given, found = contributions.get(hall), results.get(hall)
        if found is None:
            outcome = "missing" if rnd.state == "decided" else "waiting"
        elif found.late:
            outcome = "late"
        else:
            outcome = "void" if found.void else ("bingo" if found.cards else "none")
        rows.append(
            {
                "hall": hall,
                "game": given.game_number if given else 0,
                "sales": given.sales if given else None,
                "to_meter": given.to_meter if given else None,
                "operator": given.operator if given else "",
                "region": given.region if given else "",
                "result": outcome,
                "ordinal": found.ordinal if found else None,
                "cards": found.cards if found else [],
            }
        )
    return rows


def round_view(rnd: PrizeRound) -> dict[str, Any]:
    return {
        "id": rnd.pk,
        "number": rnd.number,
        "state": rnd.state,
        "max_ball": rnd.max_ball,
        "expected": rnd.expected,
        "opened_at": rnd.opened_at,
        "closes_at": rnd.closes_at,
        "decided_at": rnd.decided_at,
        "rule": rnd.rule,
        "ordinal": rnd.ordinal,
        "pool_amount": rnd.pool_amount,
        "share": rnd.share,
        "remainder": rnd.remainder,
        "missing": rnd.missing,
        "halls": _hall_rows(rnd),
        "shares": [
            {"id": s.pk, "hall": s.venue.licence_number, "card": s.card, "amount": s.amount}
            for s in rnd.shares.select_related("venue").order_by("pk")
        ],
    }


def membership_view(membership: RoomMembership) -> dict[str, Any]:
    return {
        "id": membership.pk,
        "room": membership.room_id,
        "network": membership.network.code,
        "prize": membership.prize_code,
        "active": membership.active,
        "meter": membership.meter_amount,
        "max_ball": membership.meter_max_ball,
    }


def speciality_membership_view(membership: SpecialityMembership) -> dict[str, Any]:
    return {
        "id": membership.pk,
        "speciality": membership.speciality_id,
        "network": membership.network.code,
        "prize": membership.prize_code,
        "table_code": membership.table_code,
        "active": membership.active,
        "meter": membership.meter_amount,
    }


# --- a venue's records: its games played as a round's interconnected game ---------------------------------


def round_games(game_ids: Collection[int]) -> set[int]:
    """Of these hall games, those played as a round's interconnected game."""
    return set(RoundGame.objects.filter(game_id__in=list(game_ids)).values_list("game_id", flat=True))


def round_prizes_won(game_ids: Collection[int]) -> list[WonPrize]:
    """The interconnected prize each of these hall games won (its winning cards' shares, paid at its
    cashier), at most the round's max ball."""
    rows = RoundGame.objects.filter(game_id__in=list(game_ids), prize_won__gt=0).select_related("round")
    label = _("Interconnected prize")
    return [
        WonPrize(game_id=rg.game_id, label=label, ordinal=rg.round.max_ball, amount=rg.prize_won)
        for rg in rows
    ]
