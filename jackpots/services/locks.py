"""Every lock of the pool engine, each through its rank (halls.locks), in the style of saleor's
lock_objects.

A pool's writers (fold, award, correction, parameter change) lock its level rows FOR UPDATE by id, then
its advisory lock (POOL_LOCK_CLASS, pool id) EXCLUSIVE: the level rows serialize the writers first, so
at most one of them at a time waits on the advisory lock. Contributors take only the SHARED advisory
lock, in their INSERT (services.contributions says why not a row lock): the exclusive one waits for the
contributors in flight and queues new ones behind it, so a fold's watermark is safe. One key per pool,
not per level: every writer locks all the pool's levels anyway.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, transaction
from django.utils.translation import gettext as _

from halls.errors import NotFound
from halls.locks import Rank, take, take_many
from jackpots.models import MeterPublisherState, Pool, PoolLevel, PoolMember

# Advisory-lock namespace of pools ("JP"): pg_advisory_xact_lock(POOL_LOCK_CLASS, pool_id).
POOL_LOCK_CLASS = 0x4A50


def _require_atomic() -> None:
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("pool locks are taken inside the service's transaction")


def lock_levels(pool_id: int) -> list[PoolLevel]:
    """All levels of the pool, locked FOR UPDATE in id order, then the pool EXCLUSIVE against
    contributors (which waits for the ones in flight), returned by position."""
    _require_atomic()
    take(Rank.POOL, pool_id)
    levels = list(PoolLevel.objects.select_for_update(of=("self",)).filter(pool_id=pool_id).order_by("id"))
    if not levels:
        raise NotFound(_("No pool %(pool_id)s.") % {"pool_id": pool_id}, code="unknown_pool")
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [POOL_LOCK_CLASS, pool_id])
    return sorted(levels, key=lambda level: level.position)


def lock_pools(pool_ids: Iterable[int]) -> None:
    """`lock_levels` of several pools, in pool-id order."""
    for pool_id in sorted(set(pool_ids)):
        lock_levels(pool_id)


def hold_pool(pool_id: int) -> None:
    """Share-lock the pool's levels (FOR KEY SHARE) until the transaction ends.

    A parameter change locks them FOR UPDATE and then asks the open-play guards, so a hand opening now
    is either seen by that guard or opens after the change has committed (never in between).
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("hold_pool runs inside the service's transaction")
    take(Rank.POOL, pool_id)
    if connection.vendor != "postgresql":
        return  # SQLite serializes writers anyway
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM jackpots_poollevel WHERE pool_id = %s ORDER BY id FOR KEY SHARE", [pool_id]
        )


def level_versions(pool_ids: list[int]) -> dict[int, int]:
    """The pools' levels' versions, holding FOR KEY SHARE on them until the caller's transaction ends.

    Contributors go on; every writer of a level's folded state (fold, award, correction, parameter
    change) takes FOR UPDATE and waits, so what the caller reads next matches these versions.
    """
    if not pool_ids:
        return {}
    take_many(Rank.POOL, sorted(pool_ids))
    if connection.vendor == "postgresql":
        with connection.cursor() as db:
            db.execute(
                f"SELECT id, version FROM {PoolLevel._meta.db_table} "  # noqa: S608 (a model's table name)
                "WHERE pool_id = ANY(%s) ORDER BY id FOR KEY SHARE",
                [pool_ids],
            )
            return {int(pk): int(version) for pk, version in db.fetchall()}
    # SQLite (the embedded hall): one writer at a time, the transaction is the lock.
    return dict(PoolLevel.objects.filter(pool_id__in=pool_ids).values_list("pk", "version"))


def contributing(pool_ids: Iterable[int]) -> None:
    """The pools' SHARED advisory locks, which a contribution's INSERT takes itself (in its SQL)."""
    take_many(Rank.POOL, pool_ids)


def lock_pool_for_seal(pool_id: int) -> Pool:
    """Serialize seals of one pool without blocking contributors (their FK-free inserts never touch it)."""
    _require_atomic()
    take(Rank.SEAL, pool_id)
    pool = Pool.objects.select_for_update(no_key=True).filter(pk=pool_id).first()
    if pool is None:
        raise NotFound(_("No pool %(pool_id)s.") % {"pool_id": pool_id}, code="unknown_pool")
    return pool


def lock_member(*, pool: Pool, source_type: str, source_id: str) -> PoolMember | None:
    """The pool's current member for the source, FOR UPDATE, or None."""
    take(Rank.POOL_MEMBER, (pool.pk, source_type, source_id))
    return (
        PoolMember.objects.select_for_update(of=("self",))
        .filter(pool=pool, source_type=source_type, source_id=source_id, removed_at__isnull=True)
        .first()
    )


def lock_publisher_tick(name: str) -> MeterPublisherState | None:
    """The meter publisher's tick row, locked; None when another tick holds it (SKIP LOCKED)."""
    take(Rank.METER_PUBLISHER, name)
    return MeterPublisherState.objects.select_for_update(skip_locked=True).filter(name=name).first()


def lock_publisher_rows(names: list[str]) -> dict[str, MeterPublisherState]:
    """The meter publisher's rows of these names that exist, FOR UPDATE, by name."""
    take_many(Rank.METER_PUBLISHER, sorted(names))
    rows = MeterPublisherState.objects.select_for_update().filter(name__in=names).order_by("name")
    return {row.name: row for row in rows}
