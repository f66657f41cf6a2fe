"""Record each test file's duration from pytest's JUnit XML reports into tests/durations.json, which the
test run reads to send the slowest files to its workers first (tests/conftest.py): run after a whole run,
e.g. `pytest --junitxml=/tmp/pg.xml` then `python scripts/test_durations.py postgresql /tmp/pg.xml`."""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "durations.json"


def test_file(classname: str) -> str | None:
    """`tests.halls.test_x.TestY` -> `tests/halls/test_x.py` (the longest prefix that is a file)."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        candidate = "/".join(parts[:end]) + ".py"
        if (ROOT / candidate).exists():
            return candidate
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run", choices=["postgresql", "sqlite"])
    parser.add_argument("reports", nargs="+", type=Path)
    args = parser.parse_args()
    seconds: dict[str, float] = {}
    for report in args.reports:
        for case in ET.parse(report).iter("testcase"):  # noqa: S314 (our own pytest run's report)
            path = test_file(case.get("classname", ""))
            if path:
                seconds[path] = seconds.get(path, 0.0) + float(case.get("time", 0))
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    record[args.run] = {path: round(s, 1) for path, s in sorted(seconds.items()) if s >= 1.0}
    RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"{len(record[args.run])} files of {args.run} recorded in {RECORD.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
