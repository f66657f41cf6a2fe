"""deploy/'s hall on several hosts, in full, as private processes on this machine (issue 30): the long
variant of tests/e2e/test_multihost.py's whole layout (tests/e2e/multihost_layout.py has the steps and says
what they show). Here the private primary is migrated from nothing (``manage.py migrate``: 1-5 minutes on the
shared 2-core host) instead of loaded from the test run's template, and the figures are printed.

    flock /tmp/hall-bench.lock .venv/bin/python bench/multihost.py

Packages (Debian's): postgresql 15, pgbackrest, redis-server (scripts/ensure_multihost.sh). Ports: PostgreSQL
15432-15434, Redis 6395-6396, Sentinels 26395-26397, web 18500-18501 (tests/e2e/multihost_layout.Ports; the
test takes others). Exits 1 with the failing step named; prints the
steps' seconds and one summary line.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.multihost_layout import Plan, Result, migrate, run  # after the path
from tests.e2e.multihost_support import Workspace


def main() -> int:
    os.chdir(Path(__file__).resolve().parents[1])
    load = os.getloadavg()
    result = Result()
    work = Workspace()
    started = time.monotonic()
    try:
        run(work, Plan(seed=migrate), result)
    except AssertionError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        print(f"steps: {json.dumps(result.steps)}", file=sys.stderr)
        return 1
    finally:
        work.remove()
    figures = result.figures
    figures["total_s"] = time.monotonic() - started
    figures["migrate_s"] = result.steps["seed"]
    print(f"steps (s): {json.dumps(result.steps)}; exits (s): {json.dumps(result.exit_seconds)}")
    print(result.verify_audit.rstrip())
    summary = (
        "multihost: Redis master killed mid-draw after {balls_before_kill:.0f} balls -> Sentinel promoted in "
        "{promoted_s:.1f} s, next ball {failover_to_ball_s:.1f} s, the one after "
        "{failover_to_second_ball_s:.1f} s after the kill; 90 balls, none lost or repeated, both web "
        "processes healthy, a sale after; night restored to its point (backup {backup_s:.1f} s, "
        "restore+recovery {restore_and_recover_s:.1f} s, verify_audit ok in {verify_audit_s:.1f} s); "
        "migrate {migrate_s:.0f} s, total {total_s:.0f} s"
    )
    print(summary.format(**figures) + "; load average at the start {:.1f} {:.1f} {:.1f}".format(*load))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
