"""What the table services share: row locks in one order, the table's pack, audit + events.

Lock order everywhere: the table row, then the hand row, then the engine's pool level rows (KEY SHARE
to contribute or to open a hand, FOR UPDATE inside award_hand), then the audit chain head and the stream
cursors (halls). Audit entries are appended AFTER the engine's calls, so a contributor holding its KEY
SHARE never waits for an audit head that a settlement waiting on the levels holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import connection, transaction
from django.utils.translation import gettext
from django.utils.translation import gettext as _

from halls.actors import Actor
from halls.errors import Conflict, NotFound
from halls.eventtypes import EventType, TableHead
from halls.services.changes import record_change
from jackpots.models import Pool
from jackpots.rulepacks import RulePack, get_pack
from jackpots.services.common import pool_pack
from jackpots.tables.models import CasinoTable, Hand, HandState

__all__ = [
    "contribution_source",
    "head",
    "hold_pool",
    "lock_hand",
    "lock_table",
    "no_hand",
    "pool_of",
    "record",
    "table_pack",
]


def lock_table(table_id: int) -> CasinoTable:
    table = (
        CasinoTable.objects.select_for_update(of=("self",))
        .select_related("venue", "pool")
        .filter(pk=table_id)
        .first()
    )
    if table is None:
        raise NotFound(_("No table %(table_id)s.") % {"table_id": table_id}, code="unknown_table")
    return table


def no_hand(hand_id: int) -> NotFound:
    return NotFound(f"No hand {hand_id}.", code="unknown_hand")


def lock_hand(hand_id: int) -> Hand:
    """Lock the hand's table, then the hand."""
    table_id = Hand.objects.filter(pk=hand_id).values_list("table_id", flat=True).first()
    if table_id is None:
        raise no_hand(hand_id)
    table = lock_table(table_id)
    hand = Hand.objects.select_for_update(of=("self",)).get(pk=hand_id)
    hand.table = table
    return hand


def pool_of(table: CasinoTable) -> Pool:
    if table.pool is None:
        raise Conflict(
            _("%(table)s plays for no pool: join it to one first.") % {"table": table}, code="no_pool"
        )
    return table.pool


def contribution_source(table: CasinoTable, hand: Hand, seat: int | None = None) -> str:
    """A contribution's source label: the member ("table:<id>") and where in it the bet was made."""
    detail = f"/hand:{hand.number}" + (f"/seat:{seat}" if seat is not None else "/total")
    return f"table:{table.pk}{detail}"


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


def hold_pool(pool_id: int) -> None:
    """Share-lock the pool's levels (FOR KEY SHARE, as contributors do) until the transaction ends.

    A parameter change locks them FOR UPDATE and then asks the open-play guards, so a hand opening now
    is either seen by that guard or opens after the change has committed (never in between).
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("hold_pool runs inside the service's transaction")
    if connection.vendor != "postgresql":
        return  # SQLite serializes writers anyway
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM jackpots_poollevel WHERE pool_id = %s ORDER BY id FOR KEY SHARE", [pool_id]
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
