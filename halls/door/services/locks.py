"""The door's locks, each through its rank (halls.locks)."""

from __future__ import annotations

from halls.door.models import Register
from halls.locks import Rank, take


def lock_register(register_id: int) -> Register:
    """The register FOR UPDATE: one version loaded at a time, the current one replaced under it."""
    take(Rank.REGISTER, register_id)
    return Register.objects.select_for_update(of=("self",)).get(pk=register_id)
