"""Central side: each venue's credential on the link: issued (the secret shown once), rotated (the old one
works for a grace, then is refused), revoked; and the check of every request and socket against them.

A secret is 32 random bytes (256 bits), so a salted SHA-256 is enough to keep it out of the database: a
slow password hash protects guessable secrets, and this one is checked on every request of the link.

Each process keeps the credentials it verified (issue 30: the check read the database on every request of
every venue), keyed by the key and a digest of the presented secret (never the secret), for at most
HALL_LINK_CREDENTIAL_CACHE_SECONDS (0: no cache). An entry counts only while the shared cache's credential
generation is the one read before it was verified: `rotate` and `revoke` draw a new generation when they
commit (and forget the entries of their own process at once), so every process reads the database again at
its first request once it reads the generation (at most GENERATION_READ_SECONDS, half a second, later).
Without the shared cache (Redis down) nothing is kept: every request reads the database.
A refused credential is never kept. A kept one still carries its grace's end, checked on every request.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
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

log = logging.getLogger("hall.link")


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
        _changed()
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
        _changed()
        audit.record(
            venue_id=venue.pk, actor=actor, action="link.credential_revoked", obj=venue, data={"keys": keys}
        )
    return len(keys)


def authenticate(*, key: str, secret: str) -> int:
    """The central's id of the venue whose credential this is, or BadCredential / RevokedCredential.
    Reads only: a refused request writes nothing. A credential this process verified lately is not read
    again (see the module's text)."""
    ttl = settings.HALL_LINK_CREDENTIAL_CACHE_SECONDS
    if ttl <= 0 or not key:
        return _stored(key, secret).venue_id
    presented = (key, hashlib.sha256(secret.encode()).digest())
    generation = _generation()  # read BEFORE the database: a change committed after it is seen next time
    if generation is None:
        return _stored(key, secret).venue_id
    kept = _verified.get(presented)
    if (
        kept is not None
        and kept.generation == generation
        and time.monotonic() < kept.until
        and (kept.expires_at is None or kept.expires_at > timezone.now())
    ):
        return kept.venue_id
    credential = _stored(key, secret)
    with _verified_lock:
        if len(_verified) >= _VERIFIED_MAX:
            _verified.clear()
        _verified[presented] = _Verified(
            credential.venue_id, credential.expires_at, time.monotonic() + ttl, generation
        )
    return credential.venue_id


def _stored(key: str, secret: str) -> VenueCredential:
    """The credential read from the database and checked: working, or BadCredential / RevokedCredential."""
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
    return credential


# --- the process's verified credentials -----------------------------------------------------------------


@dataclass(frozen=True)
class _Verified:
    venue_id: int
    expires_at: datetime | None  # the grace's end of a rotated credential
    until: float  # time.monotonic() after which the database is read again
    generation: str  # the shared generation read before it was verified


_VERIFIED_MAX = 10_000  # entries kept at most (a venue has one or two credentials)
GENERATION_KEY = "link.credentials.generation"
_verified: dict[tuple[str, bytes], _Verified] = {}
_verified_lock = threading.Lock()


GENERATION_READ_SECONDS = 0.5  # the shared generation read at most this often by a process
_read: list[tuple[float, str | None]] = []  # the last read: (time.monotonic(), generation)


def _generation() -> str | None:
    """The credentials' generation in the shared cache (drawn afresh when missing: a restarted Redis), read
    at most every GENERATION_READ_SECONDS (a Redis client per read costs about what the database read
    did), or None when the cache cannot be read (then nothing is kept)."""
    now = time.monotonic()
    last = _read[-1] if _read else None
    if last is not None and now - last[0] < GENERATION_READ_SECONDS:
        return last[1]
    try:
        found = cache.get(GENERATION_KEY)
        if found is None:
            cache.add(GENERATION_KEY, secrets.token_hex(8), timeout=None)
            found = cache.get(GENERATION_KEY)
    except Exception:  # the cache's errors are its backend's own (redis-py's); the database still answers
        log.warning("the shared cache cannot be read: link credentials are read from the database")
        found = None
    generation = str(found) if found is not None else None
    _read[:] = [(now, generation)]
    return generation


def forget_verified() -> None:
    """This process keeps no verified credential (the next request of each venue reads the database and
    the shared generation)."""
    with _verified_lock:
        _verified.clear()
        _read.clear()


def _new_generation() -> None:
    forget_verified()
    try:
        cache.set(GENERATION_KEY, secrets.token_hex(8), timeout=None)
    except Exception:  # the other processes read the database again within HALL_LINK_CREDENTIAL_CACHE_SECONDS
        log.error("the link credentials' generation could not be renewed in the shared cache", exc_info=True)


def _changed() -> None:
    """A credential changed in this transaction: this process forgets what it verified now, and every
    process once it commits (a new generation; a process that verified in between read the old rows under
    the old generation, so it reads them again too)."""
    forget_verified()
    transaction.on_commit(_new_generation, robust=True)


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
