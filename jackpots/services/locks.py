"""Every row lock of the pool engine, in one place and one order (DESIGN §3, saleor's lock_objects).

Order everywhere: the pool row (seals only, FOR NO KEY UPDATE), then the pool's level rows FOR UPDATE
by id, then the pool's advisory lock (POOL_LOCK_CLASS, pool id) EXCLUSIVE, then the audit chain heads
(halls.services.audit) and stream cursors (halls.events).

Contributors take only the pool's SHARED advisory lock (services.contributions explains why not a row
lock); the exclusive one waits for the contributors in flight and queues new ones behind it, so a fold's
watermark is safe. Writers (fold, award, correction, parameter change) serialize on the level row locks
first, so at most one of them at a time waits on the advisory lock. One key per pool, not per level:
every writer locks all the pool's levels anyway, and a contributor then needs no lock order.
"""

from __future__ import annotations

from django.db import connection, transaction
from django.utils.translation import gettext as _

from halls.errors import NotFound
from jackpots.models import Pool, PoolLevel


def _require_atomic() -> None:
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("pool locks are taken inside the service's transaction")


# Advisory-lock namespace of pools ("JP"): pg_advisory_xact_lock(POOL_LOCK_CLASS, pool_id).
POOL_LOCK_CLASS = 0x4A50


def lock_levels(pool_id: int) -> list[PoolLevel]:
    """All levels of the pool, locked FOR UPDATE in id order, then the pool EXCLUSIVE against
    contributors (which waits for the ones in flight), returned by position."""
    _require_atomic()
    levels = list(PoolLevel.objects.select_for_update(of=("self",)).filter(pool_id=pool_id).order_by("id"))
    if not levels:
        raise NotFound(_("No pool %(pool_id)s.") % {"pool_id": pool_id}, code="unknown_pool")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [POOL_LOCK_CLASS, pool_id])
    return sorted(levels, key=lambda level: level.position)


def lock_pool_for_seal(pool_id: int) -> Pool:
    """Serialize seals of one pool without blocking contributors (their FK-free inserts never touch it)."""
    _require_atomic()
    pool = Pool.objects.select_for_update(no_key=True).filter(pk=pool_id).first()
    if pool is None:
        raise NotFound(_("No pool %(pool_id)s.") % {"pool_id": pool_id}, code="unknown_pool")
    return pool
