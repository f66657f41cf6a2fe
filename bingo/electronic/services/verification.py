"""The verification system (EB-05.e, AB-03, R-07): before a session, the system's checks, the RNG
self-tests and every terminal's check, recorded (Verification + TerminalCheck, append-only) and audited.

- The system: the database answers and takes a write, every migration is applied, the broker answers (not
  embedded: there it is the server's own memory), a message goes round the channel layer, the server's clock
  agrees with the database's and the time zones are known.
- The RNG: `bingo.electronic.rngtests` on the draw's generator (`secrets`), over the speciality's range.
- Each terminal not out of service: alive (heard from within HALL_TERMINAL_ALIVE_SECONDS: its `hello`
  updates last_seen_at), running a software version approved for the venue and not withdrawn, its clock
  within HALL_TERMINAL_CLOCK_TOLERANCE_MS of the server's. One that passes is verified by this verification
  (it may play in the session opened on it); one that fails is put in state "failed" and cannot play.

`passed` is the system's and the RNG's: a failed terminal keeps only itself out. A session opens only on a
passed, recent, unused verification (services.sessions). A verification is refused while a session is open:
a terminal's verification must be its session's.

Terminal software versions are approved and withdrawn here too (audited).
"""

from __future__ import annotations

import asyncio
import uuid
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.electronic import rngtests
from bingo.electronic.models import (
    ElectronicSession,
    Speciality,
    Terminal,
    TerminalCheck,
    TerminalSoftware,
    TerminalState,
    Verification,
)
from bingo.electronic.services.locks import lock_speciality, lock_terminals
from bingo.electronic.services.specialities import version_in_force
from bingo.electronic.services.steps import rules_of
from halls import events
from halls.actors import Actor, actor_label
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import EventType, TerminalStateChanged
from halls.models import Venue
from halls.services import audit

EARLIEST_SANE_YEAR = 2024  # a server clock before this was never set


@dataclass(frozen=True)
class Check:
    """One check's answer, as Verification.system_checks / TerminalCheck.checks keep it."""

    check: str
    ok: bool
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {"check": self.check, "ok": self.ok, "detail": self.detail}


# --- the system -------------------------------------------------------------------------------------------


def _database() -> Check:
    """A write in a savepoint rolled back: the database answers and is not read-only."""
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("CREATE TEMPORARY TABLE hall_verification_probe (x integer)")
                cursor.execute("INSERT INTO hall_verification_probe (x) VALUES (1)")
                cursor.execute("SELECT x FROM hall_verification_probe")
                row = cursor.fetchone()
            transaction.set_rollback(True)  # leave nothing behind
    except DatabaseError as exc:
        return Check("database", False, _("The database refused a write: %(error)s") % {"error": exc})
    if row != (1,):
        return Check("database", False, _("The database did not read back what it wrote."))
    return Check("database", True, _("%(vendor)s answers and takes writes.") % {"vendor": connection.vendor})


def _migrations() -> Check:
    try:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        return Check("migrations", False, str(exc))
    if plan:
        names = ", ".join(f"{m.app_label}.{m.name}" for m, _backwards in plan[:10])
        return Check("migrations", False, _("Not applied: %(names)s") % {"names": names})
    return Check("migrations", True, _("Every migration is applied."))


