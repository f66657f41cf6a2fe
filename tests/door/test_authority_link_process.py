"""The venue's link process (`manage.py run_link`, a real process) with only the gaming authority set
(a venue of no network): it sends the queued self-exclusion to the fake authority (a real process too), marks
it sent, and stops cleanly on SIGTERM. PostgreSQL only (the process shares the test's database)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from halls.door.services import admission
from halls.link.models import Destination, OutboxMessage
from halls.models import Venue
from halls.services import venueclock
from tests.door.authority_support import FakeAuthority
from tests.door.register_support import dni

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    return f"postgres://{db.get('USER') or 'postgres'}{password}@{host}:{port}/{db['NAME']}"


@pytest.mark.django_db(transaction=True)
def test_run_link_sends_the_self_exclusion_to_the_authority(venue: Venue, authority: FakeAuthority) -> None:
    found = admission.self_exclude(
        venue=venue,
        document=admission.document_from("DNI", dni(23_000_001)),
        until=venueclock.today(venue) + timedelta(days=90),
        actor="test",
    )
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "DATABASE_URL": database_url(),
        "HALL_ROLE": "venue",
        "HALL_CENTRAL_URL": "",
        "HALL_AUTHORITY_URL": authority.url,
        "HALL_LINK_BACKOFF_MAX_SECONDS": "0.5",
    }
    env.pop("TEST_DATABASE_NAME", None)
    process = subprocess.Popen(
        [sys.executable, "manage.py", "run_link"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not authority.notices() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        notices = authority.notices()
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    assert [n["payload"]["self_exclusion"] for n in notices] == [found.pk], output
    assert process.returncode == 0, output
    assert "notices to the authority" in output and dni(23_000_001) not in output
    message = OutboxMessage.objects.get(venue=venue, destination=Destination.AUTHORITY)
    assert message.acked_at is not None and "personal" not in message.payload


def test_a_venue_without_the_authoritys_url_is_warned_at_deploy(settings: Any) -> None:
    from halls.door.checks import check_authority

    settings.HALL_ROLE, settings.HALL_EMBEDDED, settings.HALL_AUTHORITY_URL = "venue", False, ""
    assert [m.id for m in check_authority()] == ["door.W001"]
    settings.HALL_AUTHORITY_URL = "https://authority.example"
    assert check_authority() == []
