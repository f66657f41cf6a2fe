"""The portal's tests: installations registered on the node with their keys, and messages accepted as the
intake accepts them (stored once, in order, signed; the derived alarms checked in the same transaction; the
portal told after commit), plus anchor lines signed as an installation signs them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.utils import timezone

from halls import anchor_lines
from halls.feed import envelope
from halls.regulator.authority import AUTHORITY_GROUP
from halls.regulator.models import FeedMessage, Installation, InstallationKind
from halls.regulator.services import derived, live, livemodel


@dataclass
class Sender:
    installation: Installation
    key: Ed25519PrivateKey

    @property
    def uid(self) -> str:
        return self.installation.uid


def register(
    name: str,
    *,
    uid: str,
    kind: str = InstallationKind.VENUE,
    licence: str = "",
    jurisdiction: str = "ML",
    latitude: str | None = "35.2923",
    longitude: str | None = "-2.9381",
    key: Ed25519PrivateKey | None = None,
) -> Sender:
    key = key or Ed25519PrivateKey.generate()
    installation = Installation.objects.create(
        uid=uid,
        name=name,
        kind=kind,
        licence_number=licence,
        jurisdiction=jurisdiction,
        public_key=anchor_lines.raw_public(key.public_key()).hex(),
        latitude=Decimal(latitude) if latitude else None,
        longitude=Decimal(longitude) if longitude else None,
        registered_at=timezone.now(),
    )
    return Sender(installation, key)


def accept(sender: Sender, kind: str, payload: dict[str, Any], *, at: datetime | None = None) -> FeedMessage:
    """The next message of `sender`, accepted as the intake does: stored in order, the derived alarms
    checked and the live read model moved in its transaction, the portal told once it committed."""
    at = at or timezone.now()
    with transaction.atomic():
        installation = Installation.objects.select_for_update().get(pk=sender.installation.pk)
        sequence = installation.accepted_sequence + 1
        signed = envelope.sign(
            envelope.Envelope(installation.uid, sequence, kind, at.isoformat(), payload), sender.key
        )
        message = FeedMessage.objects.create(
            installation=installation,
            sequence=sequence,
            kind=kind,
            at=at,
            payload=payload,
            signature=signed.signature,
            received_at=timezone.now(),
        )
        Installation.objects.filter(pk=installation.pk).update(
            accepted_sequence=sequence, last_message_at=timezone.now()
        )
        derived.check(message)
        livemodel.apply(installation, [message])
        transaction.on_commit(lambda: live.published([message]))
    sender.installation.refresh_from_db()
    return message


def anchor_line(
    sender: Sender, *, kind: str = "venue", chain: int = 1, seq: int, hash_: str = ""
) -> dict[str, Any]:
    body = {
        "v": 3,
        "inst": sender.uid,
        "kind": kind,
        "id": chain,
        "seq": seq,
        "hash": hash_ or hashlib.sha256(f"{kind}-{chain}-{seq}".encode()).hexdigest(),
        "at": "2026-12-06T20:00:00+00:00",
    }
    return anchor_lines.sign(body, sender.key)


def anchor_payload(sender: Sender, lines: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "key_id": anchor_lines.key_id(sender.key.public_key()),
        "lines": lines,
        "chains": [
            {"chain": f"{line['kind']}-{line['id']}", "head": line["hash"], "length": line["seq"]}
            for line in lines
        ],
    }


def authority_user(username: str = "inspectora") -> User:
    user = get_user_model().objects.create_user(username=username, password="pw-" + username)
    group, _ = Group.objects.get_or_create(name=AUTHORITY_GROUP)
    user.groups.add(group)
    return user