def _broker() -> Check:
    if settings.HALL_EMBEDDED:
        return Check("broker", True, _("Embedded: the in-memory broker of the server process."))
    import redis

    from halls.redis_clients import sync_client

    client = sync_client(socket_timeout=3, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        return Check("broker", False, _("Redis does not answer: %(error)s") % {"error": exc})
    finally:
        client.close()
    return Check("broker", True, _("Redis answers."))


async def _round_trip(timeout: float) -> bool:
    """A message to a new channel of the layer comes back (the pub/sub layer subscribes when the receive
    starts, so it is sent again until it arrives: config.health does the same)."""
    layer = get_channel_layer()
    if layer is None:
        return False
    channel = await layer.new_channel("verification.")
    token = uuid.uuid4().hex
    receiving = asyncio.ensure_future(layer.receive(channel))
    try:
        async with asyncio.timeout(timeout):
            while True:
                await layer.send(channel, {"type": "verification.probe", "token": token})
                done, _pending = await asyncio.wait([receiving], timeout=0.2)
                if done:
                    break
    except TimeoutError:
        return False
    finally:
        if not receiving.done():
            receiving.cancel()
    return bool(receiving.result().get("token") == token)


def _channel_layer() -> Check:
    try:
        ok = async_to_sync(_round_trip)(float(settings.HALL_VERIFICATION_LAYER_TIMEOUT_SECONDS))
    except Exception as exc:  # any failure of the layer is the check's answer, not the service's
        return Check("channel_layer", False, _("The channel layer failed: %(error)s") % {"error": exc})
    if not ok:
        return Check("channel_layer", False, _("A message sent through the channel layer did not come back."))
    return Check("channel_layer", True, _("A message went through the channel layer and back."))


def _database_now() -> datetime:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT clock_timestamp()")
            value = cursor.fetchone()[0]
            return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
        cursor.execute("SELECT strftime('%Y-%m-%dT%H:%M:%f', 'now')")  # SQLite: UTC
        return datetime.fromisoformat(cursor.fetchone()[0]).replace(tzinfo=UTC)


def _clock(venue: Venue) -> Check:
    """The server's clock is set (a sane year), agrees with the database's and the time zones are known."""
    server = timezone.now()
    try:
        database = _database_now()
    except DatabaseError as exc:
        return Check("clock", False, str(exc))
    drift = abs((server - database).total_seconds())
    problems = []
    if server.year < EARLIEST_SANE_YEAR:
        problems.append(_("the server's clock says %(now)s") % {"now": server.isoformat()})
    if drift > float(settings.HALL_SERVER_CLOCK_TOLERANCE_SECONDS):
        problems.append(_("the server and the database differ by %(drift).3f s") % {"drift": drift})
    if not settings.USE_TZ:
        problems.append(_("times are not kept time-zone aware (USE_TZ)"))
    for zone in {settings.TIME_ZONE, venue.time_zone} - {""}:
        try:
            zoneinfo.ZoneInfo(zone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            problems.append(_("unknown time zone %(zone)s") % {"zone": zone})
    if problems:
        return Check("clock", False, "; ".join(problems))
    return Check(
        "clock",
        True,
        _("Server and database within %(drift).3f s; venue time zone %(zone)s.")
        % {"drift": drift, "zone": venue.time_zone or settings.TIME_ZONE},
    )


def system_checks(venue: Venue) -> list[Check]:
    """Every check of the system, each answering (never raising)."""
    return [_database(), _migrations(), _broker(), _channel_layer(), _clock(venue)]


def rng_checks(speciality: Speciality) -> list[rngtests.RngResult]:
    """The RNG self-tests on the draw's generator over the range of the speciality's layout in force."""
    layout = rules_of(version_in_force(speciality)).layout
    return rngtests.run_all(layout.max_number)


# --- the terminals ----------------------------------------------------------------------------------------


def approved_versions(venue_id: int) -> set[str]:
    return set(
        TerminalSoftware.objects.filter(venue_id=venue_id, withdrawn_at__isnull=True).values_list(
            "version", flat=True
        )
    )


def terminal_checks(terminal: Terminal, *, now: datetime, approved: set[str]) -> list[Check]:
    """Alive, approved software, clock: what the terminal last reported (its `hello`)."""
    window = timedelta(seconds=float(settings.HALL_TERMINAL_ALIVE_SECONDS))
    tolerance = int(settings.HALL_TERMINAL_CLOCK_TOLERANCE_MS)
    seen = terminal.last_seen_at
    if seen is None:
        alive = Check("alive", False, _("Never heard from."))
    else:
        age = (now - seen).total_seconds()
        alive = Check(
            "alive",
            age <= window.total_seconds(),
            _("Last heard %(age).0f s ago (at most %(window).0f s).")
            % {"age": age, "window": window.total_seconds()},
        )
    version = terminal.software_version
    software = Check(
        "software",
        bool(version) and version in approved,
        _("Runs %(version)s; approved: %(approved)s.")
        % {"version": version or "?", "approved": ", ".join(sorted(approved)) or "-"},
    )
    offset = terminal.clock_offset_ms
    clock = Check(
        "clock",
        offset is not None and abs(offset) <= tolerance,
        _("Clock off by %(offset)s ms (at most %(tolerance)s ms).")
        % {"offset": "?" if offset is None else offset, "tolerance": tolerance},
    )
    return [alive, software, clock]


# --- the run ----------------------------------------------------------------------------------------------


def run_verification(*, speciality: Speciality, actor: Actor) -> Verification:
    """Run every check and record it (see the module). Refused (409 session_open) while the speciality
    has an open session."""
    started = timezone.now()
    if ElectronicSession.objects.filter(speciality=speciality, closed_at__isnull=True).exists():
        raise _session_open()
    # Outside the transaction: the checks talk to the network, and the RNG tests take a tenth of a second.
    system = system_checks(speciality.venue)
    rng = rng_checks(speciality)
    passed = all(c.ok for c in system) and all(r.ok for r in rng)
    with transaction.atomic():
        speciality = lock_speciality(speciality.pk)
        if ElectronicSession.objects.filter(speciality=speciality, closed_at__isnull=True).exists():
            raise _session_open()
        now = timezone.now()
        verification = Verification.objects.create(
            speciality=speciality,
            started_at=started,
            finished_at=now,
            passed=passed,
            system_checks=[c.as_json() for c in system],
            rng_checks=[r.as_json() for r in rng],
            actor_label=actor_label(actor),
        )
        approved = approved_versions(speciality.venue_id)
        rows: list[TerminalCheck] = []
        changed: list[tuple[Terminal, str, str]] = []  # the terminal (its new state), the old, why
        terminals = lock_terminals(speciality.pk)
        for terminal in terminals:
            checks = terminal_checks(terminal, now=now, approved=approved)
            ok = all(c.ok for c in checks)
            rows.append(
                TerminalCheck(
                    verification=verification,
                    terminal=terminal,
                    passed=ok,
                    checks=[c.as_json() for c in checks],
                )
            )
            if ok:
                terminal.verified_by = verification
            before = terminal.state
            if ok and before == TerminalState.FAILED:
                terminal.state = TerminalState.IN_SERVICE
                changed.append((terminal, before, _("Passed verification %(id)s.") % {"id": verification.pk}))
            elif not ok and before != TerminalState.FAILED:
                terminal.state = TerminalState.FAILED
                failed = ", ".join(f"{c.check}: {c.detail}" for c in checks if not c.ok)
                changed.append((terminal, before, failed))
        # Three plain UPDATEs (a bulk_update's CASE per row took seconds at 2,000 terminals).
        Terminal.objects.filter(pk__in=[r.terminal_id for r in rows if r.passed]).update(
            verified_by=verification
        )
        for state in (TerminalState.FAILED, TerminalState.IN_SERVICE):
            moved = [t.pk for t, _before, _why in changed if t.state == state]
            if moved:
                Terminal.objects.filter(pk__in=moved).update(state=state)
        TerminalCheck.objects.bulk_create(rows)
        entries: list[tuple[Actor, str, Any, dict[str, Any] | None]] = [
            (
                actor,
                "electronic.verification",
                verification,
                {
                    "speciality": speciality.pk,
                    "passed": passed,
                    "system": verification.system_checks,
                    "rng": [{"test": r.test, "ok": r.ok, "statistic": r.statistic} for r in rng],
                    "terminals": {str(r.terminal_id): r.passed for r in rows},
                },
            )
        ]
        for terminal, before, reason in changed:  # as services.terminals audits a change of state
            entries.append(
                (
                    actor,
                    "electronic.terminal_state",
                    terminal,
                    {"from": before, "to": terminal.state, "reason": reason, "verification": verification.pk},
                )
            )
        audit.record_many(venue_id=speciality.venue_id, entries=entries)
        # After the audit (AUDIT_HEAD comes before STREAM): each changed terminal told on its own stream,
        # the streams' cursors moved in one statement.
        if changed:
            events.emit_many(
                [
                    (
                        terminal.stream,
                        EventType.TERMINAL_STATE,
                        TerminalStateChanged(terminal=terminal.pk, state=terminal.state, reason=reason),
                    )
                    for terminal, _before, reason in changed
                ]
            )
    return verification


def _session_open() -> Conflict:
    return Conflict(
        _("The speciality has an open session: close it before a new verification."), code="session_open"
    )


# --- approved software --------------------------------------------------------------------------------------


def approve_software(*, venue: Venue, version: str, authorisation_ref: str, actor: Actor) -> TerminalSoftware:
    """A terminal software version approved for the venue's terminals (a withdrawn one approved again)."""
    label = str(version or "").strip()
    if not label or len(label) > 40:
        raise InvalidInput(_("A software version has 1-40 characters."), code="bad_version", field="version")
    ref = str(authorisation_ref or "").strip()
    if not ref or len(ref) > 120:
        raise InvalidInput(
            _("An authorisation reference (1-120 characters) is required."), code="bad_authorisation"
        )
    now = timezone.now()
    with transaction.atomic():
        try:
            with transaction.atomic():
                software = TerminalSoftware.objects.create(
                    venue=venue, version=label, authorisation_ref=ref, approved_at=now
                )
        except IntegrityError:
            # Known already: approved again only if withdrawn (a compare-and-swap, no lock to take).
            again = TerminalSoftware.objects.filter(
                venue=venue, version=label, withdrawn_at__isnull=False
            ).update(authorisation_ref=ref, approved_at=now, withdrawn_at=None)
            if not again:
                raise Conflict(
                    _("Version %(version)s is already approved.") % {"version": label},
                    code="already_approved",
                ) from None
            software = TerminalSoftware.objects.get(venue=venue, version=label)
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="electronic.software_approved",
            obj=software,
            data={"version": label, "ref": ref},
        )
    return software


def withdraw_software(*, software: TerminalSoftware, actor: Actor) -> TerminalSoftware:
    """The version is no longer approved: a terminal running it fails its next verification."""
    with transaction.atomic():
        # A compare-and-swap: of two withdrawals at once, one withdraws and the other is told.
        if not TerminalSoftware.objects.filter(pk=software.pk, withdrawn_at__isnull=True).update(
            withdrawn_at=timezone.now()
        ):
            raise Conflict(
                _("Version %(version)s is already withdrawn.") % {"version": software.version},
                code="already_withdrawn",
            )
        software.refresh_from_db()
        audit.record(
            venue_id=software.venue_id,
            actor=actor,
            action="electronic.software_withdrawn",
            obj=software,
            data={"version": software.version},
        )
    return software


def latest(speciality: Speciality) -> Verification | None:
    return speciality.verifications.order_by("-finished_at", "-pk").first()


def age_limit() -> timedelta:
    return timedelta(hours=float(settings.HALL_VERIFICATION_MAX_AGE_HOURS))
