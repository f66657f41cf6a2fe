"""The machine rows of a gateway batch: locked, changed (Row), written. Each hot-path statement is one
statement whatever the batch's size: SQL on PostgreSQL, an ORM twin on the embedded hall's SQLite (no
arrays, LATERAL or FOR UPDATE OF there; a few statements per machine, which a demo's two dozen machines
never notice). The SQLite run of the gateway's tests runs the twins; tests/machines/test_gateway_rows.py
holds each twin to its SQL on PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import connection, transaction

from machines.models import LinkMember, Machine, Play
from machines.services import locks
from machines.services.readmodels import venue_day

# Written out in SQL: each runs hundreds of times a second, and the ORM's compilation of the same query
# (subqueries, bulk INSERT) cost more CPU than the database's work.
_LOCK_SQL = """
SELECT m.*, v.time_zone AS venue_time_zone, link.group_id AS link_group_id, link.pool_id AS link_pool_id
FROM machines_machine m
JOIN halls_venue v ON v.id = m.venue_id
LEFT JOIN LATERAL (
    SELECT lm.group_id, g.pool_id
    FROM machines_linkmember lm
    JOIN machines_linkgroup g ON g.id = lm.group_id
    JOIN jackpots_pool p ON p.id = g.pool_id AND p.active
    WHERE lm.machine_id = m.id AND lm.left_at IS NULL
    LIMIT 1
) link ON true
WHERE m.id = ANY(%s::bigint[])
ORDER BY m.id
FOR UPDATE OF m
"""

_INSERT_PLAYS_SQL = """
INSERT INTO machines_play (machine_id, seq, game_id, bet, win, played_at, received_at)
SELECT p.machine_id, p.seq, p.game_id, p.bet, p.win, p.played_at, p.received_at
FROM unnest(
    %s::bigint[], %s::bigint[], %s::text[], %s::numeric[], %s::numeric[], %s::timestamptz[],
    %s::timestamptz[]
) AS p(machine_id, seq, game_id, bet, win, played_at, received_at)
"""

_UPDATE_MACHINES_SQL = """
UPDATE machines_machine m
SET last_seq = u.last_seq, last_seen_at = u.last_seen_at, online = true, state = u.state,
    lock_reason = u.lock_reason, plays_day = u.plays_day, plays_today = u.plays_today,
    last_play_at = u.last_play_at
