"""A casino table's pool and pack: the pool it plays for, the pack its pool bets follow, and where in it a
contribution was made (its PoolSource)."""

from __future__ import annotations

from django.utils.translation import gettext as _

from halls.errors import Conflict
from jackpots.models import Pool
from jackpots.rulepacks import RulePack, get_pack
from jackpots.services.packs import pool_pack
from jackpots.sources import PoolSource
from jackpots.tables.models import SOURCE_TYPE, CasinoTable, Hand

__all__ = ["contribution_source", "pool_of", "table_pack"]


def pool_of(table: CasinoTable) -> Pool:
    if table.pool is None:
        raise Conflict(
            _("%(table)s plays for no pool: join it to one first.") % {"table": table}, code="no_pool"
        )
    return table.pool


def contribution_source(table: CasinoTable, hand: Hand, seat: int | None = None) -> PoolSource:
    """A contribution's source: the member (the table) and where in it the bet was made (the hand, then the
    seat or the hand's total): "table:<id>/hand:<n>/seat:<s>" as stored."""
    at_hand = PoolSource.of(SOURCE_TYPE, table.pk).at("hand", hand.number)
    return at_hand.at("total") if seat is None else at_hand.at("seat", seat)


def table_pack(table: CasinoTable, pool: Pool | None = None) -> RulePack:
    """The pack the table's pool bets follow: its pool's (with the authorised paytable), else its own."""
    pool = pool if pool is not None else table.pool
    pack = pool_pack(pool) if pool is not None else None
    return pack if pack is not None else get_pack(table.rule_pack)
