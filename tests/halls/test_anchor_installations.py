"""Audit anchors name their installation (issue 26): two databases beside one checkout, sharing the anchor
folder and the per-install key file (as a demo and a test run do by default), each with a venue 1, never
read each other's anchors: both verify as intact, and a chain cut short or wiped in one is caught in that one
only; an anchor file of another installation put in this one's folder is not read as this one's.

Each database is driven by its own processes (a script), on SQLite (the embedded demo) and on PostgreSQL (two
databases of the test server); both are copies of one migrated template (tests/migrated.py), as demos copied
from one file are: a copy gets an id of its own at its first anchor."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from tests import migrated

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import django

    django.setup()
    from decimal import Decimal
    from django.db import connection, transaction
    from halls.models import AuditChainHead, AuditEntry, Venue
    from halls.services import anchors, audit, installation
    from halls.services.verify import verify_audit

    step = sys.argv[1]


    def owner(sql_pg, sqlite_triggers):
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                for table in ("halls_auditentry", "halls_auditchainhead"):
                    cursor.execute(f"ALTER TABLE {table} {sql_pg} TRIGGER USER")
            elif sql_pg == "DISABLE":
                for name in sqlite_triggers:
                    cursor.execute(f'DROP TRIGGER IF EXISTS "{name}"')


    DROPPED = (
        "halls_auditentry_append_only_delete",
        "halls_auditchainhead_head_never_deleted_delete",
        "halls_auditchainhead_head_only_grows_update",
    )
    if step == "setup":
        venue = Venue.objects.create(
            name=sys.argv[2], licence_number="ML-1", jurisdiction="ML", hall_category="1",
            time_zone="Africa/Ceuta", line_percent=Decimal("10"), bingo_percent=Decimal("50"),
        )
        for i in range(int(sys.argv[3])):
            with transaction.atomic():
                audit.record(venue_id=venue.pk, actor="t", action="test.money", obj=venue, data={"i": i})
        anchors.write()
    elif step == "cut":  # the last two entries deleted and the head rewound, as the database owner
        owner("DISABLE", DROPPED)
        chain = list(AuditEntry.objects.order_by("pk"))
        AuditEntry.objects.filter(pk__in=[e.pk for e in chain[-2:]]).delete()
        AuditChainHead.objects.update(last_hash=chain[-3].hash, length=len(chain) - 2)
        owner("ENABLE", ())
    elif step == "wipe":
        owner("DISABLE", DROPPED)
        AuditEntry.objects.all().delete()
        AuditChainHead.objects.all().delete()
        owner("ENABLE", ())
    report = verify_audit().as_dict()
    print(json.dumps({
        "inst": installation.identity(),
        "folder": str(anchors.folder()),
        "report": report,
        "venues": [c for c in report["chains"] if c["kind"] == "venue"],
        "anchors": [c["reason"] for c in report["chains"] if c["kind"] == "anchors"],
    }))
    """
)


def _env(tmp_path: Path, **database: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SQLITE_PATH")}
    env.pop("HALL_AUDIT_KEY", None)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        # One checkout: one anchor folder and one per-install key file for both databases.
        HALL_AUDIT_ANCHOR_DIR=str(tmp_path / "anchors"),
        HALL_AUDIT_KEY_FILE=str(tmp_path / "audit.key"),
        **database,
    )
    return env


def _run(env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture
def sqlite_pair(tmp_path: Path) -> tuple[dict[str, str], dict[str, str]]:
    pair = []
    for name in ("a.sqlite3", "b.sqlite3"):  # each a copy of the migrated template, as the demos' are
        migrated.copy_sqlite(tmp_path / name)
        pair.append(_env(tmp_path, SQLITE_PATH=str(tmp_path / name)))
    return pair[0], pair[1]


@pytest.fixture
def postgresql_pair(tmp_path: Path) -> Iterator[tuple[dict[str, str], dict[str, str]]]:
    if connection.vendor != "postgresql":
        pytest.fail("the PostgreSQL pair needs the PostgreSQL test run")
    server = migrated.Server(connection.settings_dict)
    names = [f"{server.name}_inst_a", f"{server.name}_inst_b"]
    migrated.clone_postgresql(server, *names)  # two copies of the migrated template
    try:
        yield (
            _env(tmp_path, DATABASE_URL=server.url(names[0])),
            _env(tmp_path, DATABASE_URL=server.url(names[1])),
        )
    finally:
        with server.admin() as admin:
            for name in names:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def pair(request: pytest.FixtureRequest) -> tuple[dict[str, str], dict[str, str]]:
    found: tuple[dict[str, str], dict[str, str]] = request.getfixturevalue(f"{request.param}_pair")
    return found


def _venue(result: dict[str, Any]) -> dict[str, Any]:
    (venue,) = result["venues"]
    return dict(venue)


def test_two_databases_sharing_one_anchor_folder_never_read_each_others_anchors(
    pair: tuple[dict[str, str], dict[str, str]],
) -> None:
    env_a, env_b = pair
    a = _run(env_a, "setup", "Norte", "5")
    b = _run(env_b, "setup", "Sur", "3")  # its venue is venue 1 too, with another chain
    assert a["inst"] != b["inst"] and Path(a["folder"]).parent == Path(b["folder"]).parent
    assert (a["report"]["ok"], b["report"]["ok"]) == (True, True), (a, b)
    assert (_venue(a)["anchored_seq"], _venue(b)["anchored_seq"]) == (5, 3)
    # Each verifies again later as intact: neither read the other's venue-1 anchors as its own.
    assert _run(env_a, "verify")["report"]["ok"] is True
    assert _run(env_b, "verify")["report"]["ok"] is True

    cut = _run(env_b, "cut")  # B's chain cut short, its head rewound: B's anchor catches it
    venue = _venue(cut)
    assert not cut["report"]["ok"] and venue["anchored_seq"] == 3 and "removed" in venue["reason"], cut
    assert _run(env_a, "verify")["report"]["ok"] is True  # A is not B

    wiped = _run(env_a, "wipe")  # A's chain wiped: A's anchor catches it
    assert not wiped["report"]["ok"], wiped
    gone = _venue(wiped)
    assert (gone["anchored_seq"], gone["first_bad_seq"]) == (5, 1) and "removed" in gone["reason"], gone
    assert _venue(_run(env_b, "verify")) == venue  # B's report as it was

    # A's venue-1 file put in B's folder in place of B's: B reads no anchor of its own from it, and says so.
    shutil.copyfile(Path(a["folder"]) / "venue-1.jsonl", Path(b["folder"]) / "venue-1.jsonl")
    copied = _run(env_b, "verify")
    assert not copied["report"]["ok"] and _venue(copied)["anchored_seq"] is None, copied
    assert any("not this installation's anchor" in reason for reason in copied["anchors"]), copied