FROM unnest(
    %s::bigint[], %s::bigint[], %s::timestamptz[], %s::text[], %s::text[], %s::date[], %s::integer[],
    %s::timestamptz[]
) AS u(id, last_seq, last_seen_at, state, lock_reason, plays_day, plays_today, last_play_at)
WHERE m.id = u.id
"""

# Rows a batch holds right now are skipped (SKIP LOCKED): that batch writes them.
_MARK_HEARD_SQL = """
UPDATE machines_machine SET last_seen_at = %s
WHERE id IN (
    SELECT id FROM machines_machine
    WHERE id = ANY(%s::bigint[]) AND last_seen_at < %s
    ORDER BY id
    FOR UPDATE SKIP LOCKED
)
"""


@dataclass
class Row:
    """One machine of the batch: its row (locked, with its active link) and what the batch changes on it."""

    machine: Machine
    group_id: int | None
    pool_id: int | None
    state: str
    lock_reason: str
    touched: bool = False  # something to write on the row (last_seen_at at least)
    played: int = 0
    last_play_at: datetime | None = None

    @classmethod
    def of(cls, machine: Machine) -> Row:
        group_id = getattr(machine, "link_group_id", None)
        pool_id = getattr(machine, "link_pool_id", None)
        return cls(machine, group_id, pool_id, machine.state, machine.lock_reason)

    def changed(self, at: datetime, last_seq: int) -> Machine | None:
        """The machine with what the batch changes on its row set on it; None when nothing does."""
        if not self.touched:
            return None
        machine = self.machine
        if self.played:
            day = venue_day(getattr(machine, "venue_time_zone", "UTC"), at)
            machine.plays_today = self.played + (machine.plays_today if machine.plays_day == day else 0)
            machine.plays_day = day
            machine.last_play_at = self.last_play_at
        machine.last_seq, machine.last_seen_at, machine.online = last_seq, at, True
        machine.state, machine.lock_reason = self.state, self.lock_reason
        return machine


def _postgresql() -> bool:
    return connection.vendor == "postgresql"


def lock_machines(machine_ids: Sequence[int]) -> dict[int, Machine]:
    """The machines FOR UPDATE in id order (two batches never wait on each other crosswise), each with its
    venue's time zone and its active link (group, pool of an active pool) as attributes
    ``venue_time_zone``, ``link_group_id``, ``link_pool_id``."""
    if not _postgresql():
        return lock_machines_orm(machine_ids)
    return {m.pk: m for m in locks.lock_machines(machine_ids, sql=_LOCK_SQL)}


def lock_machines_orm(machine_ids: Sequence[int]) -> dict[int, Machine]:
    found: dict[int, Machine] = {}
    for machine in locks.lock_machines(machine_ids):
        link = (
            LinkMember.objects.filter(machine=machine, left_at__isnull=True, group__pool__active=True)
            .select_related("group")
            .first()
        )
        machine.venue_time_zone = machine.venue.time_zone  # type: ignore[attr-defined]
        machine.link_group_id = link.group_id if link else None  # type: ignore[attr-defined]
        machine.link_pool_id = link.group.pool_id if link else None  # type: ignore[attr-defined]
        found[machine.pk] = machine
    return found


def insert_plays(plays: Sequence[Play]) -> None:
    if not plays:
        return
    if not _postgresql():
        insert_plays_orm(plays)
        return
    with connection.cursor() as cursor:
        cursor.execute(
            _INSERT_PLAYS_SQL,
            [
                [p.machine_id for p in plays],
                [p.seq for p in plays],
                [p.game_id for p in plays],
                [p.bet for p in plays],
                [p.win for p in plays],
                [p.played_at for p in plays],
                [p.received_at for p in plays],
            ],
        )


def insert_plays_orm(plays: Sequence[Play]) -> None:
    Play.objects.bulk_create(plays)


def update_machines(machines: Sequence[Machine]) -> None:
    """What a batch changed on its machine rows (set on the instances), and online."""
    if not machines:
        return
    if not _postgresql():
        update_machines_orm(machines)
        return
    with connection.cursor() as cursor:
        cursor.execute(
            _UPDATE_MACHINES_SQL,
            [
                [m.pk for m in machines],
                [m.last_seq for m in machines],
                [m.last_seen_at for m in machines],
                [m.state for m in machines],
                [m.lock_reason for m in machines],
                [m.plays_day for m in machines],
                [m.plays_today for m in machines],
                [m.last_play_at for m in machines],
            ],
        )


def update_machines_orm(machines: Sequence[Machine]) -> None:
    for m in machines:
        Machine.objects.filter(pk=m.pk).update(
            last_seq=m.last_seq,
            last_seen_at=m.last_seen_at,
            online=True,
            state=m.state,
            lock_reason=m.lock_reason,
            plays_day=m.plays_day,
            plays_today=m.plays_today,
            last_play_at=m.last_play_at,
        )


def mark_heard(machine_ids: Sequence[int], at: datetime, stale: datetime) -> None:
    """``last_seen_at = at`` on those of the machines last seen before `stale`."""
    if not _postgresql():
        mark_heard_orm(machine_ids, at, stale)
        return
    with transaction.atomic():
        locks.update_skipping_locked(_MARK_HEARD_SQL, [at, list(machine_ids), stale])


def mark_heard_orm(machine_ids: Sequence[int], at: datetime, stale: datetime) -> None:
    Machine.objects.filter(pk__in=machine_ids, last_seen_at__lt=stale).update(last_seen_at=at)
