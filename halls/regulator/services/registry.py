"""The node's registry of installations: each registered with its public key (its anchors' Ed25519 key,
`manage.py feed_identity` on the installation prints it). Registering a known id again updates its name,
licence, jurisdiction and window; its key only when asked (a new key is the authority's decision)."""

from __future__ import annotations

import re
from decimal import Decimal

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import anchor_lines
from halls.errors import Conflict, InvalidInput
from halls.regulator.models import Installation, InstallationKind

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
        if found is None:
            return Installation.objects.create(
                uid=uid, public_key=key_hex, registered_at=timezone.now(), **fields
            )
        if found.public_key != key_hex and not replace_key:
            raise Conflict(
                _("Installation %(uid)s is registered with another key.") % {"uid": uid}, code="other_key"
            )
        for attribute, value in {**fields, "public_key": key_hex}.items():
            setattr(found, attribute, value)
        found.save()
        return found
