"""Who did it: the acting user, or a label for a device or the system ("gateway", "beat", "table-3")."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

# Every service takes one; the audit entry keeps the user (when there is one) and `actor_label(actor)`.
Actor = User | AnonymousUser | str | None


def actor_label(actor: Actor) -> str:
    if actor is None:
        return "system"
    if isinstance(actor, str):
        return actor
    return str(actor.get_username() or "anonymous")
