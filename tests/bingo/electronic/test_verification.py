"""The verification system (EB-05.e, AB-03, R-07): the system's checks, the RNG self-tests and each
terminal's (alive, approved software, clock), recorded append-only and audited; a failing terminal is put
out of play, a passing one is verified by the run."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import DatabaseError, transaction
from django.utils import timezone

from bingo.electronic.models import (
    ElectronicSession,
    Terminal,
    TerminalCheck,
    TerminalSoftware,
    TerminalState,
    Verification,
)
from bingo.electronic.services import verification
from halls import events
from halls.errors import Conflict
from halls.models import AuditEntry
from tests.bingo.electronic.support import make_speciality, make_terminal, open_verified_session

pytestmark = pytest.mark.django_db

VERSION = "2.4.1"


def heard(terminal: Terminal, *, version: str = VERSION, offset_ms: int | None = 0, ago: float = 1) -> None:
    """What a terminal's `hello` leaves on its row (the sales helper's message service writes it)."""
    Terminal.objects.filter(pk=terminal.pk).update(
        software_version=version,
        clock_offset_ms=offset_ms,
        last_seen_at=timezone.now() - timedelta(seconds=ago),
    )


@pytest.fixture
def speciality(venue: Any, operator: Any) -> Any:
    return make_speciality(venue, operator)


@pytest.fixture
def approved(venue: Any, operator: Any) -> TerminalSoftware:
    return verification.approve_software(
        venue=venue, version=VERSION, authorisation_ref="AUT-SW-1", actor=operator
    )


def test_a_healthy_system_and_terminals_pass_and_are_verified_by_the_run(
    speciality: Any, operator: Any, approved: Any
) -> None:
    one, _t1 = make_terminal(speciality, operator)
    two, _t2 = make_terminal(speciality, operator)
    for terminal in (one, two):
        heard(terminal)
    run = verification.run_verification(speciality=speciality, actor=operator)
    assert run.passed
    assert [c["check"] for c in run.system_checks] == [
        "database",
        "migrations",
        "broker",
        "channel_layer",
        "clock",
    ]
    assert all(c["ok"] for c in run.system_checks), run.system_checks
    assert {r["test"] for r in run.rng_checks} >= {"monobit", "runs", "draw_numbers", "permutation"}
    checks = TerminalCheck.objects.filter(verification=run).order_by("terminal_id")
    assert [(c.terminal_id, c.passed) for c in checks] == [(one.pk, True), (two.pk, True)]
    assert [c["check"] for c in checks[0].checks] == ["alive", "software", "clock"]
    for terminal in (one, two):
        terminal.refresh_from_db()
        assert (terminal.state, terminal.verified_by_id) == (TerminalState.IN_SERVICE, run.pk)
    entry = AuditEntry.objects.get(action="electronic.verification", object_id=str(run.pk))
    assert entry.data["passed"] is True and entry.data["terminals"] == {str(one.pk): True, str(two.pk): True}


def test_unapproved_silent_and_clock_off_terminals_fail_and_are_told(
    speciality: Any, operator: Any, approved: Any, monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    good, _t = make_terminal(speciality, operator, "Bueno")
    unapproved, _t = make_terminal(speciality, operator, "Versión vieja")
    silent, _t = make_terminal(speciality, operator, "Callado")
    never, _t = make_terminal(speciality, operator, "Nunca oído")
    late, _t = make_terminal(speciality, operator, "Reloj")
    parked, _t = make_terminal(speciality, operator, "Apartado")
    heard(good)
    heard(unapproved, version="2.3.9")
    heard(silent, ago=600)
    heard(late, offset_ms=-5000)
    Terminal.objects.filter(pk=parked.pk).update(state=TerminalState.OUT_OF_SERVICE)
    told: list[events.Event] = []
    monkeypatch.setattr(events, "publish", told.append)
    with django_capture_on_commit_callbacks(execute=True):
        run = verification.run_verification(speciality=speciality, actor=operator)
    assert run.passed  # the system's and the RNG's: a failed terminal keeps only itself out
    failing = {
        c.terminal_id: [x["check"] for x in c.checks if not x["ok"]]
        for c in TerminalCheck.objects.filter(verification=run, passed=False)
    }
    assert failing == {
        unapproved.pk: ["software"],
        silent.pk: ["alive"],
        never.pk: ["alive", "software", "clock"],
        late.pk: ["clock"],
    }
    assert not TerminalCheck.objects.filter(terminal=parked).exists()  # out of service: not checked
    states = dict(Terminal.objects.values_list("pk", "state"))
    assert states[good.pk] == TerminalState.IN_SERVICE
    assert {states[t.pk] for t in (unapproved, silent, never, late)} == {TerminalState.FAILED}
    assert states[parked.pk] == TerminalState.OUT_OF_SERVICE
    assert set(Terminal.objects.filter(verified_by=run).values_list("pk", flat=True)) == {good.pk}
    state_events = [e for e in told if e.type == "terminal.state"]
    assert sorted(e.stream for e in state_events) == sorted(
        f"terminal.{t.pk}" for t in (unapproved, silent, never, late)
    )
    clock_event = next(e for e in state_events if e.stream == f"terminal.{late.pk}")
    assert clock_event.data["state"] == "failed" and "5000" in clock_event.data["reason"]
    assert AuditEntry.objects.filter(action="electronic.terminal_state").count() == 4


def test_a_failed_terminal_fixed_passes_the_next_run_and_is_back_in_service(
    speciality: Any, operator: Any, approved: Any
) -> None:
    terminal, _t = make_terminal(speciality, operator)
    heard(terminal, version="0.9")
    first = verification.run_verification(speciality=speciality, actor=operator)
    terminal.refresh_from_db()
    assert terminal.state == TerminalState.FAILED and terminal.verified_by_id is None
    heard(terminal)  # updated to the approved version
    second = verification.run_verification(speciality=speciality, actor=operator)
    again = Terminal.objects.get(pk=terminal.pk)
    assert (again.state, again.verified_by_id) == (TerminalState.IN_SERVICE, second.pk)
    assert first.pk != second.pk


def test_a_withdrawn_version_fails_its_terminals(speciality: Any, operator: Any, approved: Any) -> None:
    terminal, _t = make_terminal(speciality, operator)
    heard(terminal)
    verification.withdraw_software(software=approved, actor=operator)
    verification.run_verification(speciality=speciality, actor=operator)
    terminal.refresh_from_db()
    assert terminal.state == TerminalState.FAILED
    with pytest.raises(Conflict) as caught:
        verification.withdraw_software(software=approved, actor=operator)
    assert caught.value.code == "already_withdrawn"
    again = verification.approve_software(
        venue=speciality.venue, version=VERSION, authorisation_ref="AUT-SW-2", actor=operator
    )
    assert again.pk == approved.pk and again.withdrawn_at is None and again.authorisation_ref == "AUT-SW-2"
    with pytest.raises(Conflict) as twice:
        verification.approve_software(
            venue=speciality.venue, version=VERSION, authorisation_ref="X", actor=operator
        )
    assert twice.value.code == "already_approved"
    actions = list(
        AuditEntry.objects.filter(action__startswith="electronic.software")
        .order_by("pk")
        .values_list("action", flat=True)
    )
    assert actions == [
        "electronic.software_approved",
        "electronic.software_withdrawn",
        "electronic.software_approved",
    ]


def test_an_unknown_time_zone_and_an_unreachable_broker_fail_the_system(
    speciality: Any, operator: Any, settings: Any
) -> None:
    venue = speciality.venue
    venue.time_zone = "Mars/Olympus_Mons"
    venue.save(update_fields=["time_zone"])
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    run = verification.run_verification(speciality=speciality, actor=operator)
    assert not run.passed
    failed = {c["check"]: c["detail"] for c in run.system_checks if not c["ok"]}
    assert set(failed) == {"broker", "clock"}
    assert "Mars/Olympus_Mons" in failed["clock"]


def test_a_verification_is_refused_while_a_session_is_open(speciality: Any, operator: Any) -> None:
    open_verified_session(speciality, operator)
    before = Verification.objects.count()
    with pytest.raises(Conflict) as caught:
        verification.run_verification(speciality=speciality, actor=operator)
    assert caught.value.code == "session_open"
    assert Verification.objects.count() == before
    assert ElectronicSession.objects.filter(closed_at__isnull=True).count() == 1


def test_verifications_and_their_terminal_checks_are_append_only(
    speciality: Any, operator: Any, approved: Any
) -> None:
    terminal, _t = make_terminal(speciality, operator)
    heard(terminal)
    run = verification.run_verification(speciality=speciality, actor=operator)
    for rows in (Verification.objects.filter(pk=run.pk), TerminalCheck.objects.filter(verification=run)):
        with pytest.raises(DatabaseError), transaction.atomic():
            rows.update(passed=False)
