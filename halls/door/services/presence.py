"""Who is inside the hall (issue 27): the admitted visits of the venue's door day, less those who left.

The door's day runs from HALL_DOOR_DAY_START_HOUR (6:00 by default, a setting per jurisdiction in
HALL_DOOR_BY_JURISDICTION as "day_start_hour") of the venue's local time to the same hour the next day, so
a hall open past midnight keeps counting the people it admitted before it. `record_exit` records a person
leaving: the same document scanned at the exit matches the digest of their admitted visit of the day that
is still open, and marks it left (audited, ids only). Idempotent: a second scan answers the visit already
marked, writing nothing. `presence` is the live count, published on the venue's door stream after each
visit and exit (`emit_presence`: counts only); `recent_visits` a door's last decisions (no
document, no digest: the time, the decision, the register that listed, whether by override, whether left).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from halls import events
from halls.actors import Actor
from halls.cashier.models import Player
from halls.door.documents import Document, keyed_digest
from halls.door.models import Decision, Visit
from halls.door.services.doorday import door_day, door_stream
from halls.door.services.registers import register_key
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType
from halls.models import Venue
from halls.services import audit, venueclock


def _admitted_today(venue: Venue, at: datetime) -> Q:
    _day, start, end = door_day(venue, at)
    return Q(venue=venue, decision=Decision.ADMITTED, at__gte=start, at__lt=end)


@dataclass(frozen=True, slots=True)
class Presence:
    day: date
    admitted: int  # admitted visits of the door day
    left: int  # of them, recorded as leaving

    @property
    def inside(self) -> int:
        return self.admitted - self.left


def presence(venue: Venue, at: datetime | None = None) -> Presence:
    """The live count of the venue's door day (two counts, one query each)."""
    at = at or venueclock.now(venue.pk)
    day, _start, _end = door_day(venue, at)
    admitted = Visit.objects.filter(_admitted_today(venue, at))
    return Presence(day=day, admitted=admitted.count(), left=admitted.filter(left_at__isnull=False).count())


def admitted_visit(
    venue: Venue, digest: bytes, *, at: datetime | None = None, inside: bool = False
) -> Visit | None:
    """The latest admitted visit of the door day of the person whose document has this keyed digest (with
    ``inside``: only one not recorded as leaving), or None: "admitted today" for the cards and terminals."""
    at = at or venueclock.now(venue.pk)
    found = Visit.objects.filter(_admitted_today(venue, at), digest=digest)
    if inside:
        found = found.filter(left_at__isnull=True)
    return found.order_by("-at", "-pk").first()


def emit_presence(venue: Venue, at: datetime | None = None) -> Presence:
    """The count after a visit or an exit, in the caller's transaction, published once it commits."""
    count = presence(venue, at)
    events.emit(
        door_stream(venue.pk),
        EventType.DOOR_PRESENCE,
        {
            "day": count.day.isoformat(),
            "admitted": count.admitted,
            "left": count.left,
            "inside": count.inside,
        },
    )
    return count


@dataclass(frozen=True, slots=True)
class Exit:
    visit: Visit
    replayed: bool  # the person was already recorded as leaving: nothing written


def record_exit(*, venue: Venue, door: str, document: Document, actor: Actor) -> Exit:
    """The person of ``document`` leaves: their open admitted visit of the door day is marked left.

    A second scan answers the visit already marked (replayed). Refused with nothing written: a blank door
    name, a document admitted nowhere today (409 not_admitted_today)."""
    door = door.strip()
    if not door or len(door) > 60:
        raise InvalidInput(_("Name the door (at most 60 characters)."), code="bad_door")
    digest = keyed_digest(register_key(), document)
    now = venueclock.now(venue.pk)
    today = Visit.objects.filter(_admitted_today(venue, now), digest=digest)
    open_visit = today.filter(left_at__isnull=True).order_by("-at", "-pk").first()
    if open_visit is not None:
        with transaction.atomic():
            # Compare-and-swap: of two scans at once, one marks the visit, the other finds it marked.
            marked = Visit.objects.filter(pk=open_visit.pk, left_at__isnull=True).update(
                left_at=now, left_door=door
            )
            if marked:
                open_visit.left_at, open_visit.left_door = now, door
                # Gone out: their cards wait for the next admission (halls.cashier.services.admitted).
                if open_visit.player_id is not None:
                    Player.objects.filter(pk=open_visit.player_id, admitted_until__gt=now).update(
                        admitted_until=now
                    )
                audit.record(
                    venue_id=venue.pk,
                    actor=actor,
                    action="door.left",
                    obj=open_visit,
                    data={"door": door, "admitted_at": open_visit.at.isoformat()},
                )
                emit_presence(venue, now)
                return Exit(open_visit, replayed=False)
    left = today.filter(left_at__isnull=False).order_by("-left_at", "-pk").first()
    if left is None:
        raise Conflict(
            _("Nobody was admitted today with this document: there is no visit to close."),
            code="not_admitted_today",
        )
    return Exit(left, replayed=True)


@dataclass(frozen=True, slots=True)
class RecentVisit:
    visit_id: int
    at: datetime
    decision: str
    register: str | None  # the code of the register that listed the person (never its reason)
    override: bool
    left_at: datetime | None


def recent_visits(venue: Venue, *, door: str = "", limit: int = 12) -> list[RecentVisit]:
    """The last decisions of the door day (of ``door`` when named), newest first: no document shown."""
    at = venueclock.now(venue.pk)
    _day, start, end = door_day(venue, at)
    found = Visit.objects.filter(venue=venue, at__gte=start, at__lt=end)
    if door.strip():
        found = found.filter(door=door.strip())
    rows = found.select_related("register").order_by("-at", "-pk")[:limit]
    return [
        RecentVisit(
            visit_id=v.pk,
            at=v.at,
            decision=v.decision,
            # The register that listed the person, by its file or online (Visit.register: set either way).
            register=v.register.code if v.register is not None else None,
            override=v.override,
            left_at=v.left_at,
        )
        for v in rows
    ]
