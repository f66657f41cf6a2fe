"""Migrated templates: a database that `manage.py migrate` made once per set of migrations, copied wherever
the tests need an empty hall (the test run's own databases, the installations of the e2e tests, the
anchors' pairs) instead of migrating again, which costs about a minute of CPU each time.

- PostgreSQL: ``<stem>_tpl_<hash>`` on the test server, cloned with ``CREATE DATABASE … TEMPLATE`` (a
  second). The stem is the run's database name without pytest-django's ``test_`` and xdist's ``_gwN``: the
  run's workers share one template; the first to need it builds it under an advisory lock, the others wait.
- SQLite: ``var/templates/hall-<hash>.sqlite3``, copied as a file, built under a file lock.

The hash covers every migration file and Django's version: a changed migration makes a new template and the
old one is dropped. A template is renamed into place only once whole, so an interrupted build leaves none.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import django
import psycopg

ROOT = Path(__file__).resolve().parents[1]
SQLITE_TEMPLATES = ROOT / "var" / "templates"
BUILD_TIMEOUT = 600  # seconds for one `migrate` on a loaded machine


def migrations_hash() -> str:
    digest = hashlib.sha256(django.get_version().encode())
    for path in sorted([*ROOT.glob("*/migrations/*.py"), *ROOT.glob("*/*/migrations/*.py")]):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


def _clean_env(**more: str) -> dict[str, str]:
    """The environment of a `migrate` of its own: none of the test run's database settings."""
    env = {k: v for k, v in os.environ.items() if k not in ("TEST_DATABASE_NAME", "HALL_TEST_DB")}
    env.update(PYTHONUNBUFFERED="1", **more)
    return env


def _migrate(env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"migrate for a template failed:\n{done.stdout}\n{done.stderr}")


# --- PostgreSQL ---------------------------------------------------------------------------------------------


class Server:
    """The test server of a Django database's settings: admin connections and URLs of its databases."""

    def __init__(self, settings_dict: dict[str, Any]) -> None:
        self.host = settings_dict.get("HOST") or "127.0.0.1"
        self.port = int(settings_dict.get("PORT") or 5432)
        self.user = settings_dict.get("USER") or "postgres"
        self.password = settings_dict.get("PASSWORD") or None
        self.name = str(settings_dict["NAME"])

    def url(self, name: str) -> str:
        auth = self.user + (f":{self.password}" if self.password else "")
        return f"postgres://{auth}@{self.host}:{self.port}/{name}"

    def admin(self) -> psycopg.Connection[tuple[Any, ...]]:
        return psycopg.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            dbname="postgres",
            autocommit=True,
        )


def template_stem(name: str) -> str:
    """`test_hall_gw1` -> `hall`: the run's workers and its test databases share one stem."""
    return re.sub(r"_gw\d+$", "", name.removeprefix("test_"))


def postgresql_template(server: Server) -> str:
    """The name of the migrated template of `server`'s run, built if missing."""
    stem = f"{template_stem(server.name)}_tpl_"
    name = stem + migrations_hash()
    with server.admin() as admin:
        admin.execute("SELECT pg_advisory_lock(hashtext(%s))", [stem])  # one builder; the others wait
        try:
            existing = [
                row[0]
                for row in admin.execute(
                    "SELECT datname FROM pg_database WHERE datname LIKE %s", [stem.replace("_", r"\_") + "%"]
                )
            ]
            for old in existing:
                if old != name:
                    admin.execute(f'DROP DATABASE IF EXISTS "{old}" WITH (FORCE)')
            if name not in existing:
                building = name + "_new"
                admin.execute(f'CREATE DATABASE "{building}"')
                _migrate(_clean_env(DATABASE_URL=server.url(building)))
                admin.execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
        finally:
            admin.execute("SELECT pg_advisory_unlock(hashtext(%s))", [stem])
    return name


def clone_postgresql(server: Server, *names: str) -> None:
    """Each of `names` made afresh as a copy of the run's template."""
    template = postgresql_template(server)
    with server.admin() as admin:
        for name in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')


# --- SQLite -------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def sqlite_template() -> Path:
    """The migrated SQLite file of this checkout's migrations, built if missing."""
    path = SQLITE_TEMPLATES / f"hall-{migrations_hash()}.sqlite3"
    with _file_lock(SQLITE_TEMPLATES / ".lock"):
        if not path.exists():
            for old in SQLITE_TEMPLATES.glob("hall-*.sqlite3*"):
                old.unlink()
            building = path.with_name(path.name + ".new")
            building.unlink(missing_ok=True)
            env = _clean_env(SQLITE_PATH=str(building))
            for key in ("DATABASE_URL", "REDIS_URL"):
                env.pop(key, None)
            _migrate(env)
            _checkpoint(building)
            building.rename(path)
    return path


def _checkpoint(path: Path) -> None:
    """The WAL folded into the file, so the file alone is the whole database."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def copy_sqlite(target: Path) -> None:
    """`target` made afresh as a copy of the migrated template (its WAL and shared-memory files removed)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    shutil.copyfile(sqlite_template(), target)
