"""Anchors: every chain's head published outside the database, signed and dated. A keyed chain stops an edit
from being recomputed, not a cut: a chain whose last entries (or all) were deleted and its head rewound
still verifies, but no longer reaches its anchor.

Anchors name their installation (halls.services.installation): each installation's files are in a folder
of its own under HALL_AUDIT_ANCHOR_DIR and each line carries its id under the signature, so two databases
sharing the folder (and the per-install key) never read each other's anchors: venue 1 of one is not
venue 1 of the other. Files from before the ids (``venue-3.jsonl`` at the folder's top) are no
installation's and are not read.

Lines are signed with the installation's Ed25519 key (v3, halls.anchor_lines, halls.services.anchor_key), so
anyone holding the published public key verifies them (scripts/verify_anchors.py); lines written before
(v2) carry an HMAC under a key derived from the audit key and verify here as before.
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
from django.db import transaction
from django.utils import timezone

from halls import anchor_lines, hooks
from halls.chains import Anchor, ChainHead
from halls.feed.kinds import FeedKind
from halls.feed.services import emit
from halls.models import AuditChainHead, AuditEntry
from halls.services import anchor_key, audit, audit_keys, installation

log = logging.getLogger("hall.anchors")
TAIL_BYTES = 64 * 1024  # the latest anchors are at the end of each file: read only its tail


def folder(inst: str | None = None) -> Path:
    """This installation's anchors (or `inst`'s): HALL_AUDIT_ANCHOR_DIR/<installation id>/."""
    return Path(settings.HALL_AUDIT_ANCHOR_DIR) / (inst or installation.identity())


def path(kind: str, chain_id: int, inst: str | None = None) -> Path:
    """One file of JSON lines per chain in the installation's folder (``venue-3.jsonl``, ``pool-7.jsonl``)."""
    return folder(inst) / f"{kind}-{chain_id}.jsonl"


def _canonical(line: dict[str, Any]) -> bytes:
    body = {k: v for k, v in line.items() if k != "sig"}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def sign(line: dict[str, Any]) -> dict[str, Any]:
    """{"v": 3, "inst", "kind", "id", "seq", "hash", "at"} with "alg", "kid" and "sig": an Ed25519
    signature of the rest under the installation's key, so no line is forged or edited without it (nor
    moved to another installation's folder: its "inst" is signed), and anyone can check it."""
    return anchor_lines.sign({**line, "v": anchor_lines.VERSION}, anchor_key.signing_key())


def sign_hmac(line: dict[str, Any], keys: audit_keys.Keyring) -> dict[str, Any]:
    """A v2 line, as anchors were signed before the Ed25519 key: an HMAC-SHA256 of the rest under a key
    derived from the audit key (``audit_keys``). Kept to say what those lines are (they still verify)."""
    key = keys.anchor_key(keys.alg)
    assert key is not None  # the current key is always held
    return {
        **line,
        "alg": keys.alg,
        "sig": hmac.new(key, _canonical({**line, "alg": keys.alg}), hashlib.sha256).hexdigest(),
    }


def _valid(line: dict[str, Any], keys: audit_keys.Keyring, inst: str) -> str:
    """Why the line is not a genuine anchor of installation `inst`, or ''."""
    if line.get("inst") != inst:
        return f"it is not this installation's anchor (installation {line.get('inst')!r}, this one {inst!r})"
    if line.get("alg") == anchor_lines.ALG:
        return anchor_lines.check_line(line, anchor_key.signing_key().public_key(), inst)
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


def _read(file: Path, keys: audit_keys.Keyring, inst: str) -> tuple[Anchor | None, str]:
    """The highest genuine anchor of installation `inst` in the file's tail, and what is wrong with the
    file (or '')."""
    size = file.stat().st_size
    with file.open("rb") as f:
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
            problem = _valid(line, keys, inst)
        except (ValueError, AttributeError):
            problem = "it is not an anchor line"
        if problem:
            return best, f"{file.name}: a line near the end ({number + 1} of the tail) is bad: {problem}"
        if best is None or int(line["seq"]) >= best.seq:
            best = Anchor(seq=int(line["seq"]), hash=str(line["hash"]), at=str(line["at"]))
    return best, ""


