"""Anchors: every chain's head published outside the database, signed and dated. A keyed chain stops an edit
from being recomputed, not a cut: a chain whose last entries (or all) were deleted and its head rewound
still verifies, but no longer reaches its anchor.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from halls import hooks
from halls.chains import Anchor, ChainHead
from halls.models import AuditChainHead
from halls.services import audit_keys

log = logging.getLogger("hall.anchors")
TAIL_BYTES = 64 * 1024  # the latest anchors are at the end of each file: read only its tail


def _dir() -> Path:
    return Path(settings.HALL_AUDIT_ANCHOR_DIR)


def _path(kind: str, chain_id: int) -> Path:
    """One file of JSON lines per chain under HALL_AUDIT_ANCHOR_DIR (``venue-3.jsonl``, ``pool-7.jsonl``)."""
    return _dir() / f"{kind}-{chain_id}.jsonl"


def _canonical(line: dict[str, Any]) -> bytes:
    body = {k: v for k, v in line.items() if k != "sig"}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def sign(line: dict[str, Any], keys: audit_keys.Keyring) -> dict[str, Any]:
    """{"v": 1, "kind", "id", "seq", "hash", "at"} with "alg" and "sig": an HMAC-SHA256 of the rest under a
    key derived from the audit key (``audit_keys``), so no line is forged or edited without the key."""
    key = keys.anchor_key(keys.alg)
    assert key is not None  # the current key is always held
    return {
        **line,
        "alg": keys.alg,
        "sig": hmac.new(key, _canonical({**line, "alg": keys.alg}), hashlib.sha256).hexdigest(),
    }


def _valid(line: dict[str, Any], keys: audit_keys.Keyring) -> str:
    """Why the line is not a genuine anchor, or ''."""
    key = keys.anchor_key(str(line.get("alg", "")))
    if key is None:
        return f"signed with a key this installation does not hold ({line.get('alg')})"
    expected = hmac.new(key, _canonical(line), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, str(line.get("sig", ""))):
        return "its signature does not match (forged or edited)"
    return ""


def heads() -> list[ChainHead]:
    """Every chain's head now: the venues' audit chains, then the registered ones (pool seals)."""
    venue_heads = [
        ChainHead("venue", venue_id, length, last_hash)
        for venue_id, length, last_hash in AuditChainHead.objects.filter(length__gt=0)
        .order_by("venue_id")
        .values_list("venue_id", "length", "last_hash")
    ]
    return venue_heads + hooks.chain_heads()


@dataclass(frozen=True)
class AnchorFile:
    kind: str
    id: int
    latest: Anchor | None
    problem: str = ""


def _read(path: Path, keys: audit_keys.Keyring) -> tuple[Anchor | None, str]:
    """The highest genuine anchor in the file's tail, and what is wrong with the file (or '')."""
    size = path.stat().st_size
    with path.open("rb") as f:
        f.seek(max(0, size - TAIL_BYTES))
        text = f.read().decode("utf-8", errors="replace")
    lines = text.split("\n")
    if size > TAIL_BYTES:
        lines = lines[1:]  # the first may be cut in the middle
    if lines and not text.endswith("\n"):
        lines = lines[:-1]  # a line still being written (or torn by a crash) is not an anchor yet
    best: Anchor | None = None
    for number, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            problem = _valid(line, keys)
        except (ValueError, AttributeError):
            problem = "it is not an anchor line"
        if problem:
            return best, f"{path.name}: a line near the end ({number + 1} of the tail) is bad: {problem}"
        if best is None or int(line["seq"]) >= best.seq:
            best = Anchor(seq=int(line["seq"]), hash=str(line["hash"]), at=str(line["at"]))
    return best, ""


def read_all() -> dict[tuple[str, int], AnchorFile]:
    """Every anchored chain's latest genuine anchor: the verifier checks that the chain reaches its length
    with the same hash there (a file with lines that do not verify is itself reported). Read BEFORE the
    verification's snapshot: an anchor is written only after its head committed, so the snapshot then holds
    every head anchored here."""
    keys = audit_keys.keyring()
    found: dict[tuple[str, int], AnchorFile] = {}
    directory = _dir()
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*-*.jsonl")):
        kind, _, number = path.stem.rpartition("-")
        if not number.isdigit():
            continue
        latest, problem = _read(path, keys)
        found[(kind, int(number))] = AnchorFile(kind, int(number), latest, problem)
    return found


def write() -> list[dict[str, Any]]:
    """Append an anchor for every chain whose head moved since its last anchor, and POST them (one JSON
    list) to HALL_AUDIT_ANCHOR_URL when set; returns the new lines. Beat runs it every
    HALL_AUDIT_ANCHOR_SECONDS (``manage.py anchor_audit`` on demand)."""
    keys = audit_keys.keyring()
    at = timezone.now().isoformat()
    directory = _dir()
    directory.mkdir(parents=True, exist_ok=True)
    written: list[dict[str, Any]] = []
    for head in heads():
        path = _path(head.kind, head.id)
        latest = _read(path, keys)[0] if path.exists() else None
        if latest is not None and (latest.seq, latest.hash) == (head.seq, head.hash):
            continue
        line = sign(
            {"v": 1, "kind": head.kind, "id": head.id, "seq": head.seq, "hash": head.hash, "at": at}, keys
        )
        data = (json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n").encode()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
        try:
            os.write(fd, data)  # one write of a short line to an O_APPEND file: never interleaved
            os.fsync(fd)
        finally:
            os.close(fd)
        written.append(line)
    if written and settings.HALL_AUDIT_ANCHOR_URL:
        _post(settings.HALL_AUDIT_ANCHOR_URL, written)
    return written


def _post(url: str, lines: list[dict[str, Any]]) -> None:
    """Send the new anchors to the configured endpoint; the files hold them whatever happens here."""
    request = urllib.request.Request(  # noqa: S310 - an operator-configured http(s) URL
        url, data=json.dumps(lines).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310
            response.read()
    except OSError:
        log.warning("could not post %d audit anchors to %s", len(lines), url, exc_info=True)
