"""Game sessions (spec §2.7 S1–S2): opened after the material checks and the 90-ball inspection draw."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from halls import events, hooks
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType, SessionCheckRecorded, SessionClosed, SessionOpened
from halls.feed.services import sessions as feed_sessions
from halls.models import CheckName, GameSession, Room, SessionCheck, room_staff_stream
from halls.services import audit, locks


def inspection_problems(balls: Sequence[int]) -> dict[str, list[int]]:
    """Why an inspection draw is not the full set of 90 balls, each once, as data: the numbers out of
    1..90, repeated and missing, under those keys (only the non-empty ones; empty when the draw is whole)."""
    counts = Counter(balls)
    found = {
        "out_of_range": sorted({b for b in balls if not 1 <= b <= 90}),
        "repeated": sorted(b for b, n in counts.items() if n > 1 and 1 <= b <= 90),
        "missing": sorted(set(range(1, 91)) - set(counts)),
    }
    return {key: numbers for key, numbers in found.items() if numbers}


# How each kind of inspection problem is said (its numbers as a list, "[7, 8]").
INSPECTION_PROBLEMS = {
    "out_of_range": gettext_lazy("numbers out of 1..90: %(numbers)s"),
    "repeated": gettext_lazy("repeated: %(numbers)s"),
    "missing": gettext_lazy("missing: %(numbers)s"),
}


# The material checks a session needs before it opens (S1, R-07), each recorded by whoever ran it
# (record_check) or stated by the opener; the inspection draw (S2) is always the opener's.
REQUIRED_CHECKS = (CheckName.BLOWER, CheckName.RESERVE, CheckName.READER)


def _check_names(names: Sequence[str]) -> str:
    return ", ".join(str(CheckName(n).label).lower() for n in names)


def open_session(
    *,
    room: Room,
    actor: User,
    inspection_balls: Sequence[int],
    blower_ok: bool | None = None,
    reserve_ok: bool | None = None,
    reader_ok: bool | None = None,
) -> GameSession:
    """Open the room's session after its material checks and the 90-ball inspection draw (S1–S2, R-07).

    Each material check is the one recorded for this session by whoever ran it (record_check: the caller
    console records each as it is ticked), or the opener's when the opener states it working
    (``blower_ok=True``: the API's older clients send the checks with the opening). A check stated as not
    working refuses the opening (checks_failed); one neither stated nor recorded as working refuses it
    naming each such check (checks_missing). Refused, nothing is written."""
    stated = {CheckName.BLOWER: blower_ok, CheckName.RESERVE: reserve_ok, CheckName.READER: reader_ok}
    failed = [name for name in REQUIRED_CHECKS if stated[name] is False]
    if failed:
        raise InvalidInput(
            _("The session cannot open: %(join_failed)s not checked as working.")
            % {"join_failed": _check_names(failed)},
            code="checks_failed",
            checks=[str(n) for n in failed],
        )
    problems = inspection_problems(inspection_balls)
    if problems:
        said = "; ".join(
            str(INSPECTION_PROBLEMS[key]) % {"numbers": numbers} for key, numbers in problems.items()
        )
        raise InvalidInput(
            _("The inspection draw must show all 90 balls once each: %(problems)s.") % {"problems": said},
            code="inspection_incomplete",
            **problems,
        )
    with transaction.atomic():
        locks.lock_room(room.pk)
        if GameSession.objects.filter(room=room, closed_at__isnull=True).exists():
            raise Conflict(
                _("Room %(name)s already has an open session.") % {"name": room.name},
                code="session_already_open",
            )
        pending = pending_checks(room)
        latest = {c.check_name: c for c in pending}
        missing = [
            name
            for name in REQUIRED_CHECKS
            if stated[name] is not True and not (name in latest and latest[name].ok)
        ]
        if missing:
            raise Conflict(
                _(
                    "The session cannot open: %(checks)s not recorded as checked and working. "
                    "Tick each check as it is run, then open."
                )
                % {"checks": _check_names(missing)},
                code="checks_missing",
                checks=[str(n) for n in missing],
            )
        now = timezone.now()
        session = GameSession.objects.create(
            room=room,
            opened_at=now,
            opened_by=actor,
            blower_ok=True,
            reserve_ok=True,
            reader_ok=True,
            inspection_balls=list(inspection_balls),
        )
        _attach_checks(session=session, pending=pending, actor=actor, at=now)
        audit.record(
            venue_id=room.venue_id,
            actor=actor,
            action=EventType.SESSION_OPENED.value,
            obj=session,
            data={"room": room.pk, "inspection_balls": list(inspection_balls)},
        )
        events.emit(
            room.stream,
            EventType.SESSION_OPENED,
            SessionOpened(session=session.pk, opened_at=session.opened_at),
        )
        # The authority's feed: the session and the checks it opened on (the ones recorded for it).
        checks = session.checks.order_by("checked_at", "pk").values_list("check_name", "ok")
        feed_sessions.opened(
            venue_id=room.venue_id,
            room=room.name,
            session=str(session.pk),
            family="traditional",
            opened_at=now,
            checks=checks,
        )
    return session


def pending_checks(room: Room) -> list[SessionCheck]:
    """The room's checks recorded for its next session: since its last session closed, not yet part of a
    session, in the order run."""
    pending = SessionCheck.objects.filter(room=room, session__isnull=True).select_related("checked_by")
    last = GameSession.objects.filter(room=room, closed_at__isnull=False).order_by("-closed_at").first()
    if last is not None and last.closed_at is not None:
        pending = pending.filter(checked_at__gt=last.closed_at)
    return list(pending.order_by("checked_at", "pk"))


def _attach_checks(*, session: GameSession, pending: list[SessionCheck], actor: User, at: datetime) -> None:
    """The session's check rows: the room's pending checks (each kept with who ran it), and the opener's
    for each material check whose latest pending result is not a pass (the opener stated it working),
    and for the inspection draw."""
    ids = [c.pk for c in pending]
    SessionCheck.objects.filter(pk__in=ids).update(session=session)
    latest = {c.check_name: c for c in pending}
    for name in (*REQUIRED_CHECKS, CheckName.INSPECTION):
        found = latest.get(name.value)
        if found is not None and found.ok and name != CheckName.INSPECTION:
            continue
        SessionCheck.objects.create(
            room=session.room, session=session, check_name=name, ok=True, checked_by=actor, checked_at=at
        )


def record_check(*, room: Room, check_name: str, ok: bool, actor: User, note: str = "") -> SessionCheck:
    """Record one material check of a room before its session opens (R-07), by whoever ran it; the next
    session to open takes it into its minutes. A check recorded as not working (``ok=False``, its note saying
    why: refused without one, 400 note_required) keeps the opening refused until the device is checked
    again and works. Published on the room's staff stream (the event session.check) so every console of
    the room shows it."""
    if check_name not in (CheckName.BLOWER, CheckName.RESERVE, CheckName.READER):
        raise InvalidInput(
            _("Unknown check %(name)s: the ball blower, the reserve device or the ball reader.")
            % {"name": check_name},
            code="unknown_check",
            field="check",
        )
    note = note.strip()
    if not ok and not note:
        raise InvalidInput(
            _("A check recorded as not working needs a note saying what is wrong with the device."),
            code="note_required",
            field="note",
        )
    with transaction.atomic():
        locks.lock_room(room.pk)
        if GameSession.objects.filter(room=room, closed_at__isnull=True).exists():
            raise Conflict(
                _("Room %(name)s already has an open session: checks come before it opens.")
                % {"name": room.name},
                code="session_already_open",
            )
        check = SessionCheck.objects.create(
            room=room, check_name=check_name, ok=ok, checked_by=actor, checked_at=timezone.now(), note=note
        )
        audit.record(
            venue_id=room.venue_id,
            actor=actor,
            action="session.check_recorded",
            obj=check,
            data={"room": room.pk, "check": check_name, "ok": ok, "note": note},
        )
        # Every console of the room shows it at once (published on commit: a refused check tells none).
        events.emit(
            room_staff_stream(room.pk),
            EventType.SESSION_CHECK_RECORDED,
            SessionCheckRecorded(
                id=check.pk,
                room=room.pk,
                check=check_name,
                ok=ok,
                note=note,
                checked_by=actor.get_username(),
                checked_at=check.checked_at,
            ),
        )
    return check


def close_session(*, session: GameSession, actor: User) -> GameSession:
    with transaction.atomic():
        session = locks.lock_session(session.pk)
        if session.closed_at is not None:
            raise Conflict(_("Session %(pk)s is already closed.") % {"pk": session.pk}, code="session_closed")
        problems = hooks.session_close_problems(session)
        if problems:
            raise Conflict(
                _("The session cannot close: %(problems)s.") % {"problems": "; ".join(problems)},
                code="session_busy",
            )
        session.closed_at = timezone.now()
        session.closed_by = actor
        session.save(update_fields=["closed_at", "closed_by"])
        audit.record(
            venue_id=session.room.venue_id, actor=actor, action=EventType.SESSION_CLOSED.value, obj=session
        )
        hooks.session_closed(session, actor)
        events.emit(session.room.stream, EventType.SESSION_CLOSED, SessionClosed(session=session.pk))
    return session
