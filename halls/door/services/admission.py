"""The door's decision and its visit log (issue 27): who is admitted, and the record of every visit.

`admit` decides, in this order: prohibited (a register in force for the venue lists the document:
halls.door.services.registers.check_document), self-excluded at this venue, a minor (younger than the
jurisdiction's adult age on the venue's local date), else admitted; every decision is a `Visit` (venue, door,
when, who decided, the register version that decided, whether every register in force was readable) with the
document's keyed digest kept only until the retention date, then cleared by `purge_visits` (a beat task),
leaving the counts `visits_per_day` reads. `admit_once` is the same decision for the door's page and devices:
an idempotency key makes a retry answer the first visit, writing nothing twice; an override (a document the
door cannot read, `override_document`) needs a second member of staff who confirmed with their own password
(checked by the door with Django's authenticate; here: someone else, of the venue's operator or door staff),
and still decides prohibited, self-excluded and minor; the override is recorded as a four-eyes decision
(halls.services.proposals.record_decided: both names in the audit alike). An admission is the venue's player
record (halls.door.services.players.admitted_player: the one the cashier's cards point to); a refusal as
prohibited or self-excluded of a known player, and a self-exclusion, withdraw their admission and block their
cards (players.withdraw_*); the purge also unlinks a visit from its player. `self_exclude` records a person's
own self-exclusion at the venue, never shortened nor lifted before its term, and queues it for the gaming
authority in the link's outbox (its authority destination) in the same transaction.

Audit rows carry ids, the decision and counts, never a document, a digest, a name or a birth date.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import access
from halls.actors import Actor, actor_label
from halls.door.documents import (
    Document,
    Problem,
    Refusal,
    age_on,
    keyed_digest,
    lenient_document,
    read_document,
    read_kind,
    tail,
)
from halls.door.models import Decision, SelfExclusion, Visit
from halls.door.services import players
from halls.door.services.presence import emit_presence
from halls.door.services.proposal_kinds import OVERRIDE
from halls.door.services.registers import check_document, register_key
from halls.door.texts import document_problem
from halls.errors import Conflict, InvalidInput, PermissionDenied
from halls.link.kinds import LinkKind
from halls.link.models import Destination, OutboxMessage
from halls.link.services import outbox
from halls.models import Role, Venue
from halls.services import audit, locks, proposals, venueclock

log = logging.getLogger(__name__)


# --- settings per jurisdiction --------------------------------------------------------------------------


def _setting(venue: Venue, name: str, default: int) -> int:
    overrides = settings.HALL_DOOR_BY_JURISDICTION.get(venue.jurisdiction, {})
    return int(overrides.get(name, default))


def adult_age(venue: Venue) -> int:
    """The age from which the venue admits a person (its jurisdiction's; 18 by default)."""
    return _setting(venue, "adult_age", settings.HALL_DOOR_ADULT_AGE)


def retention(venue: Venue) -> timedelta:
    """How long a visit keeps the person's document digest (its jurisdiction's; 30 days by default)."""
    return timedelta(days=_setting(venue, "visit_retention_days", settings.HALL_DOOR_VISIT_RETENTION_DAYS))


# --- reading what a person shows ------------------------------------------------------------------------


def digest_of(document: Document) -> bytes:
    """The document's keyed digest under the register key: how the venue's player of it is found."""
    return keyed_digest(register_key(), document)


def document_from(kind: str, number: str, country: str = "") -> Document:
    """The document a person shows, checked, or a refusal naming the problem (never the number)."""
    found = read_document(kind, number, country)
    if isinstance(found, Refusal):
        raise InvalidInput(document_problem(found.problem), code=found.problem.value)
    return found


def override_document(kind: str, number: str, country: str = "") -> Document:
    """What the override digests: only a document the door cannot read (`read_document` refuses it) of
    one of the kinds it knows, its number as typed (normalized). A readable document is admitted the usual
    way (409 override_not_needed); an unknown kind, or no number, is refused (400)."""
    found = read_document(kind, number, country)
    if isinstance(found, Document):
        raise Conflict(
            _("The document reads well: admit the person without an override."), code="override_not_needed"
        )
    if found.problem is Problem.UNKNOWN_KIND:
        raise InvalidInput(document_problem(found.problem), code=found.problem.value, field="kind")
    read = read_kind(kind)
    assert read is not None  # a known kind, else the refusal above
    lenient = lenient_document(read, number, country)
    if isinstance(lenient, Refusal):
        raise InvalidInput(
            _("Type the document's number as it is printed (letters and digits)."),
            code="override_no_number",
            field="number",
        )
    return lenient


def _local_day(venue: Venue, instant: datetime) -> date:
    return timezone.localtime(instant, ZoneInfo(venue.time_zone)).date()


def _user(actor: Actor) -> User | None:
    return actor if isinstance(actor, User) else None


# --- the decision ---------------------------------------------------------------------------------------


KEY_LENGTH = 64


@dataclass(frozen=True, slots=True)
class Admission:
    visit: Visit
    replayed: bool  # a retry of the same idempotency key: the first visit, nothing written


def admit(
    *,
    venue: Venue,
    door: str,
    document: Document,
    birth_date: date,
    actor: Actor,
    at: datetime | None = None,
) -> Visit:
    """Decide whether the person enters, record the visit, and return it (refusals are visits too).

    Refused with nothing written: a blank door name, a birth date after the venue's local date."""
    return admit_once(
        venue=venue, door=door, document=document, birth_date=birth_date, actor=actor, at=at
    ).visit


def _idempotency_key(value: str | None) -> str | None:
    if value is None:
        return None
    key = value.strip()
    if not key or len(key) > KEY_LENGTH:
        raise InvalidInput(
            _("The idempotency key is 1 to %(length)s characters.") % {"length": KEY_LENGTH},
            code="bad_idempotency_key",
            field="idempotency_key",
        )
    return key


def _replay(venue: Venue, key: str, door: str, digest: bytes) -> Admission | None:
    """The visit a key already recorded (the same person at the same door), or None; another person or
    door under the same key is refused (idempotency_key_reused), nothing written."""
    found = Visit.objects.filter(venue=venue, idempotency_key=key).first()
    if found is None:
        return None
    if found.door != door or (found.digest is not None and bytes(found.digest) != digest):
        raise Conflict(
            _("This idempotency key was sent with another admission: send a new key for a new person."),
            code="idempotency_key_reused",
            field="idempotency_key",
        )
    return Admission(found, replayed=True)


def _check_confirmation(venue: Venue, actor: Actor, confirmed_by: User | None) -> User:
    """The second person of an override: present, someone other than who admits, the venue's operator or
    door staff (they confirmed with their own password at the door: the caller checked it)."""
    if confirmed_by is None:
        raise InvalidInput(
            _(
                "An override needs a second person: another member of staff types their own username and "
                "password."
            ),
            code="second_person_required",
        )
    if isinstance(actor, User) and confirmed_by.pk == actor.pk:
        raise InvalidInput(
            _("The second person must be someone else: you cannot confirm your own override."),
            code="second_person_same",
        )
    if not access.write_roles_in(confirmed_by, venue.pk).intersection({Role.OPERATOR, Role.DOOR}):
        raise PermissionDenied(
            _("The second person must be the venue's operator or door staff."),
            code="second_person_not_allowed",
        )
    return confirmed_by


def admit_once(
    *,
    venue: Venue,
    door: str,
    document: Document,
    birth_date: date,
    actor: Actor,
    at: datetime | None = None,
    idempotency_key: str | None = None,
    override: bool = False,
    confirmed_by: User | None = None,
) -> Admission:
    """`admit`, once per idempotency key (a retry answers the first visit, replayed), and by override
    (`override_document`'s document, confirmed by a second person: `_check_confirmation`)."""
    door = door.strip()
    if not door or len(door) > 60:
        raise InvalidInput(_("Name the door (at most 60 characters)."), code="bad_door")
    key = _idempotency_key(idempotency_key)
    second = _check_confirmation(venue, actor, confirmed_by) if override else None
    at = at or venueclock.now(venue.pk)
    day = _local_day(venue, at)
    age = age_on(birth_date, day)
    if isinstance(age, Refusal):
        raise InvalidInput(document_problem(Problem.BIRTH_IN_FUTURE), code=Problem.BIRTH_IN_FUTURE.value)
    digest = keyed_digest(register_key(), document)
    if key is not None and (replay := _replay(venue, key, door, digest)) is not None:
        return replay
    check = check_document(venue=venue, document=document, online=True)
    listed_on = check.listed_on
    if listed_on is not None:
        decision = Decision.PROHIBITED
    elif SelfExclusion.objects.filter(venue=venue, digest=digest, since__lte=day, until__gte=day).exists():
        decision = Decision.SELF_EXCLUDED
    elif age < adult_age(venue):
        decision = Decision.MINOR
    else:
        decision = Decision.ADMITTED
    try:
        with transaction.atomic():
            # An admission is the venue's player of this document (made if new), admitted for the day.
            player = (
                players.admitted_player(venue=venue, digest=digest, at=at)
                if decision == Decision.ADMITTED
                else None
            )
            visit = Visit.objects.create(
                venue=venue,
                door=door,
                at=at,
                decided_by=_user(actor),
                decided_by_label=actor_label(actor)[:150],
                decision=decision,
                register_version_id=check.decided_by_version,
                register_id=listed_on.register_id if listed_on is not None else None,
                consultation=check.consultation,
                registers_readable=not check.unreadable,
                digest=digest,
                player=player,
                keep_until=at + retention(venue),
                idempotency_key=key,
                override=override,
                confirmed_by=second,
                confirmed_by_label=actor_label(second)[:150] if second is not None else "",
            )
            # A known player refused as barred: their admission withdrawn and cards blocked (the door alerted
            # if they were inside), before the visit's audit row.
            players.withdraw_refused(
                venue=venue,
                digest=digest,
                decision=decision,
                version_id=check.decided_by_version,
                actor=actor,
            )
            data: dict[str, object] = {
                "door": door,
                "decision": decision.value,
                "register": listed_on.code if listed_on is not None else None,
                "register_version": (
                    listed_on.version
                    if listed_on is not None and check.decided_by_version is not None
                    else None
                ),
                "registers_consulted": len(check.consulted),
                "registers_unreadable": len(check.unreadable),
                "consultation": check.consultation.value,
            }
            if override and second is not None:
                data.update({"override": True, "confirmed_by": second.pk})
            audit.record(venue_id=venue.pk, actor=actor, action="door.visit", obj=visit, data=data)
            if override and second is not None and isinstance(actor, User):
                # Four eyes: both names recorded as any approved proposal's (the password was typed here).
                proposals.record_decided(
                    venue=venue,
                    kind=OVERRIDE,
                    target=f"visit:{visit.pk}",
                    params={"visit": visit.pk, "door": door, "decision": decision.value},
                    proposer=actor,
                    approver=second,
                )
            emit_presence(venue, at)
    except IntegrityError:
        # The same key committed meanwhile by a concurrent retry: answer its visit.
        if key is None or (replay := _replay(venue, key, door, digest)) is None:
            raise
        return replay
    return Admission(visit, replayed=False)


# --- self-exclusion -------------------------------------------------------------------------------------


def self_exclude(*, venue: Venue, document: Document, until: date, actor: Actor) -> SelfExclusion:
    """Record the person's own self-exclusion at the venue until ``until`` (inclusive), at once.

    Refused with nothing written: an end before today (the venue's date), or one before the end of the
    self-exclusion already in force (a self-exclusion is never shortened: it may only be extended). The
    same end again is answered with the one in force, and nothing is written (a retried request)."""
    digest = keyed_digest(register_key(), document)
    with transaction.atomic():
        locks.lock_venue(venue.pk)  # one self-exclusion of a person at a time: the term compared, then kept
        today = venueclock.today(venue)
        if until < today:
            raise InvalidInput(
                _("A self-exclusion cannot end in the past: its end must be today or later."),
                code="self_exclusion_in_past",
            )
        now = timezone.now()
        found = SelfExclusion.objects.filter(venue=venue, digest=digest).first()
        extended = found is not None and found.until >= today
        if found is not None and extended and until < found.until:
            raise Conflict(
                _(
                    "A self-exclusion is never lifted before its term: the one in force ends on %(until)s, "
                    "and the new end may not be earlier."
                )
                % {"until": found.until.isoformat()},
                code="self_exclusion_shortened",
            )
        if found is not None and extended and until == found.until:
            return found  # the same term again (a retried request): nothing changes, nothing is sent again
        if found is None:
            found = SelfExclusion(venue=venue, digest=digest)
        if not extended:
            found.since = today
        found.until = until
        found.recorded_by = _user(actor)
        found.recorded_at = now
        found.document_kind = document.kind.value
        found.document_tail = tail(document)
        found.save()
        # The person's player, if any: admission withdrawn, cards blocked, the door alerted if inside.
        players.withdraw_self_excluded(venue=venue, digest=digest, actor=actor)
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="door.self_excluded",
            obj=found,
            data={"until": until.isoformat(), "extended": extended, "queued_for_authority": True},
        )
        _queue_for_the_authority(venue, found, document)  # last: its number is the last lock (Rank.STREAM)
    return found


