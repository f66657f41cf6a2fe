"""Interconnected bingo's locks, through their ranks (halls.locks): the prize at the central, taken before
its pool and after the link's (a handler runs under the venue's link); at a venue, a speciality's
membership of a Gran prize.

FOR UPDATE by what changes the prize or decides a round (a round opened, a decision, the meter's beat); FOR
SHARE by a hall's contribution and result: those of different halls go on together (the pool engine lets
contributors share its pool; a result is one row), while a decision waits for the ones in flight and they
wait for it. The result that completes a round decides it at once only if it gets the prize FOR UPDATE
without waiting (`try_lock_shared_prize`); else right after its commit (issue 30)."""

from __future__ import annotations

from django.db import connection

from bingo.network.interconnected.models import NetworkPrize, SpecialityMembership
from halls.locks import Rank, take


def lock_prize(prize_id: int) -> NetworkPrize:
    """The prize FOR UPDATE: its rounds, contributions, results and decisions are written under it."""
    take(Rank.NETWORK_PRIZE, prize_id)
    return NetworkPrize.objects.select_for_update(of=("self",)).select_related("network").get(pk=prize_id)


def share_prize(prize_id: int) -> NetworkPrize:
    """The prize FOR SHARE (a contribution). Its own key in the lock order: a transaction holding it that
    asked for the prize FOR UPDATE too would wait for the other sharers, who may wait for it."""
    take(Rank.NETWORK_PRIZE, ("share", prize_id))
    if connection.vendor != "postgresql":
        return lock_prize(prize_id)  # SQLite has one writer
    table = NetworkPrize._meta.db_table
    sql = f"SELECT * FROM {table} WHERE id = %s FOR SHARE"  # noqa: S608 (a model's table)
    # Read by the statement that locks it (its network, read when named: a meter or a decision sent).
    (prize,) = NetworkPrize.objects.raw(sql, [prize_id])
    return prize


def try_lock_shared_prize(prize_id: int) -> bool:
    """The prize FOR UPDATE SKIP LOCKED by a transaction that shares it (a contribution writing the prize's
    meter): True if no other transaction holds it. It never waits, so it deadlocks with nothing and stays
    out of the order's check; when another contribution shares the prize it gives up (the meter's beat,
    HALL_NETWORK_TICK_SECONDS, sends what the throttle or this held back)."""
    if connection.vendor != "postgresql":
        return True
    locked = NetworkPrize.objects.select_for_update(skip_locked=True, of=("self",)).filter(pk=prize_id)
    return locked.values_list("pk", flat=True).first() is not None


def lock_membership(membership_id: int) -> SpecialityMembership:
    """A speciality's membership of a Gran prize FOR UPDATE: leaving it is decided under it."""
    take(Rank.SPECIALITY_MEMBERSHIP, membership_id)
    return SpecialityMembership.objects.select_for_update(of=("self",)).get(pk=membership_id)
