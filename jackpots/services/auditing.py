"""The pool services' audit: the venues a pool's entries go to, and the fingerprint a settlement keeps."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from halls.actors import Actor
from halls.services import audit
from jackpots.models import Pool


def audit_venue_ids(pool: Pool) -> list[int]:
    """A venue pool audits in its venue's chain; a network pool in every member venue's, in id order."""
    if pool.venue_id is not None:
        return [pool.venue_id]
    assert pool.network_id is not None
    return sorted(pool.network.venues.values_list("pk", flat=True))  # type: ignore[union-attr]


def record(pool: Pool, actor: Actor, action: str, obj: Any, data: Mapping[str, Any]) -> None:
    """One audit entry for the pool, in every chain `audit_venue_ids` names, in the caller's transaction."""
    audit.record_across(
        venue_ids=audit_venue_ids(pool), actor=actor, action=action, obj=obj, data={"pool": pool.pk, **data}
    )


def fingerprint(data: Any) -> str:
    """The SHA-256 of `data` as canonical JSON (sorted keys, no blanks)."""
    text = json.dumps(data, cls=DjangoJSONEncoder, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
