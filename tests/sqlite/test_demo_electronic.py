"""`make demo` on SQLite: its electronic rooms (90 and 75 balls) play by themselves with simulated terminals,
and every purchase and prize is exact in the player cards' balances.

The demo runs as `manage.py demo` in a process of its own, exactly as `make demo` starts it (no DATABASE_URL /
REDIS_URL: SQLite, the in-memory broker with the embedded worker and beat, the in-memory channel layer), at a
test pace (a ball every 0.3 s, 8 s of sales) and without the slot machines (their own test runs them). The
simulated terminals say hello, the demo verifies them and opens each speciality's session, and they buy and
play over the device API and the terminal socket. After HALL_TEST_DEMO_ELECTRONIC_SECONDS (70 by default)
it is stopped with Ctrl-C and tests/sqlite/demo_electronic_check.py reads the database.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sqlite.demo_process import READY_SECONDS, embedded_env, play_demo

ROOT = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("HALL_TEST_DEMO_ELECTRONIC_SECONDS", "70"))

pytestmark = pytest.mark.timeout(int(READY_SECONDS + SECONDS) + 180)


def test_the_demo_electronic_rooms_play_and_pay_exactly_on_sqlite(tmp_path: Path) -> None:
    env = embedded_env(
        tmp_path, HALL_DEMO_MACHINES="0", HALL_DEMO_ELECTRONIC_PACE="0.3", HALL_DEMO_ELECTRONIC_SALE="8"
    )
    text = play_demo(env, tmp_path / "demo.log", SECONDS)
    assert "Uvicorn running" in text, text[-5000:]
    playing = text.split("INFO:     Shutting down")[0]
    for bad in ("Traceback", "OperationalError", " 500 "):
        assert bad not in playing, f"{bad!r} in the demo's log:\n{text[-8000:]}"
    # The banner names each room's screen and a terminal page with its device's id and token, and its card.
    pages = re.findall(r"/electronic/terminal/#(\d+):(\S+)\s+card (\d{16})", text)
    assert len(pages) == 2, text[:5000]
    assert "Pantalla · Sala Electrónica " in text and "Pantalla · Sala Electrónica 75" in text

    check = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "sqlite" / "demo_electronic_check.py")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert check.returncode == 0, check.stderr[-5000:]
    summary = json.loads(check.stdout)["specialities"]
    print(f"\nthe demo's electronic rooms on SQLite for {SECONDS:.0f} s:")
    for s in summary:
        print(
            f"  {s['code']}: games {s['games']}, balls {s['balls']}, purchases {s['purchases']} "
            f"({s['cards']} cards, {s['spent']} €), prizes {s['prizes_won']} ({s['won']} €)"
        )
    for s in summary:
        assert s["problems"] == [], s
        assert s["purchases"] > 0 and s["balls"] > 0, s  # the terminals bought and the game drew
        assert s["cards_checked"] >= 3, s
    # Prizes were won and credited (a line comes within a few dozen balls).
    assert sum(len(s["prizes_won"]) for s in summary) > 0, summary
