"""Contributions: the hot path. Append-only inserts, never a hot-row UPDATE per contribution.

On PostgreSQL one call is ONE prepared statement (so, outside an outer transaction, one round trip and
one commit). It joins the pool's levels with the pool (active?) and the source's membership, takes the
pool's SHARED transaction-level advisory lock (contributors share it; `locks.lock_levels` takes the same
key EXCLUSIVE for a fold, an award, a correction or a parameter change, which waits for the contributors
in flight and queues new ones behind it), and INSERTs one row per level with the split computed in SQL
(`_insert_sql`, from halls.money.split_sql), ON CONFLICT (level, idempotency_key) DO NOTHING RETURNING. A
repeated key writes nothing and answers as the first call did. Only a call that inserted nothing takes a
second look, to tell a replay from an unknown pool, an inactive pool or a source that is not a member.

Why an advisory lock and not FOR KEY SHARE on the level row (the lead's first design): a row lock is a
write to the hot row (a new MultiXact in xmax, WAL, the page's exclusive buffer lock) on every
contribution; in a raw-psycopg probe here (32 clients) that statement capped at ~3,800/s against
~9,500/s with the advisory lock, which lives only in the lock manager. The watermark argument is the
same: a contributor holds the shared lock from before its row's id is drawn until its commit, so after a
fold holds the exclusive lock no uncommitted contribution with a lower id can appear. (A contributor
that waited behind a parameter change inserts with the rates its statement started with: it arrived
before the change.) bench/contributions.py measures the whole service call.

Call it in its own short transaction (autocommit): a caller that contributes and then awards in one
outer transaction holds the shared lock until its commit and may deadlock with another such caller.

Other databases (the embedded SQLite demo) take the ORM path, serialized by the database anyway.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.utils.translation import gettext

from halls import money
from halls.actors import Actor
from halls.actors import actor_label as label
from halls.errors import Conflict, DomainError, InvalidInput, NotFound
from halls.group_commit import GroupCommit, ProcessGroup, answer_of, together_or_one_by_one
from jackpots.models import Contribution, Pool, PoolLevel, PoolMember
from jackpots.services import locks
from jackpots.services.locks import POOL_LOCK_CLASS
from jackpots.sources import PoolSource

log = logging.getLogger("hall.jackpots.contributions")

MAX_KEY = 100
NEVER_AUTOMATICALLY = 2**62


@dataclass(frozen=True)
class ContributionLine:
    """One level's part of a contribution."""

    contribution_id: int
    level_id: int
    to_meter: Decimal
    to_reserve: Decimal
    house: Decimal


@dataclass(frozen=True)
class ContributionReceipt:
    pool_id: int
    source: PoolSource
    bet: Decimal
    idempotency_key: str
    created_at: datetime
    lines: tuple[ContributionLine, ...]
    replayed: bool = False  # True when the key was seen before: nothing was written

    @property
    def to_meter(self) -> Decimal:
        return sum((line.to_meter for line in self.lines), Decimal(0))


@dataclass(frozen=True)
class ContributionItem:
    """One contribution of a batch (contribute_many). `actor`: who made this one, when not the call's
    actor (a group commit writes many callers' contributions in one call)."""

    source: PoolSource
    bet: Decimal
    idempotency_key: str
    actor: str = ""


# --- input checks ---------------------------------------------------------------------------------------


def _bet(value: Any) -> Decimal:
    try:
        return money.parse_bet(value)
    except money.MoneyError as exc:
        raise InvalidInput(f"The {exc}.", code="bad_bet") from None


def _source(source: PoolSource) -> tuple[PoolSource, str]:
    """The source and the text its rows keep (``"table:12/seat:3"``): this is where a contribution's
    PoolSource becomes the stored text. A source is a PoolSource end to end: the text it was stored as is
    parsed back only where it is read (PoolSource.parse)."""
    if not isinstance(source, PoolSource):
        raise TypeError(f"a contribution's source is a PoolSource, not {type(source).__name__}")
    return source, str(source)


