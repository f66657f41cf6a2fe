"""The hash-chained audit log: one chain per venue, appended inside the caller's transaction."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
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
    """Append one entry to the venue's chain. Must run inside the service's transaction."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit.record must run inside a transaction")
    AuditChainHead.objects.get_or_create(venue_id=venue_id, defaults={"last_hash": GENESIS})
    head = AuditChainHead.objects.select_for_update().get(venue_id=venue_id)
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
        prev_hash=head.last_hash,
    )
    entry.hash = _digest(head.last_hash, _fields(entry))
    entry.save()
    head.last_hash = entry.hash
    head.length += 1
    head.save(update_fields=["last_hash", "length"])
    return entry


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
