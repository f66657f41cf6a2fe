"""The hash-chained audit log: one chain per venue, appended inside the caller's transaction.

Each entry's hash is an HMAC-SHA256 (key outside the database, ``audit_keys``) over its content and the
previous entry's hash, and the entry records which key signed it (``alg``). Entries written before the
chain was keyed keep their plain SHA-256 (``alg`` = "sha256") and still verify, but only as the start of a
chain: the first keyed entry after them is an ``audit.key_changed`` entry naming the old and new ``alg``
and the length it continues from; the same entry marks a key rotation.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import access
from halls.actors import Actor, actor_label
from halls.chains import Anchor
from halls.errors import PermissionDenied
from halls.models import AuditChainHead, AuditEntry, Venue
from halls.services import audit_keys, locks
from halls.services.audit_keys import LEGACY_ALG

GENESIS = "0" * 64
KEY_CHANGED = "audit.key_changed"


def _normalise(data: dict[str, Any]) -> dict[str, Any]:
    """Decimals, dates and the like as the strings JSON will store, so the hash can be recomputed."""
    normalised: dict[str, Any] = json.loads(json.dumps(data, cls=DjangoJSONEncoder))
    return normalised


def _digest(prev_hash: str, fields: dict[str, Any], key: bytes | None) -> str:
    """HMAC-SHA256 under ``key``; a legacy entry (``key`` None) keeps its plain SHA-256."""
    canonical = json.dumps({"prev": prev_hash, **fields}, sort_keys=True, separators=(",", ":")).encode()
    if key is None:
        return hashlib.sha256(canonical).hexdigest()
    return hmac.new(key, canonical, hashlib.sha256).hexdigest()


def _fields(entry: AuditEntry) -> dict[str, Any]:
    return _hashed(
        entry.venue_id,
        entry.actor_label,
        entry.action,
        entry.object_type,
        entry.object_id,
        entry.data,
        entry.created_at.isoformat(),
        entry.alg,
    )


def _hashed(
    venue_id: int,
    actor_label: str,
    action: str,
    object_type: str,
    object_id: str,
    data: Any,
    created_at: str,
    alg: str,
) -> dict[str, Any]:
    """An entry's fields its hash covers (`_fields` of a model instance; `append_many` of plain values)."""
    fields = {
        "venue": venue_id,
        "actor": actor_label,
        "action": action,
        "object_type": object_type,
        "object_id": object_id,
        "data": data,
        "created_at": created_at,
    }
    if alg != LEGACY_ALG:
        fields["alg"] = alg  # signed too: a keyed entry cannot be passed off as a legacy one
    return fields


def record(
    *,
    venue_id: int,
    actor: Actor,
    action: str,
    obj: Any,
    data: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append one entry to the venue's chain. Must run inside the service's transaction.

    Two statements on PostgreSQL once the venue has a chain: lock the tip and read its hash, then write
    the entry and move the tip in one statement. The HMAC is computed here, in Python (no query).
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit.record must run inside a transaction")
    _refuse_inspector()
    keys = audit_keys.keyring()
    prev_hash = _locked_tip(venue_id, keys)
    return _write(
        venue_id=venue_id, actor=actor, action=action, obj=obj, data=data, prev_hash=prev_hash, keys=keys
    )


def _refuse_inspector() -> None:
    """Every write of a service is audited: none while an inspector's read rights are in use."""
    if access.inspector_reading():
        raise PermissionDenied(
            _("The inspector's access is read-only: nothing can be changed with it."), code="read_only"
        )


def _locked_tip(venue_id: int, keys: audit_keys.Keyring) -> str:
    """Lock the venue's chain and return the hash the next entry follows (after a key-change entry, when
    the chain was legacy or signed with another key: written once, signed with the new key)."""
    prev_hash, length, head_alg = _lock_head(venue_id, keys.alg)
    if length and head_alg != keys.alg:
        prev_hash = _key_changed(venue_id, head_alg, length, prev_hash, keys).hash
    return prev_hash


def _write(
    *,
    venue_id: int,
    actor: Actor,
    action: str,
    obj: Any,
    data: dict[str, Any] | None,
    prev_hash: str,
    keys: audit_keys.Keyring,
) -> AuditEntry:
    entry = _entry(venue_id, actor, action, obj, data, prev_hash, keys)
    _append(entry)
    return entry


def _entry(
    venue_id: int,
    actor: Actor,
    action: str,
    obj: Any,
    data: dict[str, Any] | None,
    prev_hash: str,
    keys: audit_keys.Keyring,
) -> AuditEntry:
    """The entry, hashed after ``prev_hash`` under the current key, not yet written."""
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
        alg=keys.alg,
    )
    entry.hash = _digest(prev_hash, _fields(entry), keys.current)
    return entry


