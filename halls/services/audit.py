"""The hash-chained audit log: one chain per venue, appended inside the caller's transaction."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from halls.models import AuditChainHead, AuditEntry

GENESIS = "0" * 64


def _normalise(data: dict[str, Any]) -> dict[str, Any]:
    """Decimals, dates and the like as the strings JSON will store, so the hash can be recomputed."""
    normalised: dict[str, Any] = json.loads(json.dumps(data, cls=DjangoJSONEncoder))
    return normalised


def _digest(prev_hash: str, fields: dict[str, Any]) -> str:
    canonical = json.dumps({"prev": prev_hash, **fields}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _fields(entry: AuditEntry) -> dict[str, Any]:
    return {
        "venue": entry.venue_id,
        "actor": entry.actor_label,
        "action": entry.action,
        "object_type": entry.object_type,
        "object_id": entry.object_id,
        "data": entry.data,
        "created_at": entry.created_at.isoformat(),
    }


def actor_label(actor: User | AnonymousUser | str | None) -> str:
    if actor is None:
        return "system"
    if isinstance(actor, str):
        return actor
    return str(actor.get_username() or "anonymous")


def record(
    *,
    venue_id: int,
    actor: User | AnonymousUser | str | None,
    action: str,
    obj: Any,
    data: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append one entry to the venue's chain. Must run inside the service's transaction.

    Two statements on PostgreSQL once the venue has a chain: lock the tip and read its hash, then write
    the entry and move the tip in one statement.
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit.record must run inside a transaction")
    prev_hash = _lock_head(venue_id)
    user = actor if isinstance(actor, User) else None
    entry = AuditEntry(
        venue_id=venue_id,
        actor=user,
        actor_label=actor_label(actor),
        action=action,
        object_type=type(obj)._meta.label_lower if hasattr(type(obj), "_meta") else type(obj).__name__,
        object_id=str(getattr(obj, "pk", obj)),
        data=_normalise(data or {}),
        created_at=timezone.now(),
        prev_hash=prev_hash,
    )
    entry.hash = _digest(prev_hash, _fields(entry))
    _append(entry)
    return entry


def record_many(
    *,
    venue_id: int,
    entries: Sequence[tuple[User | AnonymousUser | str | None, str, Any, dict[str, Any] | None]],
) -> list[AuditEntry]:
    """Append several entries, ``(actor, action, obj, data)`` each, to the venue's chain in order: what
    `record` does for each, with the tip locked once and (on PostgreSQL) one statement for them all (a
    group of callers' commands written in one transaction, jackpots.tables.services.bets)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit.record_many must run inside a transaction")
    if not entries:
        return []
    prev_hash = _lock_head(venue_id)
    built = []
    for actor, action, obj, data in entries:
        entry = AuditEntry(
            venue_id=venue_id,
            actor=actor if isinstance(actor, User) else None,
            actor_label=actor_label(actor),
            action=action,
            object_type=type(obj)._meta.label_lower if hasattr(type(obj), "_meta") else type(obj).__name__,
            object_id=str(getattr(obj, "pk", obj)),
            data=_normalise(data or {}),
            created_at=timezone.now(),
            prev_hash=prev_hash,
        )
        entry.hash = prev_hash = _digest(prev_hash, _fields(entry))
        built.append(entry)
    if connection.vendor != "postgresql" or len(built) == 1:
        for entry in built:
            _append(entry)
        return built
    values = [
        field.get_db_prep_save(getattr(entry, field.attname), connection)
        for entry in built
        for field in _ENTRY_FIELDS
    ]
    row = "(" + ", ".join(["%s"] * len(_ENTRY_FIELDS)) + ")"
    # One INSERT: its rows get their ids in the VALUES' order (the chain's order, as verify_chain reads it).
    sql = _APPEND_MANY_SQL.format(rows=", ".join([row] * len(built)))
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, prev_hash, len(built), venue_id])
        (ids,) = cursor.fetchone()
    for entry, pk in zip(built, sorted(ids), strict=True):
        entry.pk = pk
        entry._state.adding, entry._state.db = False, connection.alias
    return built


