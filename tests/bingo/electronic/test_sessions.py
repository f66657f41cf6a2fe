"""Sessions of a speciality: opened only on the latest verification if it passed, is recent and unused;
closed by the operator (new games and purchases stop, games already created complete)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from bingo.electronic.models import ElectronicSession, Verification
from bingo.electronic.services import sessions, verification
from halls import events
from halls.errors import Conflict
from halls.models import AuditEntry
from tests.bingo.electronic.support import make_speciality

pytestmark = pytest.mark.django_db


@pytest.fixture
def speciality(venue: Any, operator: Any) -> Any:
    return make_speciality(venue, operator)


def refused(speciality: Any, operator: Any) -> Conflict:
    before = ElectronicSession.objects.count()
    with pytest.raises(Conflict) as caught:
        sessions.open_session(speciality=speciality, actor=operator)
    assert ElectronicSession.objects.count() == before  # nothing written
    return caught.value


def test_no_verification_no_session(speciality: Any, operator: Any) -> None:
    assert refused(speciality, operator).code == "verification_missing"


def test_a_passed_verification_opens_one_session_announced_on_the_room(
    speciality: Any, operator: Any, monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    run = verification.run_verification(speciality=speciality, actor=operator)
    told: list[events.Event] = []
    monkeypatch.setattr(events, "publish", told.append)
    with django_capture_on_commit_callbacks(execute=True):
        session = sessions.open_session(speciality=speciality, actor=operator)
    assert (session.verification_id, session.opened_by, session.closed_at) == (run.pk, "operator", None)
    assert [(e.stream, e.type, e.data["session"]) for e in told] == [
        (speciality.stream, "session.opened", session.pk)
    ]
    assert AuditEntry.objects.filter(action="session.opened", object_id=str(session.pk)).exists()
    assert refused(speciality, operator).code == "session_already_open"


def test_a_failing_system_check_blocks_the_session(speciality: Any, operator: Any, settings: Any) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # the broker cannot be reached
    run = verification.run_verification(speciality=speciality, actor=operator)
    assert not run.passed
    error = refused(speciality, operator)
    assert error.code == "verification_failed"
    assert error.details == {"verification": run.pk, "failed": ["broker"]}
    assert "broker" in error.message


def test_a_failed_rng_self_test_blocks_the_session(speciality: Any, operator: Any) -> None:
    now = timezone.now()
    Verification.objects.create(
        speciality=speciality,
        started_at=now,
        finished_at=now,
        passed=False,
        system_checks=[{"check": "database", "ok": True, "detail": ""}],
        rng_checks=[{"test": "monobit", "ok": False, "statistic": 9.0, "detail": ""}],
        actor_label="operator",
    )
    error = refused(speciality, operator)
    assert error.code == "verification_failed" and error.details["failed"] == ["monobit"]


def test_only_the_latest_verification_counts(speciality: Any, operator: Any, settings: Any) -> None:
    verification.run_verification(speciality=speciality, actor=operator)  # passed
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    verification.run_verification(speciality=speciality, actor=operator)  # then failed
    assert refused(speciality, operator).code == "verification_failed"


def test_a_stale_verification_is_refused(speciality: Any, operator: Any, settings: Any) -> None:
    old = timezone.now() - timedelta(hours=13)
    Verification.objects.create(
        speciality=speciality,
        started_at=old,
        finished_at=old,
        passed=True,
        system_checks=[],
        rng_checks=[],
        actor_label="operator",
    )
    error = refused(speciality, operator)
    assert error.code == "verification_stale" and "12 hours" in error.message
    settings.HALL_VERIFICATION_MAX_AGE_HOURS = 24
    assert sessions.open_session(speciality=speciality, actor=operator).pk


def test_a_verification_opens_one_session_only(speciality: Any, operator: Any) -> None:
    verification.run_verification(speciality=speciality, actor=operator)
    first = sessions.open_session(speciality=speciality, actor=operator)
    closed = sessions.close_session(session=first, actor=operator)
    assert closed.closed_at is not None and closed.closed_by == "operator"
    assert refused(speciality, operator).code == "verification_stale"
    verification.run_verification(speciality=speciality, actor=operator)
    second = sessions.open_session(speciality=speciality, actor=operator)
    assert second.verification_id != first.verification_id
    assert sessions.open_session_of(speciality) == second


def test_closing_twice_is_refused(speciality: Any, operator: Any) -> None:
    verification.run_verification(speciality=speciality, actor=operator)
    session = sessions.open_session(speciality=speciality, actor=operator)
    sessions.close_session(session=session, actor=operator)
    with pytest.raises(Conflict) as caught:
        sessions.close_session(session=session, actor=operator)
    assert caught.value.code == "session_closed"
    assert AuditEntry.objects.filter(action="session.closed", object_id=str(session.pk)).count() == 1
