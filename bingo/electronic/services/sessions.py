"""Sessions of a speciality (EB-05.e, AB-03): opened only on the speciality's latest verification, if it
passed, is recent (HALL_VERIFICATION_MAX_AGE_HOURS) and no session used it before; closed by the operator.

Closing stops new games (the engine starts a game only while a session is open) and new purchases (a
terminal plays only in an open session); a game already created completes: one drawing draws to its end,
one selling closes its sales at its time and plays the cards it sold.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.electronic.models import ElectronicSession, Speciality
from bingo.electronic.services import feed
from bingo.electronic.services import verification as verifications
from bingo.electronic.services.locks import lock_speciality
from halls.actors import Actor, actor_label
from halls.errors import Conflict
from halls.eventtypes import EventType, SessionClosed, SessionOpened
from halls.services.changes import record_change


def open_session(*, speciality: Speciality, actor: Actor) -> ElectronicSession:
    """A session on the latest verification, or a refusal naming why not: session_already_open,
    verification_missing, verification_failed, verification_stale (too old, or a session used it)."""
    with transaction.atomic():
        speciality = lock_speciality(speciality.pk)
        if ElectronicSession.objects.filter(speciality=speciality, closed_at__isnull=True).exists():
            raise Conflict(
                _("%(name)s already has an open session.") % {"name": speciality.name},
                code="session_already_open",
            )
        latest = verifications.latest(speciality)
        if latest is None:
            raise Conflict(
                _("%(name)s has no verification: run one before opening a session.")
                % {"name": speciality.name},
                code="verification_missing",
            )
        if not latest.passed:
            failed = [c["check"] for c in latest.system_checks if not c["ok"]]
            failed += [c["test"] for c in latest.rng_checks if not c["ok"]]
            raise Conflict(
                _("The latest verification (%(id)s) failed: %(failed)s. Fix it and verify again.")
                % {"id": latest.pk, "failed": ", ".join(failed)},
                code="verification_failed",
                verification=latest.pk,
                failed=failed,
            )
        now = timezone.now()
        if latest.finished_at < now - verifications.age_limit():
            raise Conflict(
                _("The latest verification (%(id)s) is older than %(hours)s hours: verify again.")
                % {"id": latest.pk, "hours": f"{verifications.age_limit().total_seconds() / 3600:g}"},
                code="verification_stale",
                verification=latest.pk,
            )
        if ElectronicSession.objects.filter(verification=latest).exists():
            raise Conflict(
                _("The latest verification (%(id)s) was used by an earlier session: verify again.")
                % {"id": latest.pk},
                code="verification_stale",
                verification=latest.pk,
            )
        try:
            with transaction.atomic():
                session = ElectronicSession.objects.create(
                    speciality=speciality, verification=latest, opened_at=now, opened_by=actor_label(actor)
                )
        except IntegrityError:  # the speciality is locked: only a racing writer outside the services
            raise Conflict(_("A session is already open."), code="session_already_open") from None
        record_change(
            venue_id=speciality.venue_id,
            actor=actor,
            type=EventType.SESSION_OPENED,
            obj=session,
            data={"speciality": speciality.pk, "verification": latest.pk, "electronic": True},
            stream=speciality.stream,
            public=SessionOpened(session=session.pk, opened_at=now),
        )
        feed.session_opened(session)  # the authority's feed: the session and its verification's checks
    return session


def close_session(*, session: ElectronicSession, actor: Actor) -> ElectronicSession:
    """Close it: no new game starts and no terminal buys; the games already created complete."""
    with transaction.atomic():
        lock_speciality(session.speciality_id)
        session = ElectronicSession.objects.select_related("speciality").get(pk=session.pk)
        if session.closed_at is not None:
            raise Conflict(_("Session %(pk)s is already closed.") % {"pk": session.pk}, code="session_closed")
        session.closed_at = timezone.now()
        session.closed_by = actor_label(actor)
        session.save(update_fields=["closed_at", "closed_by"])
        speciality = session.speciality
        record_change(
            venue_id=speciality.venue_id,
            actor=actor,
            type=EventType.SESSION_CLOSED,
            obj=session,
            data={"speciality": speciality.pk, "electronic": True},
            stream=speciality.stream,
            public=SessionClosed(session=session.pk),
        )
        feed.session_closed(session)  # the authority's feed: the session's totals
    return session


def open_session_of(speciality: Speciality) -> ElectronicSession | None:
    """The speciality's open session, if any."""
    return ElectronicSession.objects.filter(speciality=speciality, closed_at__isnull=True).first()
