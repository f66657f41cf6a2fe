"""An empty installation's SQLite database, migrated once and copied for every new embedded database of the
demos (`manage.py demo` on a first start, `manage.py demo_network` at every start): migrating from nothing
takes most of a minute; copying takes a moment.

The template is ``var/demo-template-<digest>.sqlite3``, the digest of every installed app's migration files:
a changed migration makes a new one (the old ones are removed). Concurrent starts (the test runs) wait for
the one that migrates (a lock file beside it).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from django.apps import apps
from django.conf import settings

# What the migrating process must not inherit: it is embedded (SQLite).
EMBEDDED_ENV_DROPPED = (
    "DATABASE_URL",
    "REDIS_URL",
    "TEST_DATABASE_URL",
    "TEST_REDIS_URL",
    "HALL_TEST_DB",
    "SQLITE_PATH",
)
PREFIX = "demo-template-"


def migrations_digest() -> str:
    """A digest of every installed app's migration files."""
    digest = hashlib.sha256()
    for app in sorted(apps.get_app_configs(), key=lambda a: a.label):
        for path in sorted(Path(app.path, "migrations").glob("*.py")):
            digest.update(f"{app.label}/{path.name}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def migrated_template(say: Callable[[str], None]) -> Path:
    """The template for the migrations as they are now, migrated first if missing."""
    folder = Path(settings.VAR_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    template = folder / f"{PREFIX}{migrations_digest()}.sqlite3"
    if template.exists():
        return template
    with (folder / f"{PREFIX}lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another start may be migrating it: wait for it
        if template.exists():
            return template
        for stale in folder.glob(f"{PREFIX}*.sqlite3*"):
            stale.unlink()
        partial = folder / f"{PREFIX}partial-{os.getpid()}.sqlite3"
        say(f"Migrating an empty database once ({template.name}, kept for the next starts)…")
        env = {k: v for k, v in os.environ.items() if k not in EMBEDDED_ENV_DROPPED}
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0"],
            cwd=settings.BASE_DIR,
            env={**env, "SQLITE_PATH": str(partial)},
            check=True,
        )
        with contextlib.closing(sqlite3.connect(partial)) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.execute("PRAGMA journal_mode=DELETE")
        os.replace(partial, template)
    return template


def copy_template(target: Path, say: Callable[[str], None]) -> None:
    """A new database at `target` (none there yet): the template's copy."""
    template = migrated_template(say)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.copyfile(template, partial)
    os.replace(partial, target)
