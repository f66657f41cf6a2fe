"""Interconnected bingo's one lock, through its rank (halls.locks): the prize at the central, taken before
its pool and after the link's (a handler runs under the venue's link)."""

from __future__ import annotations

from bingo.network.models import NetworkPrize
from halls.locks import Rank, take


def lock_prize(prize_id: int) -> NetworkPrize:
    """The prize FOR UPDATE: its rounds, contributions, results and decisions are written under it."""
    take(Rank.NETWORK_PRIZE, prize_id)
    return NetworkPrize.objects.select_for_update(of=("self",)).select_related("network").get(pk=prize_id)
