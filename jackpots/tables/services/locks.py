"""Every lock of the casino tables, each through its rank (halls.locks): a table, then its hands.

The pool's locks (share-locked levels to contribute or open a hand, FOR UPDATE inside an award) are the
engine's (jackpots.services.locks), taken after these.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from halls.errors import NotFound
from halls.locks import Rank, take, take_many
from halls.services.locks import lock_venue
from jackpots.tables.models import CasinoTable, Hand
from jackpots.tables.services.refusals import no_hand


def _tables() -> QuerySet[CasinoTable]:
    return CasinoTable.objects.select_for_update(of=("self",)).select_related("venue", "pool")


def hold_venue_tables(venue_id: int) -> None:
    """The venue FOR UPDATE (its rank comes before every table's): taken by whatever changes which tables
    form a carrusel of ALL the tables of a game (a table created, a carrusel formed or joined), so a new
    table and a carrusel formed at the same moment see each other: the table joins, or the carrusel is
    refused for missing it."""
    lock_venue(venue_id)


def lock_table(table_id: int) -> CasinoTable:
    """The table FOR UPDATE, with its venue and pool."""
    take(Rank.TABLE, table_id)
    table = _tables().filter(pk=table_id).first()
    if table is None:
        raise NotFound(_("No table %(table_id)s.") % {"table_id": table_id}, code="unknown_table")
    return table


def lock_hand(hand_id: int) -> Hand:
    """Lock the hand's table, then the hand."""
    table_id = Hand.objects.filter(pk=hand_id).values_list("table_id", flat=True).first()
    if table_id is None:
        raise no_hand(hand_id)
    table = lock_table(table_id)
    take(Rank.HAND, hand_id)
    hand = Hand.objects.select_for_update(of=("self",)).get(pk=hand_id)
    hand.table = table
    return hand


def lock_hands(hand_ids: set[int]) -> dict[int, Hand]:
    """The hands' tables FOR UPDATE in id order, then the hands in id order (every table before any
    hand, as lock_hand takes one table then its hand), each hand with its locked table."""
    table_of = dict(Hand.objects.filter(pk__in=hand_ids).values_list("pk", "table_id"))
    table_ids = sorted(set(table_of.values()))
    take_many(Rank.TABLE, table_ids)
    tables = {t.pk: t for t in _tables().filter(pk__in=table_ids).order_by("pk")}
    take_many(Rank.HAND, sorted(table_of))
    found = {}
    for hand in Hand.objects.select_for_update(of=("self",)).filter(pk__in=table_of).order_by("pk"):
        hand.table = tables[hand.table_id]
        found[hand.pk] = hand
    return found
