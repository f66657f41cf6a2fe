"""The parallel test run's split (config/test_workers.py): worker gwN gets Redis database base + N and a
winner-index directory of its own, once; outside a worker nothing changes."""

from __future__ import annotations

from pathlib import Path

from config.test_workers import SPLIT_MARK, split_for_worker

VAR = Path("/srv/hall/var")


def test_worker_n_gets_the_redis_database_n_past_the_given_one_and_a_directory_of_its_own() -> None:
    environ = {"PYTEST_XDIST_WORKER": "gw1", "REDIS_URL": "redis://127.0.0.1:6379/4"}
    split_for_worker(VAR, environ)
    assert environ["REDIS_URL"] == "redis://127.0.0.1:6379/5"
    assert environ["HALL_DETECTOR_DIR"] == str(VAR / "detector-gw1")


def test_a_url_without_a_database_is_database_0_and_worker_0_keeps_it() -> None:
    environ = {"PYTEST_XDIST_WORKER": "gw0", "REDIS_URL": "redis://:secret@localhost:6379"}
    split_for_worker(VAR, environ)
    assert environ["REDIS_URL"] == "redis://:secret@localhost:6379/0"


def test_a_process_a_worker_starts_inherits_the_split_and_does_not_shift_again() -> None:
    environ = {"PYTEST_XDIST_WORKER": "gw1", "REDIS_URL": "redis://127.0.0.1:6379/0"}
    split_for_worker(VAR, environ)
    child = dict(environ)
    split_for_worker(VAR, child)
    assert child == environ and child[SPLIT_MARK] == "gw1"
    assert child["REDIS_URL"] == "redis://127.0.0.1:6379/1"


def test_outside_a_worker_and_on_the_embedded_hall_nothing_else_changes() -> None:
    plain = {"REDIS_URL": "redis://127.0.0.1:6379/0", "HALL_DETECTOR_DIR": "/x"}
    split_for_worker(VAR, plain)
    assert plain == {"REDIS_URL": "redis://127.0.0.1:6379/0", "HALL_DETECTOR_DIR": "/x"}
    embedded = {"PYTEST_XDIST_WORKER": "gw1", "HALL_DETECTOR_DIR": "/given"}
    split_for_worker(VAR, embedded)
    assert "REDIS_URL" not in embedded and embedded["HALL_DETECTOR_DIR"] == "/given"
