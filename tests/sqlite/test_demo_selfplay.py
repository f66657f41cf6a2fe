"""`make demo` on SQLite, self-playing for a while, then every pool's balancing report must hold.

The demo runs as `manage.py demo` in a process of its own, exactly as `make demo` starts it (no
DATABASE_URL / REDIS_URL: SQLite, the in-memory broker with the embedded worker and beat, the in-memory
channel layer), on a database file of its own: "Sala Principal" plays bingo games with its prize
programs, the two poker tables play hands on the carrusel and two dozen simulated machines play on the
linked progressive. After HALL_TEST_DEMO_SECONDS (75 by default) it is stopped with Ctrl-C and
tests/sqlite/demo_check.py reads the database: each pool's report (in-process and through the API), the
report's sums against the rows added up one by one in Decimal, each machine's reconciliation page; then
tests/sqlite/demo_tax_check.py computes the month's gaming-tax return and works it out by hand from the rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from demo.tax import LINES as TAX_LINES
from tests.sqlite.demo_process import READY_SECONDS, embedded_env, play_demo

ROOT = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("HALL_TEST_DEMO_SECONDS", "75"))

pytestmark = pytest.mark.timeout(int(READY_SECONDS + SECONDS) + 180)


def test_the_self_playing_demo_balances_every_pool_on_sqlite(tmp_path: Path) -> None:
    text = play_demo(embedded_env(tmp_path), tmp_path / "demo.log", SECONDS)
    assert "Uvicorn running" in text, text[-5000:]
    # While it played (machines cut off by the shutdown may log their lost sockets after it).
    playing = text.split("INFO:     Shutting down")[0]
    for bad in ("must be a multiple of", "OperationalError", "Traceback", " 500 "):
        assert bad not in playing, f"{bad!r} in the demo's log:\n{text[-8000:]}"
    assert "must be a multiple of" not in text and "OperationalError" not in text, text[-8000:]

    check = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "sqlite" / "demo_check.py")],
        cwd=ROOT,
        env=embedded_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert check.returncode == 0, check.stderr[-5000:]
    summary = json.loads(check.stdout)
    pools, machines = summary["pools"], summary["machines"]
    print(f"\nself-playing demo on SQLite for {SECONDS:.0f} s:")  # the figures, in the run's output (-rA/-s)
    for pool in pools:
        levels = ", ".join(f"{lv['name']} {lv['closing']} ({lv['hits']} hits)" for lv in pool["levels"])
        print(
            f"  {pool['code']}: holds={pool['holds']} contributions={pool['contributions']} "
            f"bets={pool['report_bets']} to_meter={pool['report_to_meter']} "
            f"paid={pool['report_paid']}; {levels}"
        )
    print(f"  machines: {len(machines)}, plays {sum(m['plays'] for m in machines)}")

    assert len(pools) >= 5  # carrusel, the three prize programs, the machines' progressive
    for pool in pools:
        assert pool["holds"], pool
        assert (pool["api_status"], pool["api_holds"]) == (200, True), pool
        assert pool["contributions"] > 0, pool  # every pool was played on during the run
        for level in pool["levels"]:
            assert level["closing"] == level["closing_from_ledger"], pool
        # The database's sums are the Decimal sums of the rows, to the last unit.
        assert Decimal(pool["report_bets"]) == Decimal(pool["by_row"]["bets"]), pool
        assert Decimal(pool["report_to_meter"]) == Decimal(pool["by_row"]["to_meter"]), pool
        assert Decimal(pool["report_paid"]) == Decimal(pool["by_row"]["paid"]), pool
        for bets in pool["api_bets"]:
            assert Decimal(bets) == Decimal(bets).quantize(Decimal("0.01")), pool
    assert machines and all(m["status"] == 200 for m in machines), machines
    assert sum(m["plays"] for m in machines) > 0

    # The month's gaming-tax return (issue 29): the product's figures are the ones worked out by hand from
    # the rows (tests/sqlite/demo_tax_check.py), line by line and in total, to the cent.
    tax = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "sqlite" / "demo_tax_check.py")],
        cwd=ROOT,
        env=embedded_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert tax.returncode == 0, tax.stderr[-5000:]
    tax_summary = json.loads(tax.stdout)
    print(f"  tax return {tax_summary['period']}: total {tax_summary['product_total']}")
    for game_type, figures in tax_summary["product"].items():
        print(f"    {game_type}: {figures}")
    assert tax_summary["product"] == tax_summary["hand"], tax_summary
    assert tax_summary["product_total"] == tax_summary["hand_total"], tax_summary
    # Every type the demo's rate table names has its line; the demo's machines are counted in the month
    # (what was played in them depends on how far the run got: a bingo game counts once it closed, a
    # machine's bets from its meter readings, every 50 plays).
    assert set(tax_summary["product"]) == {line["game_type"] for line in TAX_LINES}
    machines_counted = sum(int(tax_summary["product"][t]["machines"]) for t in ("machine_b", "machine_c"))
    assert machines_counted == len(machines)