def _queue_for_the_authority(venue: Venue, found: SelfExclusion, document: Document) -> OutboxMessage:
    """The self-exclusion owed to the gaming authority, in the outbox the network link uses (its authority
    destination), in this transaction: sent by the link process (HALL_AUTHORITY_URL) with the link's retry.
    The document travels in the payload's personal part, erased once the authority acknowledged it."""
    return outbox.enqueue(
        venue_id=venue.pk,
        kind=LinkKind.SELF_EXCLUSION,
        destination=Destination.AUTHORITY,
        payload={
            "self_exclusion": found.pk,
            "venue": {"licence": venue.licence_number, "name": venue.name},
            "since": found.since.isoformat(),
            "until": found.until.isoformat(),
            "recorded_at": found.recorded_at.isoformat(),
            outbox.PERSONAL: {
                "document": {
                    "kind": document.kind.value,
                    "number": document.number,
                    "country": document.country,
                }
            },
        },
    )


# --- the retention --------------------------------------------------------------------------------------


def purge_visits(*, now: datetime | None = None, actor: Actor = "door.purge") -> int:
    """Clear the document digest of every visit past its retention date; the visits (and so the counts)
    stay. Audited per venue with the count. Returns how many visits were cleared."""
    now = now or timezone.now()
    due = Visit.objects.filter(keep_until__lte=now, digest__isnull=False)
    total = 0
    with transaction.atomic():
        per_venue = dict(
            due.values("venue_id").annotate(n=Count("pk")).order_by().values_list("venue_id", "n")
        )
        for venue_id in sorted(per_venue):  # the audit heads' order
            cleared = due.filter(venue_id=venue_id).update(digest=None, player=None)
            total += cleared
            audit.record(
                venue_id=venue_id,
                actor=actor,
                action="door.visits_purged",
                obj=Venue(pk=venue_id),
                data={"visits": cleared, "before": now.isoformat()},
            )
    if total:
        log.info("door: %d visits' personal data purged", total)
    return total