def read_all() -> dict[tuple[str, int], AnchorFile]:
    """Every anchored chain's latest genuine anchor: the verifier checks that the chain reaches its length
    with the same hash there (a file with lines that do not verify is itself reported). Read BEFORE the
    verification's snapshot: an anchor is written only after its head committed, so the snapshot then holds
    every head anchored here."""
    keys = audit_keys.keyring()
    inst = installation.identity()
    found: dict[tuple[str, int], AnchorFile] = {}
    directory = folder(inst)
    if not directory.is_dir():
        return found
    for file in sorted(directory.glob("*-*.jsonl")):
        kind, _, number = file.stem.rpartition("-")
        if not number.isdigit():
            continue
        latest, problem = _read(file, keys, inst)
        found[(kind, int(number))] = AnchorFile(kind, int(number), latest, problem)
    return found


def write() -> list[dict[str, Any]]:
    """Append an anchor for every chain whose head moved since its last anchor, owe them to the regulator's
    node (the feed's "anchor" message, when the feed is on) and POST them (one JSON list) to
    HALL_AUDIT_ANCHOR_URL when set; returns the new lines. Beat runs it every HALL_AUDIT_ANCHOR_SECONDS
    (``manage.py anchor_audit`` on demand)."""
    keys = audit_keys.keyring()
    inst = installation.identity()
    at = timezone.now().isoformat()
    folder(inst).mkdir(parents=True, exist_ok=True)
    written: list[dict[str, Any]] = []
    chains = heads()
    for head in chains:
        file = path(head.kind, head.id, inst)
        latest = _read(file, keys, inst)[0] if file.exists() else None
        if latest is not None and (latest.seq, latest.hash) == (head.seq, head.hash):
            continue
        body = {"inst": inst, "kind": head.kind, "id": head.id, "seq": head.seq, "hash": head.hash}
        line = sign({**body, "at": at})
        data = (json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n").encode()
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
        try:
            os.write(fd, data)  # one write of a short line to an O_APPEND file: never interleaved
            os.fsync(fd)
        finally:
            os.close(fd)
        written.append(line)
    if written:
        _feed(written, chains)
    if written and settings.HALL_AUDIT_ANCHOR_URL:
        _post(settings.HALL_AUDIT_ANCHOR_URL, written)
    return written


def _feed(lines: list[dict[str, Any]], chains: list[ChainHead]) -> None:
    """The new lines and every chain's head, owed to the regulator's node (halls.feed): its own message,
    committed once the lines are on disk (a crash between the two leaves the lines in the files, and the
    next anchor's message carries every head)."""
    payload = {
        "key_id": anchor_lines.key_id(anchor_key.signing_key().public_key()),
        "lines": lines,
        "chains": [{"chain": f"{h.kind}-{h.id}", "head": h.hash, "length": h.seq} for h in chains],
    }
    with transaction.atomic():
        emit.emit(FeedKind.ANCHOR, payload, venue_id=None)


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


def _venue_link(venue_id: int, seq: int) -> str | None:
    """The hash of the venue's audit entry at position ``seq`` of its chain."""
    entries = AuditEntry.objects.filter(venue_id=venue_id).order_by("pk").values_list("hash", flat=True)
    return entries[seq - 1 : seq].first() if seq > 0 else None


def export_heads() -> dict[str, Any]:
    """Every chain's head now, and the hash at its latest anchored position when it grew since, for
    scripts/verify_anchors.py --heads (halls.anchor_lines.reaches): one consistent snapshot."""
    files = read_all()  # first: everything anchored is in the snapshot below
    chains = []
    with audit.snapshot():
        inst = installation.identity()
        for head in heads():
            chain: dict[str, Any] = {"kind": head.kind, "id": head.id, "seq": head.seq, "hash": head.hash}
            found = files.get((head.kind, head.id))
            anchor = found.latest if found is not None else None
            if anchor is not None and 0 < anchor.seq < head.seq:
                link = (
                    _venue_link(head.id, anchor.seq)
                    if head.kind == "venue"
                    else hooks.chain_link(head.kind, head.id, anchor.seq)
                )
                if link is not None:
                    chain["links"] = {str(anchor.seq): link}
            chains.append(chain)
    return {
        "format": anchor_lines.HEADS_FORMAT,
        "installation": inst,
        "exported_at": timezone.now().isoformat(),
        "chains": chains,
    }