def _lock_head(venue_id: int) -> str:
    """Lock the tip of the venue's chain and return its hash; the venue's first entry makes the tip."""
    # SQLite has no FOR UPDATE: its transactions take the database's write lock at BEGIN (settings).
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    sql = f"SELECT last_hash FROM {_HEAD} WHERE venue_id = %s{lock}"  # noqa: S608 (a model's table)
    with connection.cursor() as cursor:
        cursor.execute(sql, [venue_id])
        row = cursor.fetchone()
        if row is None:
            # A concurrent first entry of the venue finds this row (or makes it first) and waits on its lock.
            AuditChainHead.objects.get_or_create(venue_id=venue_id, defaults={"last_hash": GENESIS})
            cursor.execute(sql, [venue_id])
            row = cursor.fetchone()
    return str(row[0])


def _append(entry: AuditEntry) -> None:
    """Write the entry and make it the tip of its venue's chain (the tip is locked by the caller)."""
    if connection.vendor != "postgresql":
        entry.save()
        AuditChainHead.objects.filter(venue_id=entry.venue_id).update(
            last_hash=entry.hash, length=F("length") + 1
        )
        return
    values = [field.get_db_prep_save(getattr(entry, field.attname), connection) for field in _ENTRY_FIELDS]
    with connection.cursor() as cursor:
        cursor.execute(_APPEND_SQL, [*values, entry.hash, entry.venue_id])
        (entry.pk,) = cursor.fetchone()
    entry._state.adding, entry._state.db = False, connection.alias


_HEAD = AuditChainHead._meta.db_table
# Every column of an entry but its id, in the order of _APPEND_SQL.
_ENTRY_FIELDS = [field for field in AuditEntry._meta.concrete_fields if not field.primary_key]
_APPEND_SQL = f"""
WITH entry AS (
    INSERT INTO "{AuditEntry._meta.db_table}" ({", ".join(f'"{field.column}"' for field in _ENTRY_FIELDS)})
    VALUES ({", ".join(["%s"] * len(_ENTRY_FIELDS))})
    RETURNING id
)
UPDATE "{_HEAD}" SET last_hash = %s, length = length + 1 WHERE venue_id = %s
RETURNING (SELECT id FROM entry)
"""  # noqa: S608 - the models' own table and column names


_APPEND_MANY_SQL = f"""
WITH entries AS (
    INSERT INTO "{AuditEntry._meta.db_table}" ({", ".join(f'"{field.column}"' for field in _ENTRY_FIELDS)})
    VALUES {{rows}}
    RETURNING id
)
UPDATE "{_HEAD}" SET last_hash = %s, length = length + %s WHERE venue_id = %s
RETURNING (SELECT array_agg(id) FROM entries)
"""  # noqa: S608 - the models' own table and column names


@dataclass(frozen=True)
class ChainCheck:
    ok: bool
    entries: int
    first_bad_id: int | None = None


def verify_chain(venue_id: int) -> ChainCheck:
    """Recompute the venue's chain; the first entry whose hash or link does not match is reported."""
    prev = GENESIS
    count = 0
    for entry in AuditEntry.objects.filter(venue_id=venue_id).order_by("pk").iterator():
        if entry.prev_hash != prev or _digest(prev, _fields(entry)) != entry.hash:
            return ChainCheck(ok=False, entries=count, first_bad_id=entry.pk)
        prev = entry.hash
        count += 1
    head = AuditChainHead.objects.filter(venue_id=venue_id).first()
    if head is not None and (head.last_hash != prev or head.length != count):
        return ChainCheck(ok=False, entries=count, first_bad_id=None)
    return ChainCheck(ok=True, entries=count)
