"""A table's changes, recorded: the audit entry in the venue's chain and the event on the table's stream.

Audit entries are appended AFTER the engine's calls (the lock order, halls.locks: pools before audit
heads), so a contributor holding its KEY SHARE never waits for a head a settlement waiting on it holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from halls.actors import Actor
from halls.eventtypes import EventType, TableHead
from halls.services.changes import record_change
from jackpots.tables.models import CasinoTable

__all__ = ["head", "record"]


def head(table: CasinoTable) -> TableHead:
    """What every event of a table starts with."""
    return TableHead(table=table.pk, table_number=table.number)


def record(table: CasinoTable, actor: Actor, type: EventType, obj: Any, data: Mapping[str, Any]) -> None:
    """Audit the change (the table's venue chain) and tell the table's stream, in the caller's transaction.
    What happens at a table is public: `data`, a payload of `type` (from `head`), is what the audit keeps."""
    record_change(
        venue_id=table.venue_id, actor=actor, type=type, obj=obj, data=data, stream=table.stream, public=data
    )
