"""Central side: each venue's credential on the link: issued (the secret shown once), rotated (the old one
works for a grace, then is refused), revoked; and the check of every request and socket against them.

A secret is 32 random bytes (256 bits), so a salted SHA-256 is enough to keep it out of the database: a
slow password hash protects guessable secrets, and this one is checked on every request of the link.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from halls.actors import Actor
from halls.errors import DomainError
from halls.link.kinds import LinkKind
from halls.link.models import VenueCredential
from halls.link.services import streams
from halls.link.services.reach import venue_stream
from halls.models import Venue
from halls.services import audit
from halls.services.locks import lock_venue


class BadCredential(DomainError):
    """A key unknown here or a secret that does not match it (which, is not said)."""

    status = 401
    default_code = "bad_credential"


class RevokedCredential(DomainError):
    status = 401
    default_code = "revoked_credential"


@dataclass(frozen=True)
class Issued:
    venue_id: int
    key: str
    secret: str  # shown once: only its salted hash is kept


def _hash(secret: str, salt: str) -> str:
    return hashlib.sha256(f"{salt}${secret}".encode()).hexdigest()


def _new(venue: Venue) -> tuple[VenueCredential, str]:
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(8)
    credential = VenueCredential.objects.create(
        venue=venue, key=f"lk_{secrets.token_hex(10)}", secret_hash=f"sha256${salt}${_hash(secret, salt)}"
    )
    return credential, secret


def _live(venue: Venue) -> Q:
    return Q(venue=venue, revoked_at__isnull=True) & (
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())
    )


def issue(*, venue: Venue, actor: Actor) -> Issued:
    """A first credential for the venue. Refused if it already has a working one (rotate it instead)."""
    with transaction.atomic():
        lock_venue(venue.pk)
        if VenueCredential.objects.filter(_live(venue)).exists():
            raise DomainError(
                _("%(venue)s already has a link credential: rotate or revoke it.") % {"venue": venue.name},
                code="credential_exists",
            )
        credential, secret = _new(venue)
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="link.credential_issued",
            obj=credential,
            data={"key": credential.key},
        )
    return Issued(venue.pk, credential.key, secret)


def rotate(*, venue: Venue, actor: Actor, grace: timedelta | None = None) -> Issued:
    """A new credential; the venue's working ones keep working for `grace` (HALL_LINK_ROTATION_GRACE_SECONDS
    by default), time for the venue's settings to change, then are refused. The venue is told (NOTICE)."""
    grace = grace if grace is not None else timedelta(seconds=settings.HALL_LINK_ROTATION_GRACE_SECONDS)
    with transaction.atomic():
        lock_venue(venue.pk)
        until = timezone.now() + grace
        old = list(VenueCredential.objects.filter(_live(venue)).values_list("key", flat=True))
        VenueCredential.objects.filter(_live(venue)).filter(
            Q(expires_at__isnull=True) | Q(expires_at__gt=until)
        ).update(expires_at=until)
        credential, secret = _new(venue)
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="link.credential_rotated",
            obj=credential,
            data={"key": credential.key, "old_keys": old, "old_valid_until": until.isoformat()},
        )
        streams.append(
            stream=venue_stream(venue.pk),
            kind=LinkKind.NOTICE,
            payload={
                "level": "warning",
                "text": _("The link credential was rotated: the old one works until %(until)s.")
                % {"until": until.isoformat(timespec="seconds")},
            },
        )
    return Issued(venue.pk, credential.key, secret)


def revoke(*, venue: Venue, actor: Actor) -> int:
    """Every credential of the venue refused from now on (its socket is closed at its next check).
    Returns how many were revoked."""
    with transaction.atomic():
        lock_venue(venue.pk)
        keys = list(
            VenueCredential.objects.filter(venue=venue, revoked_at__isnull=True).values_list("key", flat=True)
        )
        VenueCredential.objects.filter(key__in=keys).update(revoked_at=timezone.now())
        audit.record(
            venue_id=venue.pk, actor=actor, action="link.credential_revoked", obj=venue, data={"keys": keys}
        )
    return len(keys)


def authenticate(*, key: str, secret: str) -> int:
    """The central's id of the venue whose credential this is, or BadCredential / RevokedCredential.
    Reads only: a refused request writes nothing."""
    credential = VenueCredential.objects.filter(key=key).first() if key else None
    if credential is None:
        hmac.compare_digest(secret, secret)  # no shortcut for unknown keys worth timing
        raise BadCredential(_("Unknown link credential."))
    _alg, salt, digest = credential.secret_hash.split("$", 2)
    if not hmac.compare_digest(_hash(secret, salt), digest):
        raise BadCredential(_("Unknown link credential."))
    now = timezone.now()
    if credential.revoked_at is not None:
        raise RevokedCredential(
            _("This link credential was revoked."), revoked_at=credential.revoked_at.isoformat()
        )
    if credential.expires_at is not None and credential.expires_at <= now:
        raise RevokedCredential(
            _("This link credential was replaced and its grace is over."),
            expired_at=credential.expires_at.isoformat(),
        )
    return credential.venue_id


SCHEME = "link"


def header(key: str, secret: str) -> str:
    """The Authorization header of a venue's requests and socket."""
    return f"Link {key}:{secret}"


def from_header(authorization: str) -> int:
    """The central's id of the venue whose credential an ``Authorization: Link <key>:<secret>`` carries."""
    scheme, _space, credential = authorization.partition(" ")
    key, _colon, secret = credential.strip().partition(":")
    if scheme.lower() != SCHEME or not key or not secret:
        raise BadCredential(_("Send the venue's credential: “Authorization: Link <key>:<secret>”."))
    return authenticate(key=key, secret=secret)