# --- the read model -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DayCount:
    day: date
    admitted: int
    minor: int
    prohibited: int
    self_excluded: int

    @property
    def refused(self) -> int:
        return self.minor + self.prohibited + self.self_excluded

    @property
    def total(self) -> int:
        return self.admitted + self.refused


def visits_per_day(venue: Venue, day_from: date, day_to: date) -> list[DayCount]:
    """Visits per decision on each of the venue's local days from ``day_from`` to ``day_to`` (inclusive),
    every day listed (zero counts too)."""
    zone = ZoneInfo(venue.time_zone)
    start = datetime.combine(day_from, datetime.min.time(), tzinfo=zone)
    end = datetime.combine(day_to + timedelta(days=1), datetime.min.time(), tzinfo=zone)
    rows = (
        Visit.objects.filter(venue=venue, at__gte=start, at__lt=end)
        .annotate(day=TruncDate("at", tzinfo=zone))
        .values_list("day", "decision")
        .annotate(n=Count("pk"))
        .order_by()
    )
    counts: dict[date, dict[str, int]] = defaultdict(dict)
    for day, decision, n in rows:
        counts[day][decision] = n
    found = []
    day = day_from
    while day <= day_to:
        c = counts.get(day, {})
        found.append(
            DayCount(
                day=day,
                admitted=c.get(Decision.ADMITTED, 0),
                minor=c.get(Decision.MINOR, 0),
                prohibited=c.get(Decision.PROHIBITED, 0),
                self_excluded=c.get(Decision.SELF_EXCLUDED, 0),
            )
        )
        day += timedelta(days=1)
    return found