def _key(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_KEY:
        raise InvalidInput(
            gettext("Every contribution needs an idempotency key of 1–%(max_key)s characters.")
            % {"max_key": MAX_KEY},
            code="idempotency_key_required",
        )
    return value


def _pool_id(pool: Pool | int) -> int:
    if isinstance(pool, Pool):
        return int(pool.pk)
    if isinstance(pool, int) and not isinstance(pool, bool):
        return pool
    raise InvalidInput(gettext("Unknown pool %(pool)r.") % {"pool": pool}, code="unknown_pool")


# --- the hot path ---------------------------------------------------------------------------------------

# The advisory-lock key of a pool: (POOL_LOCK_CLASS, pool id), shared by contributors, exclusive for writers.
LOCK_CLASS = POOL_LOCK_CLASS


# Every contribution INSERT (one contribution, a batch of one pool, a batch of several pools) is this one
# template: the levels' rows `l` joined to the contributions, each split as halls.money.split_contribution
# splits it (halls.money.split_sql, the same constants), a replayed key writing nothing.
def _insert_sql(*, head: str, source: str, bet: str, key: str, actor: str, rows: str, returning: str) -> str:
    split = money.split_sql(bet, "l.contribution_rate", "l.reserve_rate")
    return f"""{head}
INSERT INTO jackpots_contribution
    (pool_id, level_id, source, bet, to_meter, to_reserve, house, idempotency_key, actor, created_at)
SELECT l.pool_id, l.id, {source}, {bet}, {split}, {key}, {actor}, statement_timestamp()
{rows}
ON CONFLICT (level_id, idempotency_key) DO NOTHING
RETURNING id, level_id, to_meter, to_reserve, house, created_at{returning}
"""


# One contribution. The pool's lock is taken per joined level row (LATERAL), so before that row's id is
# drawn; taking it again for the next level of the same pool is a no-op in the lock manager.
_INSERT_SQL = _insert_sql(
    head="",
    source="%s",
    bet="b.bet",
    key="%s",
    actor="%s",
    rows=f"""FROM jackpots_poollevel l
JOIN jackpots_pool p ON p.id = l.pool_id AND p.active
JOIN jackpots_poolmember m
    ON m.pool_id = l.pool_id AND m.source_type = %s AND m.source_id = %s AND m.removed_at IS NULL
CROSS JOIN LATERAL (SELECT pg_advisory_xact_lock_shared({LOCK_CLASS}, l.pool_id::int)) locked
CROSS JOIN (SELECT %s::numeric AS bet) b
WHERE l.pool_id = %s""",
    returning="",
)


_local = threading.local()


@functools.cache
def _prepared() -> bool:
    return bool(getattr(settings, "HALL_POOL_PREPARED_STATEMENTS", True))


def _cursor() -> psycopg.Cursor[Any]:
    """This thread's server-side-binding cursor on Django's connection (kept: a cursor per call costs
    more than the statement's Python side). Django's connection is per thread, so is the cursor."""
    wrapper = connections[DEFAULT_DB_ALIAS]
    wrapper.ensure_connection()
    raw = wrapper.connection
    cursor: psycopg.Cursor[Any] | None = getattr(_local, "cursor", None)
    if cursor is None or cursor.connection is not raw or cursor.closed:
        assert raw is not None
        if raw.prepare_threshold is None:
            # Django opens its connections with prepared statements off (None also refuses prepare=True).
            # A threshold no query reaches keeps Django's own queries unprepared and lets ours be.
            raw.prepare_threshold = NEVER_AUTOMATICALLY
        cursor = psycopg.Cursor(raw)  # server-side binding; Django's cursor factory binds client-side
        _local.cursor = cursor
    return cursor


def _fetch(sql: str, params: Sequence[Any] | dict[str, Any]) -> list[tuple[Any, ...]]:
    """Run one statement on Django's connection as a server-side PREPARED statement (planned once per
    connection; Django's own cursors bind client-side and would plan it on every call).

    Behind a pooler in transaction mode without protocol-level prepared statements (PgBouncer < 1.21,
    or max_prepared_statements = 0), set ``HALL_POOL_PREPARED_STATEMENTS = False``.
    """
    cursor = _cursor()
    cursor.execute(sql, params, prepare=_prepared())
    return cursor.fetchall()


def contribute(
    *, pool: Pool | int, source: PoolSource, bet: Decimal, idempotency_key: str, actor: Actor
) -> ContributionReceipt:
    """Record one pool bet: one ledger row per level (source, bet, meter / reserve / house parts, time, key).

    `source` is the member and where in it (a PoolSource: ``PoolSource.of("table", 12).at("seat", 3)``,
    stored as ``"table:12/seat:3"``). A repeated `idempotency_key` on the pool writes nothing and answers
    as the first call did (``replayed=True``); the same key with another source or bet is refused (409).

    Called outside a transaction on PostgreSQL, the contribution goes through the process's group commit
    (see "Group commit" below): the same rows and the same answer, in a transaction shared with the
    process's other callers of the moment. Inside the caller's transaction it is written there and then
    (it commits or rolls back with the caller's other writes).
    """
    pool_id = _pool_id(pool)
    amount = _bet(bet)
    typed, text = _source(source)
    stype, sid = typed.kind, typed.id
    key = _key(idempotency_key)
    who = label(actor)
    if connection.vendor != "postgresql":
        return _contribute_orm(pool_id, text, amount, key, who, stype, sid)
    if _grouped() and not connection.in_atomic_block:
        return group_commit().submit(_Request(pool_id, key, (text, amount, stype, sid, who)))
    return _contribute_now(pool_id, text, amount, key, who, stype, sid)


def _contribute_now(
    pool_id: int, source: str, amount: Decimal, key: str, who: str, stype: str, sid: str
) -> ContributionReceipt:
    """The checked contribution as one statement, in the caller's transaction (or its own)."""
    locks.contributing([pool_id])  # the statement takes the pool's shared lock
    rows = _fetch(_INSERT_SQL, (source, key, who, stype, sid, amount, pool_id))
    if len(rows) > 1:
        rows.sort(key=lambda row: row[1])  # lines in level order
    if rows:
        return ContributionReceipt(
            pool_id=pool_id,
            source=PoolSource.parse(source),
            bet=amount,
            idempotency_key=key,
            created_at=rows[0][5],
            lines=tuple(ContributionLine(r[0], r[1], r[2], r[3], r[4]) for r in rows),
        )
    return _explain_nothing_written(pool_id, source, amount, key, stype, sid)


def _replay(pool_id: int, source: str, amount: Decimal, key: str) -> ContributionReceipt | None:
    rows = list(Contribution.objects.filter(pool_id=pool_id, idempotency_key=key).order_by("level_id"))
    if not rows:
        return None
    first = rows[0]
    if first.source != source or first.bet != amount:
        raise Conflict(
            gettext("Idempotency key %(key)r was used for another contribution (%(source)s, %(bet)s).")
            % {"key": key, "source": first.source, "bet": first.bet},
            code="idempotency_key_reused",
        )
    return ContributionReceipt(
        pool_id=pool_id,
        source=PoolSource.parse(source),
        bet=amount,
        idempotency_key=key,
        created_at=first.created_at,
        lines=tuple(ContributionLine(r.pk, r.level_id, r.to_meter, r.to_reserve, r.house) for r in rows),
        replayed=True,
    )


def _explain_nothing_written(
    pool_id: int, source: str, amount: Decimal, key: str, stype: str, sid: str
) -> ContributionReceipt:
    replay = _replay(pool_id, source, amount, key)
    if replay is not None:
        return replay
    pool = Pool.objects.filter(pk=pool_id).only("active", "code").first()
    if pool is None:
        raise NotFound(gettext("No pool %(pool_id)s.") % {"pool_id": pool_id}, code="unknown_pool")
    if not pool.active:
        raise Conflict(
            gettext("Pool %(code)s is closed: it takes no contributions.") % {"code": pool.code},
            code="pool_inactive",
        )
    if not PoolMember.objects.filter(
        pool_id=pool_id, source_type=stype, source_id=sid, removed_at__isnull=True
    ).exists():
        raise InvalidInput(
            gettext("%(stype)s:%(sid)s is not a member of pool %(code)s: it cannot contribute.")
            % {"stype": stype, "sid": sid, "code": pool.code},
            code="source_not_member",
        )
    raise NotFound(
        gettext("Pool %(code)s has no levels.") % {"code": pool.code}, code="unknown_pool"
    )  # pragma: no cover


def _contribute_orm(
    pool_id: int, source: str, amount: Decimal, key: str, who: str, stype: str, sid: str
) -> ContributionReceipt:
    """The portable path (SQLite demo): same rows, same answers, serialized by the database."""
    with transaction.atomic():
        replay = _replay(pool_id, source, amount, key)
        if replay is not None:
            return replay
        levels = list(PoolLevel.objects.filter(pool_id=pool_id, pool__active=True).order_by("id"))
        if (
            not levels
            or not PoolMember.objects.filter(
                pool_id=pool_id, source_type=stype, source_id=sid, removed_at__isnull=True
            ).exists()
        ):
            return _explain_nothing_written(pool_id, source, amount, key, stype, sid)
        from django.utils import timezone

        at = timezone.now()
        rows = []
        for level in levels:
            split = money.split_contribution(amount, level.contribution_rate, level.reserve_rate)
            rows.append(
                Contribution.objects.create(
                    pool_id=pool_id,
                    level_id=level.pk,
                    source=source,
                    bet=amount,
                    to_meter=split.to_meter,
                    to_reserve=split.to_reserve,
                    house=split.house,
                    idempotency_key=key,
                    actor=who,
                    created_at=at,
                )
            )
    return ContributionReceipt(
        pool_id=pool_id,
        source=PoolSource.parse(source),
        bet=amount,
        idempotency_key=key,
        created_at=at,
        lines=tuple(ContributionLine(r.pk, r.level_id, r.to_meter, r.to_reserve, r.house) for r in rows),
    )


# --- batches (devices that send several plays at once) --------------------------------------------------

_BATCH_SQL = _insert_sql(
    head="""WITH items AS (
    SELECT i.source, i.bet, i.key, i.stype, i.sid, i.actor, i.n
    FROM unnest(
        %(sources)s::text[], %(bets)s::numeric[], %(keys)s::text[], %(stypes)s::text[], %(sids)s::text[],
        %(actors)s::text[]
    ) WITH ORDINALITY AS i(source, bet, key, stype, sid, actor, n)
)""",
    source="items.source",
    bet="items.bet",
    key="items.key",
    actor="items.actor",
    rows=f"""FROM jackpots_poollevel l
JOIN jackpots_pool p ON p.id = l.pool_id AND p.active
CROSS JOIN LATERAL (SELECT pg_advisory_xact_lock_shared({LOCK_CLASS}, l.pool_id::int)) locked
JOIN items ON EXISTS (
    -- The pool id as a constant, not l.pool_id: PostgreSQL then probes the member index per item instead
    -- of hashing every member of the pool on each call (1.3 ms → 0.5 ms with 1,000 linked machines).
    SELECT 1 FROM jackpots_poolmember m
    WHERE m.pool_id = %(pool)s AND m.source_type = items.stype AND m.source_id = items.sid
      AND m.removed_at IS NULL
)
WHERE l.pool_id = %(pool)s
ORDER BY items.n, l.id""",  # noqa: S608 - LOCK_CLASS is a constant
    returning=", idempotency_key",
)


# One checked contribution of a batch, by key: source, bet, member type, member id, actor label.
_Checked = tuple[str, Decimal, str, str, str]


def contribute_many(
    *, pool: Pool | int, items: Sequence[ContributionItem], actor: Actor
) -> list[ContributionReceipt]:
    """A batch in one transaction, in order; receipts in the items' order (replays marked).

    Every item is checked first; one bad item (bad bet, non-member source, a key reused with other
    content) refuses the whole batch and writes nothing (inside the caller's transaction: its savepoint
    rolls back, the caller may go on).
    """
    pool_id = _pool_id(pool)
    if not items:
        return []
    checked, order = _check_batch(items, label(actor))
    if connection.vendor != "postgresql":
        with transaction.atomic():
            done = {
                key: _contribute_orm(pool_id, source, amount, key, by, stype, sid)
                for key, (source, amount, stype, sid, by) in checked.items()
            }
        return [done[key] for key in order]
    with transaction.atomic():
        answers = _insert_batch(pool_id, checked)
        for key in order:
            answer = answers[key]
            if isinstance(answer, DomainError):
                raise answer  # the whole batch is refused: the transaction rolls back
    return [answers[key] for key in order]  # type: ignore[misc]  # no refusal: receipts only


def _check_batch(items: Sequence[ContributionItem], who: str) -> tuple[dict[str, _Checked], list[str]]:
    """Every item checked (bet, key, source), by key; and the items' keys in order. A key twice with other
    content refuses the batch."""
    checked: dict[str, _Checked] = {}
    order: list[str] = []
    for item in items:
        key = _key(item.idempotency_key)
        amount = _bet(item.bet)
        typed, text = _source(item.source)
        stype, sid = typed.kind, typed.id
        if key in checked:
            if checked[key][:2] != (text, amount):
                raise InvalidInput(
                    gettext("Key %(key)r appears twice in the batch with other content.") % {"key": key},
                    code="idempotency_key_reused",
                )
        else:
            checked[key] = (text, amount, stype, sid, item.actor or who)
        order.append(key)
    return checked, order


def contribute_answers(
    *, pool: Pool | int, items: Sequence[ContributionItem], actor: Actor
) -> list[ContributionReceipt | DomainError]:
    """contribute_many's ONE statement in the caller's transaction (PostgreSQL only), answering each item
    (its receipt, or its refusal) instead of refusing the whole batch: for a caller that writes several
    callers' contributions in one transaction and decides what a refusal means for them (the table bets'
    group, jackpots.tables.services.bets). A bad item (bet, key, source) still raises InvalidInput."""
    if connection.vendor != "postgresql":
        raise RuntimeError("contribute_answers is PostgreSQL's batch statement")
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("contribute_answers runs inside the caller's transaction")
    pool_id = _pool_id(pool)
    if not items:
        return []
    checked, order = _check_batch(items, label(actor))
    answers = _insert_batch(pool_id, checked)
    return [answers[key] for key in order]


def _insert_batch(pool_id: int, checked: dict[str, _Checked]) -> dict[str, ContributionReceipt | DomainError]:
    """ONE statement inserting every checked contribution of the pool (atomic by itself: in autocommit it
    is its own transaction), then a look at the keys that inserted nothing: a replay's receipt, or the
    refusal (unknown or closed pool, not a member, key reused with another bet) as that key's answer."""
    keys = list(checked)
    params = {
        "pool": pool_id,
        "sources": [checked[k][0] for k in keys],
        "bets": [checked[k][1] for k in keys],
        "keys": keys,
        "stypes": [checked[k][2] for k in keys],
        "sids": [checked[k][3] for k in keys],
        "actors": [checked[k][4] for k in keys],
    }
    locks.contributing([pool_id])  # the statement takes the pool's shared lock
    rows = _fetch(_BATCH_SQL, params)
    written: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        written.setdefault(row[6], []).append(row)
    answers: dict[str, ContributionReceipt | DomainError] = {}
    for key, (source, amount, stype, sid, _by) in checked.items():
        lines = written.get(key)
        if lines:
            if len(lines) > 1:
                lines.sort(key=lambda r: r[1])  # lines in level order
            answers[key] = ContributionReceipt(
                pool_id=pool_id,
                source=PoolSource.parse(source),
                bet=amount,
                idempotency_key=key,
                created_at=lines[0][5],
                lines=tuple(ContributionLine(r[0], r[1], r[2], r[3], r[4]) for r in lines),
            )
            continue
        try:
            answers[key] = _explain_nothing_written(pool_id, source, amount, key, stype, sid)
        except DomainError as exc:
            answers[key] = exc
    return answers


# --- one statement for several pools (a game's program funding) ----------------------------------------

# The batch statement for items of several pools: each pool's SHARED lock taken first, in pool-id order
# (the `locked` row is needed by every row the INSERT writes, so all the locks are held before any id is
# drawn); then the same split per level and the same member check as _BATCH_SQL, per item's pool.
_POOLS_SQL = _insert_sql(
    head=f"""WITH items AS (
    SELECT i.pool, i.source, i.bet, i.key, i.stype, i.sid, i.actor, i.n
    FROM unnest(
        %(pools)s::bigint[], %(sources)s::text[], %(bets)s::numeric[], %(keys)s::text[], %(stypes)s::text[],
        %(sids)s::text[], %(actors)s::text[]
    ) WITH ORDINALITY AS i(pool, source, bet, key, stype, sid, actor, n)
), locked AS MATERIALIZED (
    SELECT count(pg_advisory_xact_lock_shared({LOCK_CLASS}, id::int)) AS n
    FROM unnest(%(lock_order)s::bigint[]) AS id
)""",  # noqa: S608 - LOCK_CLASS is a constant
    source="items.source",
    bet="items.bet",
    key="items.key",
    actor="items.actor",
    rows="""FROM locked
CROSS JOIN items
JOIN jackpots_poollevel l ON l.pool_id = items.pool
JOIN jackpots_pool p ON p.id = l.pool_id AND p.active
WHERE EXISTS (
    SELECT 1 FROM jackpots_poolmember m
    WHERE m.pool_id = items.pool AND m.source_type = items.stype AND m.source_id = items.sid
      AND m.removed_at IS NULL
)
ORDER BY items.n, l.id""",
    returning=", idempotency_key, pool_id",
)


def contribute_pools(
    *, items: Sequence[tuple[Pool | int, ContributionItem]], actor: Actor
) -> list[ContributionReceipt]:
    """Contributions to several pools, ``(pool, item)`` each, in ONE statement on PostgreSQL (a game's
    program funding at the close of sales: every program's pool and the room's Bolsa at once); receipts
    in the items' order, replays marked. Each is exactly what `contribute` writes and answers; the first
    refusal in the items' order refuses them all (inside the caller's transaction: its savepoint rolls
    back). Other databases: one `contribute_many` per pool."""
    if not items:
        return []
    who = label(actor)
    by_pool: dict[int, list[ContributionItem]] = {}
    for pool, item in items:
        by_pool.setdefault(_pool_id(pool), []).append(item)
    checked = {pool_id: _check_batch(found, who)[0] for pool_id, found in by_pool.items()}
    wanted = [(_pool_id(pool), item.idempotency_key) for pool, item in items]
    if connection.vendor != "postgresql":
        with transaction.atomic():
            done = {
                (pool_id, receipt.idempotency_key): receipt
                for pool_id, found in by_pool.items()
                for receipt in contribute_many(pool=pool_id, items=found, actor=actor)
            }
        return [done[at] for at in wanted]
    flat = [(pool_id, key, value) for pool_id, batch in checked.items() for key, value in batch.items()]
    params = {
        "pools": [pool_id for pool_id, _, _ in flat],
        "sources": [c[0] for _, _, c in flat],
        "bets": [c[1] for _, _, c in flat],
        "keys": [key for _, key, _ in flat],
        "stypes": [c[2] for _, _, c in flat],
        "sids": [c[3] for _, _, c in flat],
        "actors": [c[4] for _, _, c in flat],
        "lock_order": sorted(checked),
    }
    with transaction.atomic():
        written: dict[tuple[int, str], list[tuple[Any, ...]]] = {}
        locks.contributing(sorted(checked))  # the statement takes the pools' shared locks
        for row in _fetch(_POOLS_SQL, params):
            written.setdefault((row[7], row[6]), []).append(row)
        answers: dict[tuple[int, str], ContributionReceipt] = {}
        for at in dict.fromkeys(wanted):  # each (pool, key) once, in the items' order
            pool_id, key = at
            source, amount, stype, sid, _by = checked[pool_id][key]
            lines = sorted(written.get(at, ()), key=lambda r: r[1])  # lines in level order
            if lines:
                answers[at] = ContributionReceipt(
                    pool_id=pool_id,
                    source=PoolSource.parse(source),
                    bet=amount,
                    idempotency_key=key,
                    created_at=lines[0][5],
                    lines=tuple(ContributionLine(r[0], r[1], r[2], r[3], r[4]) for r in lines),
                )
            else:  # a replay's receipt, or the refusal that refuses them all
                answers[at] = _explain_nothing_written(pool_id, source, amount, key, stype, sid)
    found_once: set[tuple[int, str]] = set()
    receipts = []
    for at in wanted:
        receipt = answers[at]
        receipts.append(replace(receipt, replayed=True) if at in found_once else receipt)
        found_once.add(at)
    return receipts


# --- group commit (independent callers of one process) ------------------------------------------------
#
# A contribution made outside any transaction (the hot path: one pool bet, nothing else to write with it)
# goes to the process's group commit (halls.group_commit): concurrent callers' contributions are written
# together, up to HALL_POOL_GROUP_SIZE of them, in ONE transaction with one batch statement per pool
# (contribute_many's, pools in id order as every writer takes them; a group of one pool is that one
# statement in autocommit: one round trip, one commit). The rows, splits and answers are those of
# one-by-one calls: the same SQL split per row, the same replay and refusal answers. A refused
# contribution (a non-member source, a closed pool, a key reused with another bet) inserts nothing, so
# it gets its refusal and the others their receipts. If the database refuses the group's transaction (a
# deadlock, a lost connection), its contributions are written again one by one, each in its own
# transaction, so one failure never loses the others; the keys make a caller's retry a no-op.
#
# A contribution inside a caller's transaction stays there (table bets with their seat rows and audit
# entry, a game's program funding under its pools' exclusive locks): moving it to another transaction
# would split what must commit together, and a caller holding locks while it waits for a group would
# wait on a transaction the database cannot see it waiting on. Those callers group at their own level
# instead: whole register_bets calls of concurrent tables (jackpots.tables.services.bets, with
# contribute_answers), every pool of a close of sales in one statement (contribute_pools).


@dataclass(frozen=True)
class _Request:
    """A contribution checked by `contribute`, for the group commit."""

    pool_id: int
    key: str
    checked: _Checked


@functools.cache
def _grouped() -> bool:
    return _group.enabled()


def group_commit() -> GroupCommit[_Request, ContributionReceipt]:
    """This process's group commit (a new one after a fork: a child never shares its parent's), sized by
    HALL_POOL_GROUP_SIZE, _WAIT_MS and _RUNNERS."""
    return _group.get()


def _write_one(request: _Request) -> ContributionReceipt:
    """The request alone, as `contribute` writes it inside a transaction (one statement)."""
    source, amount, stype, sid, who = request.checked
    return _contribute_now(request.pool_id, source, amount, request.key, who, stype, sid)


_Answer = ContributionReceipt | BaseException


def _write_together(requests: Sequence[_Request]) -> list[_Answer]:
    """The requests of every pool in one transaction: one batch statement per pool, pools in id order.
    With one pool (the usual group) that statement runs in autocommit: one round trip, one commit.

    A request repeating an earlier one's key with the same contribution answers as that one (a replay);
    with another contribution it is written alone after the group, as it would be one by one."""
    batches: dict[int, dict[str, _Checked]] = {}
    for request in requests:
        batch = batches.setdefault(request.pool_id, {})
        batch.setdefault(request.key, request.checked)
    found: dict[tuple[int, str], ContributionReceipt | DomainError] = {}
    if len(batches) == 1:
        [(pool_id, batch)] = batches.items()
        found.update(((pool_id, key), answer) for key, answer in _insert_batch(pool_id, batch).items())
    else:
        with transaction.atomic():
            for pool_id in sorted(batches):
                answers = _insert_batch(pool_id, batches[pool_id])
                found.update(((pool_id, key), answer) for key, answer in answers.items())
    answers_in_order: list[_Answer] = []
    first: set[tuple[int, str]] = set()
    for request in requests:
        at = (request.pool_id, request.key)
        answer: _Answer = found[at]
        if request.checked[:2] != batches[request.pool_id][request.key][:2]:
            answer = _alone(request)  # the same key with another contribution: as one by one
        elif at in first and isinstance(answer, ContributionReceipt):
            answer = replace(answer, replayed=True)  # the same contribution twice: the later one replays
        first.add(at)
        answers_in_order.append(answer)
    return answers_in_order


def _alone(request: _Request) -> _Answer:
    return answer_of(_write_one, request)


def _write_group(requests: Sequence[_Request]) -> list[_Answer]:
    """The group's answers: together (see `_write_together`), or, if that fails (the database refused
    the transaction: a deadlock, a lost connection), one by one, each in its own transaction."""
    return together_or_one_by_one(requests, _write_together, _write_one, log=log, what="contributions")


_group: ProcessGroup[_Request, ContributionReceipt] = ProcessGroup(_write_group, "HALL_POOL_GROUP")
