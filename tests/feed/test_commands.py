"""The feed's commands: `feed_identity` on an installation, `regulator_register` on the node, and which
roles run the link process with what. PostgreSQL and SQLite."""

from __future__ import annotations

import getpass
import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, transaction

from halls import anchor_lines
from halls.regulator.models import Installation, RegistryChange
from halls.services import anchor_key, installation
from tests.feed.feed_support import OTHER, public_hex

pytestmark = pytest.mark.django_db


def test_feed_identity_prints_the_installation_s_id_and_public_key(settings: Any) -> None:
    settings.HALL_ROLE = "central"
    out = StringIO()
    call_command("feed_identity", stdout=out)
    document = json.loads(out.getvalue())
    assert document["installation"] == installation.identity()
    assert document["key"] == anchor_lines.raw_public(anchor_key.signing_key().public_key()).hex()
    assert document["role"] == "central"


def test_regulator_register_registers_updates_and_refuses_what_is_wrong(settings: Any) -> None:
    settings.HALL_ROLE = "regulator"
    uid = "0011223344556677"
    out = StringIO()
    call_command(
        "regulator_register", uid, "Bingo Sur", "venue", "ml", public_hex(), "--licence", "ML-B-9",
        "--silence-seconds", "45", stdout=out,
    )  # fmt: skip
    found = Installation.objects.get(uid=uid)
    assert (found.name, found.jurisdiction, found.silence_seconds, found.public_key) == (
        "Bingo Sur",
        "ML",
        45,
        public_hex(),
    )
    assert "next message 1" in out.getvalue()
    call_command(
        "regulator_register", uid, "Bingo Sur II", "venue", "ML", public_hex(), "--licence", "ML-B-9"
    )
    assert Installation.objects.get(uid=uid).name == "Bingo Sur II"
    with pytest.raises(CommandError, match="another key"):
        call_command("regulator_register", uid, "X", "venue", "ML", public_hex(OTHER), "--licence", "ML-B-9")
    call_command(
        "regulator_register",
        uid,
        "X",
        "venue",
        "ML",
        public_hex(OTHER),
        "--licence",
        "ML-B-9",
        "--replace-key",
    )
    assert Installation.objects.get(uid=uid).public_key == public_hex(OTHER)
    call_command(  # the same again: nothing changes, nothing recorded
        "regulator_register", uid, "X", "venue", "ML", public_hex(OTHER), "--licence", "ML-B-9", "--by", "ana"
    )
    # Every change recorded with who made it and what it changed (the refused one: nothing).
    changes = list(RegistryChange.objects.filter(installation__uid=uid).order_by("pk"))
    assert [(c.action, c.actor) for c in changes] == [
        ("registered", getpass.getuser()),
        ("updated", getpass.getuser()),
        ("key_replaced", getpass.getuser()),
    ]
    assert changes[1].before == {"name": "Bingo Sur", "silence_seconds": 45}
    assert changes[1].after == {"name": "Bingo Sur II", "silence_seconds": 0}
    assert changes[2].before == {"name": "Bingo Sur II", "public_key": public_hex()}
    assert changes[2].after == {"name": "X", "public_key": public_hex(OTHER)}
    with pytest.raises(DatabaseError), transaction.atomic():  # append-only
        RegistryChange.objects.filter(pk=changes[0].pk).update(actor="someone else")
    with pytest.raises(CommandError, match="64 hex"):
        call_command("regulator_register", "aaaabbbbccccdddd", "Y", "central", "ML", "nothex")
    with pytest.raises(CommandError, match="licence"):
        call_command("regulator_register", "aaaabbbbccccdddd", "Y", "venue", "ML", public_hex())
    with pytest.raises(CommandError, match="16 hex"):
        call_command("regulator_register", "XYZ", "Y", "central", "ML", public_hex())
    assert Installation.objects.count() == 1
    settings.HALL_ROLE = "venue"
    with pytest.raises(CommandError, match="regulator"):
        call_command("regulator_register", "aaaabbbbccccdddd", "Y", "central", "ML", public_hex())


@pytest.mark.parametrize(
    ("role", "urls", "says"),
    [
        ("regulator", {}, "runs at a venue or a central"),
        ("central", {}, "HALL_REGULATOR_URL"),
        ("venue", {}, "Nothing to link"),
        ("venue", {"HALL_CENTRAL_URL": "http://central.test"}, "HALL_LINK_VENUE"),
    ],
)
def test_run_link_says_what_it_lacks(settings: Any, role: str, urls: dict[str, str], says: str) -> None:
    settings.HALL_ROLE = role
    settings.HALL_CENTRAL_URL = settings.HALL_AUTHORITY_URL = settings.HALL_REGULATOR_URL = ""
    settings.HALL_LINK_VENUE = ""
    for name, value in urls.items():
        setattr(settings, name, value)
    with pytest.raises(CommandError, match=says):
        call_command("run_link")
