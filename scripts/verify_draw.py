#!/usr/bin/env python3
"""Verify a bingo draw from its revealed seed: no database, no Django, only `cryptography`.

Recomputes every ball of an RNG game from the seed revealed after the game and the digest of the game's
final sales (bingo/verifiable.py documents every byte), checks the seed against the commitment published
before sales opened, and prints "verified" or the first thing that differs. Exit status 0 when verified,
1 when anything differs, 2 when the input cannot be read.

    .venv/bin/python scripts/verify_draw.py --seed <64 hex> --commitment <64 hex> \\
        --sales sales.json --balls 17,4,88,...
    .venv/bin/python scripts/verify_draw.py --seed <64 hex> --commitment <64 hex> \\
        --sales-digest <64 hex> --max-ball 90 --balls-file balls.txt

--sales is a JSON file of the shape {"format": "bingo-sales/v1", "game": ..., "max_ball": 75 or 90,
"cards": [{"serial": ..., "numbers": [...]}, ...]}; its digest is computed here (and, when --sales-digest is
given too, compared with it). --golden is the golden ball an electronic game drew at its close of sales
(checked against the seed's). --balls lists the balls drawn in order, separated by commas or spaces;
--balls-file reads them from a file ("-": standard input). --json prints the result as one JSON object.

It imports the project's pure module bingo/verifiable.py (which imports nothing of Django; its docstring
specifies every byte) from the folder above this one: a third party needs only scripts/verify_draw.py,
bingo/__init__.py and bingo/verifiable.py in that layout, Python 3.11 and the `cryptography` package.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# The project's folder, so that its pure module bingo/verifiable.py is found from any working folder.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bingo import verifiable

EXIT_VERIFIED, EXIT_DIFFERS, EXIT_UNREADABLE = 0, 1, 2


def parse_balls(text: str) -> list[int]:
    """Balls written in order, separated by commas and/or whitespace."""
    parts = [part for part in re.split(r"[\s,]+", text.strip()) if part]
    if not all(part.isdigit() for part in parts):
        raise ValueError("the balls are whole numbers separated by commas or spaces")
    return [int(part) for part in parts]


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Verify a bingo draw from its revealed seed.")
    parser.add_argument("--seed", required=True, help="the revealed seed, 64 hex digits")
    parser.add_argument("--commitment", required=True, help="the commitment published, 64 hex digits")
    parser.add_argument("--sales", type=Path, help="the game's final sales, a JSON file (bingo-sales/v1)")
    parser.add_argument("--sales-digest", help="the sales digest published, 64 hex digits")
    parser.add_argument(
        "--max-ball", type=int, choices=verifiable.MAX_BALLS, help="75 or 90 (with --sales-digest)"
    )
    drawn = parser.add_mutually_exclusive_group(required=True)
    drawn.add_argument("--balls", help="the balls drawn, in order: 17,4,88,...")
    drawn.add_argument("--balls-file", help="a file of the balls drawn, in order ('-': standard input)")
    parser.add_argument(
        "--golden", type=int, help="the golden ball drawn at the close of sales (electronic bingo), if any"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.sales is None and (args.sales_digest is None or args.max_ball is None):
        parser.error("give --sales, or --sales-digest with --max-ball")
    return args


def run(args: argparse.Namespace) -> verifiable.Verification:
    """The verification asked for (ValueError, OSError: input that cannot be read)."""
    seed = verifiable.seed_from_hex(args.seed)
    commitment = verifiable.digest_from_hex(args.commitment)
    if args.sales is not None:
        sales = verifiable.sales_from_json(json.loads(args.sales.read_text(encoding="utf-8")))
        if args.max_ball is not None and args.max_ball != sales.max_ball:
            raise ValueError(f"--max-ball {args.max_ball} but the sales are of balls 1-{sales.max_ball}")
        max_ball = sales.max_ball
        digest = verifiable.sales_digest(sales)
        if args.sales_digest is not None:
            mismatch = verifiable.check_sales(sales, args.sales_digest)
            if mismatch is not None:
                return mismatch
    else:
        max_ball = args.max_ball
        digest = verifiable.digest_from_hex(args.sales_digest)
    if args.balls is not None:
        text = args.balls
    elif args.balls_file == "-":
        text = sys.stdin.read()
    else:
        text = Path(args.balls_file).read_text(encoding="utf-8")
    return verifiable.verify(seed, commitment, digest, parse_balls(text), max_ball, golden=args.golden)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    try:
        result = run(args)
    except (ValueError, OSError) as exc:  # SalesError and json's errors are ValueErrors
        if args.json:
            print(json.dumps({"verified": False, "reason": "unreadable", "error": str(exc)}))
        else:
            print(f"cannot read the input: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    if args.json:
        print(json.dumps({"verified": result.verified, "reason": result.reason, **result.facts}))
    else:
        print(result)
    return EXIT_VERIFIED if result.verified else EXIT_DIFFERS


if __name__ == "__main__":
    sys.exit(main())
