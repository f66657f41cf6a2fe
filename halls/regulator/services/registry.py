"""The node's registry of installations: each registered with its public key (its anchors' Ed25519 key,
`manage.py feed_identity` on the installation prints it). Registering a known id again updates its name,
licence, jurisdiction and window; its key only when asked (a new key is the authority's decision). Every
change is recorded with who made it and the fields before and after (RegistryChange, append-only); a
registration that changes nothing records nothing."""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import anchor_lines
from halls.errors import Conflict, InvalidInput
from halls.regulator.models import Installation, InstallationKind, RegistryAction, RegistryChange

_UID = re.compile(r"[0-9a-f]{16}")


def register(
    *,
    uid: str,
    name: str,
    kind: str,
    licence_number: str,
    jurisdiction: str,
    public_key: str,
    silence_seconds: int = 0,
    latitude: Decimal | None = None,
    longitude: Decimal | None = None,
    replace_key: bool = False,
    actor: str,
) -> Installation:
    """Register (or update) an installation of the region; InvalidInput naming what is wrong."""
    if not _UID.fullmatch(uid):
        raise InvalidInput(_("An installation id is 16 hex digits."), code="bad_installation_id")
    if kind not in InstallationKind.values:
        raise InvalidInput(_("An installation is a venue or a network central."), code="bad_kind")
    if kind == InstallationKind.VENUE and not licence_number:
        raise InvalidInput(_("A venue is registered with its licence number."), code="licence_required")
    if not name.strip() or not jurisdiction.strip():
        raise InvalidInput(_("An installation needs a name and a jurisdiction."), code="name_required")
    try:
        key_hex = anchor_lines.raw_public(anchor_lines.public_key(public_key)).hex()
    except ValueError:
        raise InvalidInput(
            _("The public key is 64 hex digits (or its key document)."), code="bad_public_key"
        ) from None
    if silence_seconds < 0:
        raise InvalidInput(_("The silence window is a number of seconds."), code="bad_window")
    fields = {
        "name": name.strip(),
        "kind": kind,
        "licence_number": licence_number,
        "jurisdiction": jurisdiction.strip().upper(),
        "silence_seconds": silence_seconds,
        "latitude": latitude,
        "longitude": longitude,
    }
    with transaction.atomic():
        found = Installation.objects.select_for_update().filter(uid=uid).first()
        now = timezone.now()
        if found is None:
            made = Installation.objects.create(uid=uid, public_key=key_hex, registered_at=now, **fields)
            _record(made, RegistryAction.REGISTERED, actor, now, {}, _state(made))
            return made
        if found.public_key != key_hex and not replace_key:
            raise Conflict(
                _("Installation %(uid)s is registered with another key.") % {"uid": uid}, code="other_key"
            )
        before = _state(found)
        for attribute, value in {**fields, "public_key": key_hex}.items():
            setattr(found, attribute, value)
        after = _state(found)
        if after != before:
            found.save()
            action = RegistryAction.KEY_REPLACED if after["public_key"] != before["public_key"] else None
            _record(found, action or RegistryAction.UPDATED, actor, now, before, after)
        return found


_RECORDED = ("name", "kind", "licence_number", "jurisdiction", "public_key", "silence_seconds")


def _state(installation: Installation) -> dict[str, object]:
    """What a registry change records of an installation (its coordinates as text)."""
    state: dict[str, object] = {name: getattr(installation, name) for name in _RECORDED}
    for name in ("latitude", "longitude"):
        value = getattr(installation, name)
        state[name] = None if value is None else str(Decimal(value).normalize())
    return state


def _record(
    installation: Installation,
    action: str,
    actor: str,
    at: datetime,
    before: dict[str, object],
    after: dict[str, object],
) -> None:
    changed = {k: v for k, v in after.items() if before.get(k) != v}
    RegistryChange.objects.create(
        installation=installation,
        action=action,
        actor=actor[:150],
        at=at,
        before={k: before[k] for k in changed if k in before},
        after=changed,
    )
