#!/usr/bin/env python3
"""Check that the PostgreSQL and Redis the test run needs answer; exit 1 naming whatever does not.

Reads DATABASE_URL and REDIS_URL (the Makefile's `test` target sets defaults). Nothing is skipped:
a test run without its services is a failed run, not a green one.

    .venv/bin/python scripts/check_services.py
"""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit, urlunsplit

import psycopg
import redis

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/hall"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
TIMEOUT_SECONDS = 5


def redact(url: str) -> str:
    """The URL with any password replaced, for printing."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def libpq_url(url: str) -> str:
    """django-environ accepts postgres://, postgresql://, pgsql:// and psql://; libpq only the first two."""
    scheme, sep, rest = url.partition("://")
    if scheme in {"pgsql", "psql", "postgis"}:
        return f"postgresql{sep}{rest}"
    return url


def check_postgres(url: str) -> str | None:
    """None when the server answers; else the reason.

    The database itself need not exist: Django's test runner creates test_<name> through the server's
    `postgres` database, so a missing database is retried there before it counts as a failure.
    """
    conninfo = libpq_url(url)
    try:
        with psycopg.connect(conninfo, connect_timeout=TIMEOUT_SECONDS) as conn:
            conn.execute("SELECT 1")
        return None
    except psycopg.OperationalError as exc:
        first = str(exc).strip()
        if "does not exist" not in first or "database" not in first:
            return first
    try:
        with psycopg.connect(conninfo, dbname="postgres", connect_timeout=TIMEOUT_SECONDS) as conn:
            conn.execute("SELECT 1")
        return None
    except psycopg.OperationalError as exc:
        return f"{first}; and through database 'postgres': {str(exc).strip()}"


def check_redis(url: str) -> str | None:
    """None when Redis answers PING; else the reason."""
    try:
        client = redis.Redis.from_url(
            url, socket_connect_timeout=TIMEOUT_SECONDS, socket_timeout=TIMEOUT_SECONDS
        )
        try:
            if not client.ping():
                return "PING did not return PONG"
        finally:
            client.close()
        return None
    except (redis.RedisError, OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {str(exc).strip()}"


PG_HELP = """\
    If it is stopped, start it as root: scripts/start_services.sh
      (or: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start).
    Or point the tests at another server:
      DATABASE_URL=postgres://USER:PASSWORD@HOST:PORT/hall make test
    (the user needs CREATEDB: pytest creates and drops test_<name>)."""

REDIS_HELP = """\
    If it is stopped, start it as root: scripts/start_services.sh
      (or: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "").
    Or point the tests at another server:
      REDIS_URL=redis://HOST:PORT/0 make test"""


def main() -> int:
    database_url = os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL
    redis_url = os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL
    failures: list[str] = []

    reason = check_postgres(database_url)
    if reason is None:
        print(f"ok: PostgreSQL at {redact(database_url)}")
    else:
        failures.append(f"PostgreSQL is unreachable at {redact(database_url)}\n    {reason}\n{PG_HELP}")

    reason = check_redis(redis_url)
    if reason is None:
        print(f"ok: Redis at {redact(redis_url)}")
    else:
        failures.append(f"Redis is unreachable at {redact(redis_url)}\n    {reason}\n{REDIS_HELP}")

    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    if failures:
        print("error: the tests need PostgreSQL and Redis: they fail without them.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
