"""What the table services share: the table's pool and pack, contribution sources, audit + events.

Audit entries are appended AFTER the engine's calls (the lock order, halls.locks: pools before audit
heads), so a contributor holding its KEY SHARE never waits for a head a settlement waiting on it holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext
from django.utils.translation import gettext as _

from halls.actors import Actor
from halls.errors import Conflict, NotFound
from halls.eventtypes import EventType, TableHead
from halls.services.changes import record_change
from jackpots.models import Pool
from jackpots.rulepacks import RulePack, get_pack
from jackpots.services.packs import pool_pack
from jackpots.sources import PoolSource
from jackpots.tables.models import SOURCE_TYPE, CasinoTable, Hand, HandState

__all__ = [
    "contribution_source",
    "head",
    "no_hand",
    "pool_of",
    "record",
    "table_pack",
]


def no_hand(hand_id: int) -> NotFound:
    return NotFound(f"No hand {hand_id}.", code="unknown_hand")


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


def require_open(hand: Hand, doing: str) -> None:
    if hand.state != HandState.OPEN:
        state = HandState(hand.state).label.lower()
        code = "hand_settled" if hand.state == HandState.SETTLED else "hand_void"
        raise Conflict(
            _("Hand %(number)s at %(table)s is %(state)s: cannot %(doing)s.")
            % {"number": hand.number, "table": hand.table, "state": state, "doing": gettext(doing)},
            code=code,
            state=hand.state,
        )


def table_pack(table: CasinoTable, pool: Pool | None = None) -> RulePack:
    """The pack the table's pool bets follow: its pool's (with the authorised paytable), else its own."""
    pool = pool if pool is not None else table.pool
    pack = pool_pack(pool) if pool is not None else None
    return pack if pack is not None else get_pack(table.rule_pack)


def head(table: CasinoTable) -> TableHead:
    """What every event of a table starts with."""
    return TableHead(table=table.pk, table_number=table.number)


def record(table: CasinoTable, actor: Actor, type: EventType, obj: Any, data: Mapping[str, Any]) -> None:
    """Audit the change (the table's venue chain) and tell the table's stream, in the caller's transaction.
    What happens at a table is public: `data`, a payload of `type` (from `head`), is what the audit keeps."""
    record_change(
        venue_id=table.venue_id, actor=actor, type=type, obj=obj, data=data, stream=table.stream, public=data
    )
