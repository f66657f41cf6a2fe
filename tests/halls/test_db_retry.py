"""halls.db_retry: a transaction PostgreSQL broke off (deadlock, serialization failure) is run again, at
most HALL_DB_RETRIES times, counted on /metrics; any other error, or one inside a caller's transaction,
is raised at once."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import OperationalError, transaction

from halls import db_retry, metrics


class _DriverError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def _broken(sqlstate: str) -> OperationalError:
    error = OperationalError("deadlock detected")
    error.__cause__ = _DriverError(sqlstate)
    return error


def _count(counter: Any, service: str, reason: str) -> float:
    value: float = counter.labels(service, reason)._value.get()
    return value


@pytest.fixture(autouse=True)
def _fast(settings: Any) -> None:
    settings.HALL_DB_RETRIES = 3
    settings.HALL_DB_RETRY_BACKOFF_MS = 0


def _failing(times: int, sqlstate: str = "40P01") -> tuple[list[int], Any]:
    calls: list[int] = []

    def fn() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise _broken(sqlstate)
        return "done"

    return calls, fn


def test_a_deadlock_is_retried_and_counted() -> None:
    before = _count(metrics.DB_RETRIES, "t.deadlock", "deadlock")
    calls, fn = _failing(2)
    assert db_retry.run("t.deadlock", fn) == "done"
    assert len(calls) == 3
    assert _count(metrics.DB_RETRIES, "t.deadlock", "deadlock") == before + 2


def test_a_serialization_failure_is_retried() -> None:
    calls, fn = _failing(1, "40001")
    assert db_retry.retried("t.serial")(fn)() == "done"
    assert len(calls) == 2
    assert _count(metrics.DB_RETRIES, "t.serial", "serialization") >= 1


def test_retries_are_bounded() -> None:
    calls, fn = _failing(10)
    with pytest.raises(OperationalError):
        db_retry.run("t.bounded", fn)
    assert len(calls) == 4  # the first run and HALL_DB_RETRIES more
    assert _count(metrics.DB_RETRIES_EXHAUSTED, "t.bounded", "deadlock") == 1


def test_other_database_errors_are_not_retried() -> None:
    calls, fn = _failing(1, "57014")  # a statement cancelled
    with pytest.raises(OperationalError):
        db_retry.run("t.other", fn)
    assert len(calls) == 1


@pytest.mark.django_db
def test_inside_a_callers_transaction_it_is_raised_at_once() -> None:
    calls, fn = _failing(1)
    with transaction.atomic(), pytest.raises(OperationalError):
        db_retry.run("t.inner", fn)
    assert len(calls) == 1
