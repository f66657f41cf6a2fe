"""Anchors anyone can verify (issue 28): the product signs every chain head with the installation's Ed25519
key; the public key is published at /.well-known/hall-anchor-key (no login) and on the inspector's pages;
scripts/verify_anchors.py, run alone (no Django, only the public key), verifies the anchor files the
product wrote, refuses an edited line or a line signed by another key (naming it), and, given an export of
the chain heads, says whether each chain still reaches its anchor. An HMAC anchor written before the key
still verifies in the product."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import transaction
from django.test import Client

from halls import anchor_lines
from halls.models import AuditChainHead, AuditEntry, Role, Venue
from halls.services import anchor_key, anchors, audit, audit_keys, installation
from halls.services.verify import verify_audit
from tests.conftest import make_user
from tests.tampering import as_db_owner

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "verify_anchors.py"


@pytest.fixture(autouse=True)
def keys(settings: Any, tmp_path: Path) -> None:
    settings.HALL_AUDIT_KEY = "anchor-signature-test-key"
    settings.HALL_ANCHOR_SIGNING_KEY_FILE = str(tmp_path / "keys" / "anchor.pem")


def write_chain(venue: Venue, n: int) -> None:
    for i in range(n):
        with transaction.atomic():
            audit.record(venue_id=venue.pk, actor="t", action="test.money", obj=venue, data={"i": i})


def run_script(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The script as a third party runs it: a clean environment, another folder, Python's import log on."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    return subprocess.run(
        [sys.executable, "-X", "importtime", str(SCRIPT), *map(str, args)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def published_key(tmp_path: Path) -> Path:
    """The public key as anyone fetches it: the well-known URL, anonymous."""
    response = Client().get("/.well-known/hall-anchor-key")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    document = response.json()
    assert document["alg"] == "ed25519" and document["installation"] == installation.identity()
    assert "PRIVATE" not in response.content.decode()
    path = tmp_path / "hall-anchor-key.json"
    path.write_text(json.dumps(document))
    return path


def test_the_product_signs_with_ed25519_and_the_script_verifies_with_the_public_key_alone(
    venue: Venue, other_venue: Venue, tmp_path: Path
) -> None:
    write_chain(venue, 3)
    write_chain(other_venue, 2)
    written = anchors.write()
    assert {line["alg"] for line in written} == {"ed25519"} and {line["v"] for line in written} == {3}
    assert (tmp_path / "keys" / "anchor.pem").stat().st_mode & 0o077 == 0
    assert verify_audit().ok  # the product reads its own Ed25519 anchors
    key = published_key(tmp_path)

    done = run_script("--key", key, anchors.folder(), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.startswith(f"verified: {len(written)} anchor lines in 2 files signed by ed25519:")
    imported = [
        line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")
    ]
    assert "halls.anchor_lines" in imported and "cryptography" in imported
    assert not [name for name in imported if name.split(".")[0] in {"django", "rest_framework", "config"}]
    # The bare hex key works as well.
    hex_key = json.loads(key.read_text())["key"]
    assert run_script("--key", hex_key, anchors.path("venue", venue.pk), cwd=tmp_path).returncode == 0


def test_a_tampered_line_is_refused_and_named(venue: Venue, tmp_path: Path) -> None:
    write_chain(venue, 2)
    anchors.write()
    write_chain(venue, 2)
    anchors.write()
    file = anchors.path("venue", venue.pk)
    lines = file.read_text().splitlines()
    first = json.loads(lines[0])
    first["seq"] = 1  # a shorter chain anchored: what someone who cut the chain would want
    lines[0] = json.dumps(first, sort_keys=True, separators=(",", ":"))
    file.write_text("\n".join(lines) + "\n")

    done = run_script("--key", published_key(tmp_path), file, cwd=tmp_path)
    assert done.returncode == 1
    assert (
        f"BAD  venue-{venue.pk}.jsonl: line 1: its signature does not match (forged or edited)" in done.stdout
    )
    assert "line 2" not in done.stdout  # the genuine line is not blamed


def test_a_line_signed_by_another_key_is_refused(venue: Venue, tmp_path: Path) -> None:
    write_chain(venue, 2)
    anchors.write()
    file = anchors.path("venue", venue.pk)
    genuine = json.loads(file.read_text().splitlines()[0])
    body = {k: genuine[k] for k in ("v", "inst", "kind", "id", "at")} | {"seq": 9, "hash": "ab" * 32}
    forged = anchor_lines.sign(body, Ed25519PrivateKey.generate())
    with file.open("a") as out:
        out.write(json.dumps(forged, sort_keys=True, separators=(",", ":")) + "\n")
    key = published_key(tmp_path)

    done = run_script("--key", key, file, cwd=tmp_path)
    assert done.returncode == 1
    assert f"venue-{venue.pk}.jsonl: line 2: it is signed by another key ({forged['kid']!r}" in done.stdout
    # Claiming the genuine key id does not help: the signature does not match.
    forged_kid = {**forged, "kid": genuine["kid"]}
    file.write_text(file.read_text().splitlines()[0] + "\n" + json.dumps(forged_kid) + "\n")
    done = run_script("--key", key, file, cwd=tmp_path)
    assert done.returncode == 1 and "line 2: its signature does not match" in done.stdout
    # And the product refuses the file as well.
    assert not verify_audit(venue_ids=[venue.pk]).ok


def export(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    call_command("export_chain_heads", "--out", str(out), stdout=StringIO())
    return out


def test_with_an_export_of_the_heads_the_script_says_whether_each_chain_reaches_its_anchor(
    venue: Venue, tmp_path: Path
) -> None:
    write_chain(venue, 4)
    anchors.write()
    key = published_key(tmp_path)
    done = run_script("--key", key, "--heads", export(tmp_path, "h1.json"), anchors.folder(), cwd=tmp_path)
    assert done.returncode == 0 and f"ok   venue {venue.pk}: reaches its anchor at 4" in done.stdout
    write_chain(venue, 3)  # grown since the anchor: the export gives the link at 4
    done = run_script("--key", key, "--heads", export(tmp_path, "h2.json"), anchors.folder(), cwd=tmp_path)
    assert done.returncode == 0 and "reaches its anchor at 4, 3 links since" in done.stdout

    # The chain cut back to 2 entries (its head rewound): it no longer reaches its anchor.
    kept = list(AuditEntry.objects.filter(venue_id=venue.pk).order_by("pk"))[:2]
    with as_db_owner(AuditEntry, AuditChainHead):
        AuditEntry.objects.filter(venue_id=venue.pk).exclude(pk__in=[e.pk for e in kept]).delete()
        AuditChainHead.objects.filter(venue_id=venue.pk).update(length=2, last_hash=kept[-1].hash)
    done = run_script("--key", key, "--heads", export(tmp_path, "h3.json"), anchors.folder(), cwd=tmp_path)
    assert done.returncode == 1
    assert f"venue {venue.pk}: 2 links, but anchored at 4: links were removed" in done.stdout


def test_an_hmac_anchor_from_before_the_key_still_verifies_in_the_product(
    venue: Venue, tmp_path: Path
) -> None:
    write_chain(venue, 3)
    head = AuditChainHead.objects.get(venue_id=venue.pk)
    inst = installation.identity()
    old = anchors.sign_hmac(
        {"v": 2, "inst": inst, "kind": "venue", "id": venue.pk, "seq": 3, "hash": head.last_hash, "at": "x"},
        audit_keys.keyring(),
    )
    anchors.folder().mkdir(parents=True, exist_ok=True)
    anchors.path("venue", venue.pk).write_text(json.dumps(old) + "\n")
    chain = next(c for c in verify_audit(venue_ids=[venue.pk]).chains if c.kind == "venue")
    assert chain.ok and chain.anchored_seq == 3
    write_chain(venue, 1)
    assert anchors.write()[0]["alg"] == "ed25519"  # the next one is signed with the key
    assert verify_audit(venue_ids=[venue.pk]).ok
    # The script counts the HMAC line apart: verified lines only, unless --strict.
    key = published_key(tmp_path)
    done = run_script("--key", key, anchors.folder(), cwd=tmp_path)
    assert done.returncode == 0 and "1 lines from before the Ed25519 key" in done.stdout
    assert run_script("--key", key, "--strict", anchors.folder(), cwd=tmp_path).returncode == 1


def test_the_inspector_reads_the_public_key_on_the_audit_page(venue: Venue, tmp_path: Path) -> None:
    inspector: User = make_user("inspector", venue, Role.INSPECTOR)
    client = Client()
    client.force_login(inspector)
    document = anchor_key.document()
    for url in (f"/inspector/venues/{venue.pk}/audit/", "/inspector/"):
        page = client.get(url).content.decode()
        assert document["key"] in page and document["kid"] in page, url
