#!/usr/bin/env python3
"""Verify a hall's audit anchors with its public key alone: no database, no Django, only `cryptography`.

Every line of every anchor file given (files, or folders of ``*.jsonl`` files: an installation's anchor
folder) must be signed by the installation's Ed25519 key (halls/anchor_lines.py documents every byte);
a line that is not (edited, forged, signed by another key, moved to another chain's file) is named by its
file and line number. With --heads (the JSON of ``manage.py export_chain_heads``), each chain's latest
anchor is compared with the chain's head now: whether the chain still reaches its anchor.

    .venv/bin/python scripts/verify_anchors.py --key hall-anchor-key.json var/anchors/<installation>/
    .venv/bin/python scripts/verify_anchors.py --key <64 hex> --heads heads.json venue-1.jsonl pool-2.jsonl

--key is the document published at /.well-known/hall-anchor-key (a JSON file) or the key's 64 hex digits.
Lines signed before the Ed25519 key (v2, an HMAC only the operator can check) are counted apart and do not
fail the check unless --strict. Exit status 0 when everything verifies, 1 when anything does not, 2 when the
input cannot be read. --json prints the result as one JSON object.

It imports the project's pure module halls/anchor_lines.py from the folder above this one: a third party
needs only scripts/verify_anchors.py, halls/__init__.py and halls/anchor_lines.py in that layout, Python
3.11 and the `cryptography` package.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

# The project's folder, so that its pure module halls/anchor_lines.py is found from any working folder.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from halls import anchor_lines

EXIT_VERIFIED, EXIT_DIFFERS, EXIT_UNREADABLE = 0, 1, 2
FILE_NAME = re.compile(r"^(?P<kind>[a-z_]+)-(?P<id>\d+)\.jsonl$")


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Verify audit anchors with the hall's public key.")
    parser.add_argument("paths", nargs="+", type=Path, help="anchor files, or folders of them")
    parser.add_argument(
        "--key", required=True, help="the key document (JSON file) or the key's 64 hex digits"
    )
    parser.add_argument(
        "--heads", type=Path, help="an export of the chain heads (manage.py export_chain_heads)"
    )
    parser.add_argument("--strict", action="store_true", help="lines from before the Ed25519 key fail too")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser.parse_args(argv)


def files_of(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        found.extend(sorted(path.glob("*.jsonl")) if path.is_dir() else [path])
    return found


def read_key(given: str) -> tuple[Any, str | None]:
    """The public key, and the installation its document names (None for bare hex digits)."""
    text = given if re.fullmatch(r"[0-9a-fA-F]{64}", given) else Path(given).read_text(encoding="utf-8")
    text = text.strip()
    if text.startswith("{"):
        return anchor_lines.public_key(text), json.loads(text).get("installation")
    return anchor_lines.public_key(text.lower()), None


def check_file(
    file: Path, key: Any, installation: str | None, strict: bool
) -> tuple[list[str], int, int, dict[str, Any] | None]:
    """(problems, lines verified, lines from before the key, the latest anchor) of one file."""
    problems: list[str] = []
    verified = legacy = 0
    latest: dict[str, Any] | None = None
    named = FILE_NAME.match(file.name)
    for number, raw in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        line = anchor_lines.parse_line(raw)
        problem = anchor_lines.check_line(line, key, installation)
        if problem and isinstance(line, dict) and line.get("alg") != anchor_lines.ALG and "sig" in line:
            legacy += 1
            if strict:
                problems.append(f"{file.name}: line {number}: {problem}")
            continue
        if not problem and named and (line["kind"], line["id"]) != (named["kind"], int(named["id"])):
            problem = f"it anchors {line['kind']} {line['id']}, not this file's chain"
        if problem:
            problems.append(f"{file.name}: line {number}: {problem}")
            continue
        verified += 1
        if latest is None or int(line["seq"]) >= int(latest["seq"]):
            latest = line
    return problems, verified, legacy, latest


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    try:
        key, installation = read_key(args.key)
        files = files_of(args.paths)
        heads = json.loads(args.heads.read_text(encoding="utf-8")) if args.heads else None
        if heads is not None and heads.get("format") != anchor_lines.HEADS_FORMAT:
            raise ValueError(f"{args.heads} is not an export of chain heads ({anchor_lines.HEADS_FORMAT})")
        checked = [(file, *check_file(file, key, installation, args.strict)) for file in files]
    except (OSError, ValueError) as exc:
        print(f"unreadable: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    problems = [problem for _file, found, *_rest in checked for problem in found]
    chains: list[dict[str, Any]] = []
    if heads is not None:
        by_chain = {(c["kind"], int(c["id"])): c for c in heads.get("chains", [])}
        for file, _found, _verified, _legacy, latest in checked:
            if latest is None:
                continue
            reach = anchor_lines.reaches(latest, by_chain.get((latest["kind"], int(latest["id"]))))
            chains.append({"chain": f"{latest['kind']} {latest['id']}", "ok": reach.ok, "text": reach.text})
            if not reach.ok:
                problems.append(f"{file.name}: {latest['kind']} {latest['id']}: {reach.text}")
    verified = sum(c[2] for c in checked)
    legacy = sum(c[3] for c in checked)
    ok = not problems and verified + legacy > 0
    result = {
        "ok": ok,
        "kid": anchor_lines.key_id(key),
        "files": len(files),
        "verified": verified,
        "before_the_key": legacy,
        "problems": problems,
        "chains": chains,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        if ok:
            print(f"verified: {verified} anchor lines in {len(files)} files signed by {result['kid']}")
        elif not problems:
            print("not verified: no anchor line found")
        for problem in problems:
            print(f"BAD  {problem}")
        for chain in chains:
            if chain["ok"]:
                print(f"ok   {chain['chain']}: {chain['text']}")
        if legacy:
            print(f"{legacy} lines from before the Ed25519 key (HMAC): not checkable with the public key")
    return EXIT_VERIFIED if ok else EXIT_DIFFERS


if __name__ == "__main__":
    sys.exit(main())
