"""The verification system on the embedded hall (SQLite, the in-memory broker and channel layer): every
system check answers (the broker is the server's own, the clock is read from SQLite), a healthy terminal
passes, and the session opens on it."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from bingo.electronic.models import Terminal, TerminalState
from bingo.electronic.services import sessions, verification
from halls import events
from tests.bingo.electronic.support import make_speciality, make_terminal

pytestmark = pytest.mark.django_db


def test_the_embedded_hall_passes_its_verification_and_opens_a_session(
    venue: Any, operator: Any, django_capture_on_commit_callbacks: Any
) -> None:
    assert connection.vendor == "sqlite"
    speciality = make_speciality(venue, operator)
    verification.approve_software(venue=venue, version="1.0", authorisation_ref="AUT-SW", actor=operator)
    terminal, _token = make_terminal(speciality, operator)
    Terminal.objects.filter(pk=terminal.pk).update(
        software_version="1.0", clock_offset_ms=120, last_seen_at=timezone.now()
    )
    silent, _token = make_terminal(speciality, operator)  # never heard from: it fails, and is told
    with django_capture_on_commit_callbacks(execute=True):
        run = verification.run_verification(speciality=speciality, actor=operator)
    checks = {c["check"]: c for c in run.system_checks}
    assert run.passed, run.system_checks
    assert "Embedded" in checks["broker"]["detail"] and "sqlite" in checks["database"]["detail"]
    terminal.refresh_from_db()
    assert (terminal.state, terminal.verified_by_id) == (TerminalState.IN_SERVICE, run.pk)
    silent.refresh_from_db()
    assert (silent.state, silent.verified_by_id) == (TerminalState.FAILED, None)
    assert events.current_seq(silent.stream) == 1
    session = sessions.open_session(speciality=speciality, actor=operator)
    assert session.verification_id == run.pk
