"""The embedded demo's SQLite: the same rows are append-only (SQLite triggers made after migrate) and the
same verification runs. A subprocess, since the test run itself is on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from tests import migrated

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import json
    import django

    django.setup()
    from decimal import Decimal
    from django.db import DatabaseError, connection, transaction
    from halls.models import AuditChainHead, AuditEntry, Venue
    from halls.services import anchors, audit
    from halls.services.verify import verify_audit

    venue = Venue.objects.create(
        name="Demo", licence_number="ML-1", jurisdiction="ML", hall_category="1",
        time_zone="Africa/Ceuta", line_percent=Decimal("10"), bingo_percent=Decimal("50"),
    )
    for i in range(4):
        with transaction.atomic():
            audit.record(venue_id=venue.pk, actor="t", action="test.money", obj=venue, data={"i": i})
    anchors.write()
    refused = []
    for attempt in (
        lambda: AuditEntry.objects.filter(venue_id=venue.pk).update(action="x"),
        lambda: AuditEntry.objects.filter(venue_id=venue.pk).delete(),
        lambda: AuditChainHead.objects.filter(venue_id=venue.pk).update(length=1),
    ):
        try:
            with transaction.atomic():
                attempt()
        except DatabaseError as exc:
            refused.append("append-only" in str(exc))
    intact = verify_audit().as_dict()
    with connection.cursor() as cursor:  # whoever can write the file can drop the triggers
        cursor.execute('DROP TRIGGER "halls_auditentry_append_only_update"')
    second = AuditEntry.objects.filter(venue_id=venue.pk).order_by("pk")[1]
    AuditEntry.objects.filter(pk=second.pk).update(data={"i": 99})
    tampered = verify_audit().as_dict()
    print(json.dumps({"refused": refused, "intact": intact, "tampered": tampered, "second": second.pk}))
    """
)


def test_on_sqlite_rows_are_append_only_and_a_tamper_is_named(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        SQLITE_PATH=str(tmp_path / "hall.sqlite3"),
        HALL_AUDIT_KEY="sqlite-test-key",
        HALL_AUDIT_ANCHOR_DIR=str(tmp_path / "anchors"),
    )
    run: dict[str, Any] = {"cwd": ROOT, "env": env, "capture_output": True, "text": True, "timeout": 300}
    migrated.copy_sqlite(tmp_path / "hall.sqlite3")  # the run's migrated template: migrate made its triggers
    done = subprocess.run([sys.executable, "-c", SCRIPT], **run)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])

    assert result["refused"] == [True, True, True]
    assert result["intact"]["ok"] is True
    tampered = result["tampered"]
    assert tampered["ok"] is False
    venue = next(c for c in tampered["chains"] if c["kind"] == "venue")
    assert (venue["first_bad_seq"], venue["first_bad_id"]) == (2, result["second"])
    triggers = next(c for c in tampered["chains"] if c["kind"] == "triggers")
    assert "halls_auditentry_append_only_update" in triggers["reason"]
