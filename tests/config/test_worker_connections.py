"""A Celery worker keeps its database connection between tasks, and drops it once broken or too old."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from django.conf import settings
from django.db import connection, transaction

from config.celery import close_old_database_connections, keep_database_connections


def task(eager: bool = False) -> Any:
    return SimpleNamespace(request=SimpleNamespace(is_eager=eager))


def test_a_worker_keeps_its_connections_for_the_configured_age(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(settings.DATABASES["default"], "CONN_MAX_AGE", 0)
    keep_database_connections()
    assert settings.DATABASES["default"]["CONN_MAX_AGE"] == settings.HALL_WORKER_CONN_MAX_AGE > 0
    assert connection.settings_dict["CONN_MAX_AGE"] == settings.HALL_WORKER_CONN_MAX_AGE


@pytest.mark.django_db(transaction=True)
def test_a_connection_outlives_tasks_until_it_is_too_old(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 600)
    connection.close()
    connection.ensure_connection()
    kept = connection.connection
    for _ in range(3):
        close_old_database_connections(sender=task())  # task_prerun
        connection.ensure_connection()  # the task's first query (health-checked)
        close_old_database_connections(sender=task())  # task_postrun
    assert connection.connection is kept

    connection.close_at = time.monotonic() - 1  # past its CONN_MAX_AGE
    close_old_database_connections(sender=task())
    assert connection.connection is None


@pytest.mark.django_db(transaction=True)
def test_an_eager_task_or_an_open_transaction_keeps_the_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 0)  # closed after every task otherwise
    connection.ensure_connection()
    kept = connection.connection
    close_old_database_connections(sender=task(eager=True))
    assert connection.connection is kept
    with transaction.atomic():
        close_old_database_connections(sender=task())
        assert connection.connection is kept
    close_old_database_connections(sender=task())
    assert connection.connection is None


def test_a_worker_takes_no_pool_of_the_web_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """HALL_DB_POOL (the web unit's) in a worker's environment too: the worker keeps its one connection
    (Django refuses a pool with a CONN_MAX_AGE)."""
    options = {"pool": {"min_size": 2, "max_size": 16, "timeout": 10.0}}
    monkeypatch.setitem(settings.DATABASES["default"], "OPTIONS", options)
    monkeypatch.setitem(settings.DATABASES["default"], "CONN_MAX_AGE", 0)
    keep_database_connections()
    assert "pool" not in settings.DATABASES["default"]["OPTIONS"]
    assert settings.DATABASES["default"]["CONN_MAX_AGE"] == settings.HALL_WORKER_CONN_MAX_AGE