def record_many(
    *,
    venue_id: int,
    entries: Sequence[tuple[Actor, str, Any, dict[str, Any] | None]],
) -> list[AuditEntry]:
    """Append several entries, ``(actor, action, obj, data)`` each, to the venue's chain in order: what
    `record` does for each, with the tip locked once and (on PostgreSQL) one statement for them all (a
    group of callers' commands written in one transaction, jackpots.tables.services.bets)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit.record_many must run inside a transaction")
    _refuse_inspector()
    if not entries:
        return []
    keys = audit_keys.keyring()
    prev_hash = _locked_tip(venue_id, keys)
    built = []
    for actor, action, obj, data in entries:
        entry = _entry(venue_id, actor, action, obj, data, prev_hash, keys)
        prev_hash = entry.hash
        built.append(entry)
    if connection.vendor != "postgresql" or len(built) == 1:
        for entry in built:
            _append(entry)
        return built
    # One INSERT, its rows as one JSON text (a parameter per column of each row cost more CPU than the
    # HMACs): its rows get their ids in the rows' order (the chain's order, as verify_chain reads it).
    rows = [
        [
            *(e.actor_id, e.actor_label, e.action, e.object_type, e.object_id, e.data),
            *(e.created_at.isoformat(), e.prev_hash, e.hash, n),
        ]
        for n, e in enumerate(built)
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            _APPEND_MANY_SQL,
            [venue_id, keys.alg, json.dumps(rows), prev_hash, len(built), keys.alg, venue_id],
        )
        (ids,) = cursor.fetchone()
    for entry, pk in zip(built, sorted(ids), strict=True):
        entry.pk = pk
        entry._state.adding, entry._state.db = False, connection.alias
    return built


def append_many(
    *,
    venue_id: int,
    entries: Sequence[tuple[Actor, str, Any, dict[str, Any] | None]],
) -> None:
    """`record_many` for a caller that needs nothing back (a group of ledger postings): on PostgreSQL the
    same rows, hashes and statements, built without a model instance per entry (the entries' CPU on a
    group's hot path); elsewhere, or for one entry, `record_many` itself."""
    if connection.vendor != "postgresql" or len(entries) < 2:
        record_many(venue_id=venue_id, entries=entries)
        return
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit.append_many must run inside a transaction")
    _refuse_inspector()
    keys = audit_keys.keyring()
    prev_hash = _locked_tip(venue_id, keys)
    rows = []
    for n, (actor, action, obj, data) in enumerate(entries):
        # What `_entry` makes of it, field by field, and `_fields` hashes.
        label = actor_label(actor)
        kind = type(obj)
        object_type = kind._meta.label_lower if hasattr(kind, "_meta") else kind.__name__
        object_id = str(getattr(obj, "pk", obj))
        normalised = _normalise(data or {})
        created_at = timezone.now().isoformat()
        fields = _hashed(venue_id, label, action, object_type, object_id, normalised, created_at, keys.alg)
        digest = _digest(prev_hash, fields, keys.current)
        actor_id = actor.pk if isinstance(actor, User) else None
        rows.append(
            [actor_id, label, action, object_type, object_id, normalised, created_at, prev_hash, digest, n]
        )
        prev_hash = digest
    with connection.cursor() as cursor:
        cursor.execute(
            _APPEND_MANY_SQL,
            [venue_id, keys.alg, json.dumps(rows), prev_hash, len(rows), keys.alg, venue_id],
        )


def record_across(
    *, venue_ids: Iterable[int], actor: Actor, action: str, obj: Any, data: dict[str, Any] | None = None
) -> list[AuditEntry]:
    """The same entry appended to each venue's chain, in venue id order (a network pool's or prize's change,
    audited in every member venue's chain): what `record` does for each, with (on PostgreSQL) the tips
    locked in one statement and the entries written in one, however many venues there are."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit.record_across must run inside a transaction")
    _refuse_inspector()
    ordered = sorted(set(venue_ids))
    started = AuditChainHead.objects.filter(venue_id__in=ordered).count()  # heads are never deleted
    if connection.vendor != "postgresql" or len(ordered) < 2 or started < len(ordered):
        # One by one (SQLite; or a venue's first entry, which makes its chain's head).
        return [record(venue_id=v, actor=actor, action=action, obj=obj, data=data) for v in ordered]
    keys = audit_keys.keyring()
    tips: dict[int, str] = {}
    for venue_id, (last_hash, length, head_alg) in locks.lock_audit_heads(ordered).items():
        if length and head_alg != keys.alg:  # after a key change: its entry first, as `_locked_tip` writes
            last_hash = _key_changed(venue_id, head_alg, length, last_hash, keys).hash
        tips[venue_id] = last_hash
    built = [_entry(venue_id, actor, action, obj, data, tips[venue_id], keys) for venue_id in ordered]
    values = [
        field.get_db_prep_save(getattr(entry, field.attname), connection)
        for entry in built
        for field in _ENTRY_FIELDS
    ]
    row = "(" + ", ".join(["%s"] * len(_ENTRY_FIELDS)) + ")"
    sql = _APPEND_ACROSS_SQL.format(
        rows=", ".join([row] * len(built)), tips=", ".join(["(%s::bigint, %s::text)"] * len(built))
    )
    params = [*values, keys.alg, *[part for entry in built for part in (entry.venue_id, entry.hash)]]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids, moved = cursor.fetchone()
    if moved != len(built):  # every head was locked above: a broken invariant
        raise RuntimeError(f"audit: {moved} chain heads moved for {len(built)} entries")
    for entry, pk in zip(built, sorted(ids), strict=True):  # ids in the VALUES' order
        entry.pk = pk
        entry._state.adding, entry._state.db = False, connection.alias
    return built


def _key_changed(
    venue_id: int, head_alg: str, length: int, prev_hash: str, keys: audit_keys.Keyring
) -> AuditEntry:
    """The entry that starts a chain's stretch under the current key (its tip locked by the caller)."""
    return _write(
        venue_id=venue_id,
        actor="system",
        action=KEY_CHANGED,
        obj=Venue(pk=venue_id),  # names the venue, read from nowhere
        data={"from": head_alg, "to": keys.alg, "length": length},
        prev_hash=prev_hash,
        keys=keys,
    )


def _lock_head(venue_id: int, alg: str) -> tuple[str, int, str]:
    """Lock the tip of the venue's chain and return its hash, length and key; the first entry makes it."""
    row = locks.lock_audit_head(venue_id)
    if row is None:
        # A concurrent first entry of the venue finds this row (or makes it first) and waits on its lock.
        AuditChainHead.objects.get_or_create(venue_id=venue_id, defaults={"last_hash": GENESIS, "alg": alg})
        row = locks.lock_audit_head(venue_id)
    assert row is not None
    return row


def _append(entry: AuditEntry) -> None:
    """Write the entry and make it the tip of its venue's chain (the tip is locked by the caller)."""
    if connection.vendor != "postgresql":
        entry.save()
        AuditChainHead.objects.filter(venue_id=entry.venue_id).update(
            last_hash=entry.hash, length=F("length") + 1, alg=entry.alg
        )
        return
    values = [field.get_db_prep_save(getattr(entry, field.attname), connection) for field in _ENTRY_FIELDS]
    with connection.cursor() as cursor:
        cursor.execute(_APPEND_SQL, [*values, entry.hash, entry.alg, entry.venue_id])
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
UPDATE "{_HEAD}" SET last_hash = %s, length = length + 1, alg = %s WHERE venue_id = %s
RETURNING (SELECT id FROM entry)
"""  # noqa: S608 - the models' own table and column names


_APPEND_MANY_SQL = f"""
WITH entries AS (
    INSERT INTO "{AuditEntry._meta.db_table}" (venue_id, alg, actor_id, actor_label, action, object_type,
        object_id, data, created_at, prev_hash, hash)
    SELECT %s, %s, (e->>0)::integer, e->>1, e->>2, e->>3, e->>4, e->5, (e->>6)::timestamptz, e->>7, e->>8
    FROM jsonb_array_elements(%s::jsonb) AS e
    ORDER BY (e->>9)::integer
    RETURNING id
)
UPDATE "{_HEAD}" SET last_hash = %s, length = length + %s, alg = %s WHERE venue_id = %s
RETURNING (SELECT array_agg(id) FROM entries)
"""  # noqa: S608 - the models' own table and column names


# One entry per venue: each chain's tip moved to its own entry's hash.
_APPEND_ACROSS_SQL = f"""
WITH entries AS (
    INSERT INTO "{AuditEntry._meta.db_table}" ({", ".join(f'"{field.column}"' for field in _ENTRY_FIELDS)})
    VALUES {{rows}}
    RETURNING id
), heads AS (
    UPDATE "{_HEAD}" AS head SET last_hash = tips.hash, length = head.length + 1, alg = %s
    FROM (VALUES {{tips}}) AS tips (venue_id, hash)
    WHERE head.venue_id = tips.venue_id
    RETURNING head.venue_id
)
SELECT (SELECT array_agg(id) FROM entries), (SELECT count(*) FROM heads)
"""  # noqa: S608 - the models' own table and column names


@contextmanager
def snapshot() -> Iterator[None]:
    """One consistent view of the database for a verification, however busy the hall.

    PostgreSQL: a REPEATABLE READ, READ ONLY transaction (when this is the outermost one: inside another
    transaction it reads what that one sees). SQLite: the transaction (IMMEDIATE in the settings) holds the
    write lock, so writers wait for the verification.
    """
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


@dataclass(frozen=True)
class ChainCheck:
    ok: bool
    entries: int
    first_bad_id: int | None = None
    first_bad_seq: int | None = None  # the position of the first bad entry in the chain, from 1
    reason: str = ""
    legacy: int = 0  # entries from before the chain was keyed (plain SHA-256)


def _entry_problem(
    entry: AuditEntry, prev: str, prev_alg: str | None, seq: int, keys: audit_keys.Keyring
) -> str:
    """Why ``entry`` (the ``seq``-th of its chain, after an entry hashed ``prev``) is bad, or ''."""
    if entry.prev_hash != prev:
        return "it does not follow the previous entry (an entry before it was removed or inserted)"
    if entry.alg == LEGACY_ALG:
        if prev_alg not in (None, LEGACY_ALG):
            return "an unkeyed (plain SHA-256) entry after keyed ones"
        key = None
    else:
        found = keys.by_alg.get(entry.alg)
        if found is None:
            return f"signed with a key this installation does not hold ({entry.alg})"
        key = found
        if prev_alg is not None and prev_alg != entry.alg:
            change = {"from": prev_alg, "to": entry.alg, "length": seq - 1}
            if entry.action != KEY_CHANGED or entry.data != change:
                return "the key changes without a key-change entry"
    if _digest(prev, _fields(entry), key) != entry.hash:
        return "its content does not match its hash (edited)"
    return ""


def verify_chain(venue_id: int, anchor: Anchor | None = None) -> ChainCheck:
    """Recompute the venue's chain in one snapshot; report the first entry that is wrong and why.

    ``anchor`` is the latest head published outside the database: the chain must reach it, with the same
    hash at that length (a cut tail or a wiped chain fails here).
    """
    keys = audit_keys.keyring()
    prev, prev_alg = GENESIS, None
    count = legacy = 0

    def bad(entry_id: int | None, seq: int | None, reason: str) -> ChainCheck:
        return ChainCheck(False, count, entry_id, seq, reason, legacy)

    with snapshot():
        entries = AuditEntry.objects.filter(venue_id=venue_id).order_by("pk")
        for entry in entries.iterator(chunk_size=2000):
            seq = count + 1
            problem = _entry_problem(entry, prev, prev_alg, seq, keys)
            if problem:
                return bad(entry.pk, seq, f"entry {seq} (id {entry.pk}): {problem}")
            if anchor is not None and seq == anchor.seq and entry.hash != anchor.hash:
                why = f"is not the one anchored on {anchor.at} (the chain was rewritten)"
                return bad(entry.pk, seq, f"entry {seq} (id {entry.pk}) {why}")
            prev, prev_alg = entry.hash, entry.alg
            legacy += entry.alg == LEGACY_ALG
            count = seq
        head = AuditChainHead.objects.filter(venue_id=venue_id).first()
    if anchor is not None and count < anchor.seq:
        why = f"but was anchored at {anchor.seq} on {anchor.at}: entries were removed"
        return bad(None, count + 1, f"the chain has {count} entries {why}")
    if head is None and count:
        return bad(None, None, "the chain's head row is missing")
    if head is not None and (head.last_hash != prev or head.length != count):
        return bad(
            None,
            count + 1,
            f"the head says {head.length} entries ending {head.last_hash[:12]}, the chain has {count} "
            f"ending {prev[:12]} (entries removed after the last one, or the head edited)",
        )
    return ChainCheck(True, count, legacy=legacy)
