"""Identifying a winner at the cage, and forgetting them after the retention.

`identify` checks the document exactly as the door does (halls.door.services.admission.document_from:
DNI and NIE check letters, passports and EU identity cards by number and state), the full name, the date
of birth (not in the future; an adult by the venue's jurisdiction) and the nationality, and records an
`Identification` with the document's keyed digest and ``keep_until`` = now + the retention (ten years by
default). Audited with the identification's id and nothing else about the person.

`purge_identifications` deletes the identifications past ``keep_until`` and clears the digest of the
payout records and flags past theirs; audited per venue with counts.
"""

from __future__ import annotations

import logging
from datetime import date, datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count
from django.utils import timezone
from django.utils.translation import gettext as _

from halls.actors import Actor, actor_label
from halls.cage.models import Flag, Identification, PayoutRecord
from halls.cage.services.rules import rules_of, years_after
from halls.door.countries import alpha2
from halls.door.documents import Document, Problem, Refusal, age_on, keyed_digest
from halls.door.services.admission import adult_age
from halls.door.services.registers import register_key
from halls.door.texts import document_problem
from halls.errors import InvalidInput
from halls.models import Venue
from halls.services import audit, venueclock

log = logging.getLogger(__name__)

NAME_MAX = 150
SCAN_MAX = 200


def _text(value: str, limit: int, message: str, code: str) -> str:
    text = " ".join(str(value or "").split())
    if not text or len(text) > limit:
        raise InvalidInput(message, code=code)
    return text


def identify(
    *,
    venue: Venue,
    document: Document,
    full_name: str,
    birth_date: date,
    nationality: str,
    scan_reference: str,
    actor: Actor,
) -> Identification:
    """Record the winner's identification (the document already checked: admission.document_from).

    Refused with nothing written: a blank or overlong name or scan reference, an unknown nationality, a
    birth date in the future, a minor."""
    name = _text(
        full_name,
        NAME_MAX,
        _("Write the winner's full name as on the document (at most %(n)d characters).") % {"n": NAME_MAX},
        "bad_full_name",
    )
    scan = _text(
        scan_reference,
        SCAN_MAX,
        _("Give the reference of the document's scan (at most %(n)d characters).") % {"n": SCAN_MAX},
        "bad_scan_reference",
    )
    state = alpha2(nationality) if str(nationality or "").strip() else None
    if state is None:
        raise InvalidInput(_("The nationality is not an ISO 3166 country code."), code="bad_nationality")
    age = age_on(birth_date, venueclock.today(venue))
    if isinstance(age, Refusal):
        raise InvalidInput(document_problem(Problem.BIRTH_IN_FUTURE), code=Problem.BIRTH_IN_FUTURE.value)
    if age < adult_age(venue):
        raise InvalidInput(
            _("By that date of birth the winner is a minor: a minor may not play nor be paid a prize."),
            code="winner_minor",
        )
    now = timezone.now()
    with transaction.atomic():
        found = Identification.objects.create(
            venue=venue,
            document_kind=document.kind.value,
            document_number=document.number,
            document_country=document.country,
            full_name=name,
            birth_date=birth_date,
            nationality=state,
            scan_reference=scan,
            digest=keyed_digest(register_key(), document),
            identified_by=actor if isinstance(actor, User) else None,
            identified_by_label=actor_label(actor)[:150],
            identified_at=now,
            keep_until=years_after(now, rules_of(venue.pk).retention_years),
        )
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="cage.identified",
            obj=found,
            data={"identification": found.pk, "keep_until": found.keep_until.isoformat()},
        )
    return found


def purge_identifications(*, now: datetime | None = None, actor: Actor = "cage.purge") -> int:
    """Delete every identification past its retention and clear the document digest of the payout records
    and flags past theirs (their amounts and times stay). Audited per venue with the counts. Returns how
    many identifications were deleted."""
    now = now or timezone.now()
    people = Identification.objects.filter(keep_until__lte=now)
    payouts = PayoutRecord.objects.filter(keep_until__lte=now, digest__isnull=False)
    flags = Flag.objects.filter(keep_until__lte=now, digest__isnull=False)

    def per_venue(rows: object) -> dict[int, int]:
        return dict(rows.values("venue_id").annotate(n=Count("pk")).order_by().values_list("venue_id", "n"))  # type: ignore[attr-defined]

    deleted = 0
    with transaction.atomic():
        counts = [per_venue(people), per_venue(payouts), per_venue(flags)]
        for venue_id in sorted(set().union(*counts)):  # the audit heads' order
            payouts.filter(venue_id=venue_id).update(digest=None)
            flags.filter(venue_id=venue_id).update(digest=None)
            people.filter(venue_id=venue_id).delete()
            deleted += counts[0].get(venue_id, 0)
            audit.record(
                venue_id=venue_id,
                actor=actor,
                action="cage.purged",
                obj=Venue(pk=venue_id),
                data={
                    "identifications": counts[0].get(venue_id, 0),
                    "payouts": counts[1].get(venue_id, 0),
                    "flags": counts[2].get(venue_id, 0),
                    "before": now.isoformat(),
                },
            )
    if deleted:
        log.info("cage: %d identifications purged", deleted)
    return deleted
