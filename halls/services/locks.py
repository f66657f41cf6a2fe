"""Every lock of the halls app, each through its rank (halls.locks): proposals, networks, venues, region
agreements, regions, operators, rooms, sessions, audit heads."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

from halls.locks import Rank, take, take_many
from halls.models import (
    AuditChainHead,
    GameSession,
    Network,
    Operator,
    Proposal,
    Region,
    RegionAgreement,
    Room,
    Venue,
)


def lock_proposal(proposal_id: int) -> Proposal:
    """A four-eyes proposal FOR UPDATE, before anything its applier locks: decided once."""
    take(Rank.PROPOSAL, proposal_id)
    return Proposal.objects.select_for_update(of=("self",)).get(pk=proposal_id)


def lock_room(room_id: int) -> Room:
    """The room FOR UPDATE, with its venue."""
    take(Rank.ROOM, room_id)
    return Room.objects.select_for_update(of=("self",)).select_related("venue").get(pk=room_id)


def lock_venue(venue_id: int) -> Venue:
    take(Rank.VENUE, venue_id)
    return Venue.objects.select_for_update(of=("self",)).get(pk=venue_id)


def lock_networks(network_ids: list[int]) -> list[Network]:
    """Networks FOR UPDATE, in id order: their membership stays as read until the transaction ends."""
    ids = sorted(set(network_ids))
    take_many(Rank.NETWORK, ids)
    return list(Network.objects.select_for_update(of=("self",)).filter(pk__in=ids).order_by("pk"))


def lock_agreements(agreement_ids: list[int]) -> list[RegionAgreement]:
    """Region agreements FOR UPDATE, in id order (a revocation waits for a join relying on them, and the
    other way round)."""
    ids = sorted(set(agreement_ids))
    take_many(Rank.REGION_AGREEMENT, ids)
    rows = RegionAgreement.objects.select_for_update(of=("self",)).filter(pk__in=ids).order_by("pk")
    return list(rows)


def lock_region(region_id: int) -> Region:
    """The region FOR UPDATE: its name and jurisdiction change under it."""
    take(Rank.REGION, region_id)
    return Region.objects.select_for_update(of=("self",)).get(pk=region_id)


def lock_operator(operator_id: int) -> Operator:
    """The operator FOR UPDATE: its name changes under it."""
    take(Rank.OPERATOR, operator_id)
    return Operator.objects.select_for_update(of=("self",)).get(pk=operator_id)


def lock_rooms(venue_id: int) -> list[int]:
    """Every room of the venue FOR UPDATE, in id order; their ids."""
    take(Rank.ROOM, f"of venue {venue_id}")
    rooms = Room.objects.select_for_update(of=("self",)).filter(venue_id=venue_id).order_by("pk")
    return list(rooms.values_list("pk", flat=True))


def lock_session(session_id: int) -> GameSession:
    take(Rank.SESSION, session_id)
    return GameSession.objects.select_for_update(of=("self",)).select_related("room").get(pk=session_id)


def lock_audit_head(venue_id: int) -> tuple[str, int, str] | None:
    """The tip of the venue's chain, locked: its hash, length and key; None before its first entry."""
    take(Rank.AUDIT_HEAD, venue_id)
    # SQLite has no FOR UPDATE: its transactions take the database's write lock at BEGIN (settings).
    # FOR NO KEY UPDATE: the entries' commit-time foreign-key checks never wait for it (cashier locks).
    lock = " FOR NO KEY UPDATE" if connection.features.has_select_for_update else ""
    sql = f"SELECT last_hash, length, alg FROM {_HEAD} WHERE venue_id = %s{lock}"  # noqa: S608 (a model's table)
    with connection.cursor() as cursor:
        cursor.execute(sql, [venue_id])
        row = cursor.fetchone()
    return None if row is None else (str(row[0]), int(row[1]), str(row[2]))


def lock_audit_heads(venue_ids: Sequence[int]) -> dict[int, tuple[str, int, str]]:
    """The tips of the venues' chains, locked in venue id order in one statement (PostgreSQL): each one's
    hash, length and key; a venue before its first entry is missing."""
    ordered = sorted(set(venue_ids))
    take_many(Rank.AUDIT_HEAD, ordered)
    sql = (
        f"SELECT venue_id, last_hash, length, alg FROM {_HEAD} "  # noqa: S608 (a model's table)
        "WHERE venue_id = ANY(%s) ORDER BY venue_id FOR NO KEY UPDATE"  # locked in the order the rows come
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [ordered])
        rows = cursor.fetchall()
    return {int(row[0]): (str(row[1]), int(row[2]), str(row[3])) for row in rows}


_HEAD = AuditChainHead._meta.db_table
