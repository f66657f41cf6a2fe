"""`make demo` on SQLite with linked machines through SAS host bridges (issue 31): `manage.py demo
--sas-machines 3` in a process of its own, as a person starts it (no DATABASE_URL / REDIS_URL), with six
linked machines of which the first three are simulated SAS machines (machines.sasbridge.egm), each on a pty
behind a real bridge process (machines.sasbridge.bridge), and the other three on the direct simulator.

While it plays, the bridges and the machines are processes of the demo (children, one of each per bridged
machine). Their progressive hits are frequent here (HALL_DEMO_HIT_PROBABILITY) and the demo's attendant pays
a hand pay at the cashier after 2 s. Each bridge's device token is in a file of the demo's private folder
(mode 0600, ``--token-file``) and on no process's command line (/proc/<pid>/cmdline, what ``ps`` shows any
user of the host). After the run, tests/sqlite/demo_sas_check.py reads the database: the
machines' pool balances (in-process and through the API); every play of a bridged machine is one
contribution per level with its seq and bet, and the levels got exactly bet × rate; every consecutive pair of
its meter snapshots (read by the bridge by SAS long poll) grew by exactly the plays recorded between them, no
alert, no gap; and a hit the cashier paid was followed by more plays (the payment reset the machine's hand
pay by LP 0x94, and it played on).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import psutil
import pytest

from tests.sqlite.demo_process import READY_SECONDS, embedded_env, play_demo

ROOT = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("HALL_TEST_DEMO_SAS_SECONDS", "25"))
BRIDGED = ("DEMO-M01", "DEMO-M02", "DEMO-M03")

pytestmark = pytest.mark.timeout(int(READY_SECONDS + SECONDS) + 180)


def test_the_demo_plays_linked_machines_through_sas_bridges(tmp_path: Path) -> None:
    env = embedded_env(
        tmp_path,
        HALL_DEMO_MACHINES="4",
        HALL_DEMO_TERMINALS="0",
        HALL_DEMO_VOICE="0",
        HALL_DEMO_HIT_PROBABILITY="0.15",
        HALL_DEMO_HAND_PAY_SECONDS="2",
        HALL_DEMO_SAS_METERS_SECONDS="4",
    )
    seen: dict[str, list[str]] = {}
    tokens: dict[str, tuple[str, int]] = {}  # token file -> (its token, its mode)
    command_lines: list[bytes] = []

    def processes(demo: subprocess.Popen[bytes]) -> None:
        for child in [psutil.Process(demo.pid), *psutil.Process(demo.pid).children(recursive=True)]:
            raw = Path(f"/proc/{child.pid}/cmdline").read_bytes()  # NUL-separated, as ps reads it
            command_lines.append(raw)
            words = [word.decode() for word in raw.split(b"\0") if word]
            for module in ("machines.sasbridge.bridge", "machines.sasbridge.egm"):
                if module in words:
                    seen.setdefault(module, []).append(" ".join(words))
            if "machines.sasbridge.bridge" in words and "--token-file" in words:
                path = Path(words[words.index("--token-file") + 1])
                tokens[str(path)] = (path.read_text().strip(), stat.S_IMODE(path.stat().st_mode))

    text = play_demo(env, tmp_path / "demo.log", SECONDS, ("--sas-machines", "3"), processes)
    assert "Uvicorn running" in text, text[-5000:]
    assert "3 of them (DEMO-M01–DEMO-M03) are simulated SAS machines" in text, text[:5000]
    playing = text.split("INFO:     Shutting down")[0]
    # A message the hall refused is an error of the bridge's hall side; its SAS side may log a machine that
    # answered late on a loaded host (it polls again: nothing is lost, as the figures below show).
    for bad in ("Traceback", "OperationalError", " 500 ", "sasbridge.hall ERROR"):
        assert bad not in playing, f"{bad!r} in the demo's log:\n{text[-8000:]}"
    # Real processes: a bridge on a pty and a simulated machine per bridged machine.
    bridges = seen.get("machines.sasbridge.bridge", [])
    assert len(bridges) == 3 and len(seen.get("machines.sasbridge.egm", [])) == 3, seen
    assert all("--line framed:/dev/pts/" in command for command in bridges), bridges
    assert sorted(c.split("--asset ")[1].split()[0] for c in bridges) == list(BRIDGED)
    # Each bridge's token in a file of its owner only, and no token on any command line of the demo's.
    assert len(tokens) == 3 and all(mode == 0o600 and len(token) >= 16 for token, mode in tokens.values())
    assert all(" --token " not in c and "--token=" not in c for c in bridges), bridges
    for token, _ in tokens.values():
        assert not any(token.encode() in raw for raw in command_lines)

    check = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "sqlite" / "demo_sas_check.py"), *BRIDGED],
        cwd=ROOT,
        env=embedded_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert check.returncode == 0, check.stderr[-5000:]
    summary = json.loads(check.stdout)
    pool, machines = summary["pool"], summary["machines"]
    assert pool["holds"] and (pool["api_status"], pool["api_holds"]) == (200, True), pool
    assert summary["other_plays"] > 0  # the direct simulator's machines played beside them
    print(f"\ndemo with {len(BRIDGED)} machines through SAS bridges, {SECONDS:.0f} s:")
    hits = []
    for machine in machines:
        asset, plays = machine["asset"], [tuple(p) for p in machine["plays"]]
        print(
            f"  {asset}: {len(plays)} plays, {machine['snapshots']} meter reads, "
            f"hits {[(h['level'], h['amount'], h['paid']) for h in machine['hits']]}"
        )
        assert len(plays) >= 3, machine
        for name, level in machine["levels"].items():
            # Every play contributed once to every level, with its own seq and bet; nothing else.
            assert [tuple(c) for c in level["contributed"]] == plays, (asset, name)
            assert level["gap_keys"] == [], (asset, name)
            assert Decimal(level["to_meter"]) == Decimal(level["expected_to_meter"]), (asset, name, level)
        # The bridge's meter reads: each interval's coin-in and games grew by exactly its plays.
        assert machine["snapshots"] >= 2, machine
        for interval in machine["intervals"]:
            assert Decimal(interval["coin_in_grown"]) == Decimal(interval["bets"]), (asset, interval)
            assert interval["games_grown"] == interval["plays"], (asset, interval)
        assert machine["alerts"] == [] and machine["gaps"] == 0, machine
        assert machine["software"] == "SIM-1.0"
        hits += machine["hits"]
    # A progressive hit through a bridge, paid by the attendant at the cashier, and the machine played on.
    paid = [hit for hit in hits if hit["paid"]]
    assert paid, hits
    assert all(hit["paid_by"] for hit in paid), paid
    assert any(hit["plays_after"] > 0 for hit in paid), paid
