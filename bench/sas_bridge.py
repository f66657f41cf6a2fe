"""Benchmark: one SAS host bridge polling a simulated machine at SAS's pace (issue 31, "Speed": ≤ 5 % of
one core), beside a same-run baseline; and, with ``--plays N``, the exactness run of N plays through the
real hall (the end-to-end test with N plays instead of its default).

Not a test. CPU: the bridge (machines.sasbridge.bridge, a process of its own) against a simulated SAS machine
(machines.sasbridge.egm) on a pty, the machine playing a type C game every 2.5 s; the bridge's hall is a
stand-in gateway in this process (a WebSocket server that welcomes, broadcasts the levels every 0.25 s as
the hall's broadcaster does and acks every message: the bridge's work is the same, the hall is not what is
measured). The bridge polls every 40 ms (the fast end of SAS's 40-200 ms), broadcasts the levels every
0.25 s and reads the meters every 30 s. Baseline, same run, same pty and machine: a bare loop that only
sends the general poll every 40 ms and reads its answer (the least any host can do at that pace). CPU is
the process's user+system time over the measured seconds (psutil), as % of one core; the machine's own CPU
is reported too. Three runs each, under the bench lock (/tmp/hall-bench.lock), with the load average.

    .venv/bin/python bench/sas_bridge.py --seconds 60 --runs 3
    DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/sas_bridge.py --plays 10000   # exactness run
    DATABASE_URL=... REDIS_URL=... .venv/bin/python bench/sas_bridge.py --cut 60        # the hall cut 60 s
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from netsim import hold_lock  # noqa: E402

from tests.ports import free_port  # noqa: E402

BARE_LOOP = r"""
import sys, time
from machines import sas
from machines.sasbridge.line import FramedLine
line = FramedLine.open(sys.argv[1])
every = float(sys.argv[2])
poll = sas.encode_general_poll(1)
next_at = time.monotonic()
while True:
    line.send(poll, wakeup=True)
    line.read(0.05)
    next_at += every
    time.sleep(max(0.0, next_at - time.monotonic()))
"""


def stand_in_hall(port: int, stop: threading.Event) -> None:
    """A WebSocket stand-in for the gateway: welcome, broadcasts every 0.25 s, an ack per message."""
    from websockets.sync.server import serve

    levels = [{"level": "Mayor", "amount": "2000.00"}, {"level": "Menor", "amount": "200.00"}]

    def handler(ws: Any) -> None:
        def broadcast() -> None:
            while not stop.is_set():
                try:
                    ws.send(json.dumps({"type": "progressive", "group": "B", "levels": levels, "at": 0}))
                except Exception:
                    return
                time.sleep(0.25)

        threading.Thread(target=broadcast, daemon=True).start()
        for text in ws:
            message = json.loads(text)
            if message["type"] == "hello":
                ws.send(
                    json.dumps({"type": "welcome", "state": "in_service", "last_seq": 0, "levels": levels})
                )
            elif "seq" in message:
                ws.send(json.dumps({"type": "ack", "seq": message["seq"], "status": "accepted"}))

    with serve(handler, "127.0.0.1", port) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        stop.wait()
        server.shutdown()


def cpu_of(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return float(times.user + times.system)


def measure(pid: int, egm_pid: int, seconds: float) -> tuple[float, float]:
    bridge, egm = psutil.Process(pid), psutil.Process(egm_pid)
    b0, e0, t0 = cpu_of(bridge), cpu_of(egm), time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - t0
    return 100 * (cpu_of(bridge) - b0) / elapsed, 100 * (cpu_of(egm) - e0) / elapsed


def start_egm(every: float) -> tuple[subprocess.Popen[str], str]:
    egm = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "machines.sasbridge.egm",
            "--no-control",
            "--play",
            "1000000",
            "--every",
            str(every),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert egm.stdout is not None
    return egm, json.loads(egm.stdout.readline())["pty"]


def run_bridge(
    seconds: float, warmup: float, hall_port: int, tmp: Path
) -> tuple[float, float, dict[str, Any]]:
    egm, pty = start_egm(2.5)
    metrics = free_port()
    bridge = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "machines.sasbridge.bridge",
            "--line",
            f"framed:{pty}",
            "--denom-cents",
            "20",
            "--hall",
            f"ws://127.0.0.1:{hall_port}",
            "--asset",
            "BENCH-1",
            "--token",
            "t",
            "--journal",
            str(tmp / f"journal-{time.monotonic_ns()}.sqlite3"),
            "--metrics-port",
            str(metrics),
            "--poll-every",
            "0.04",
            "--log-level",
            "WARNING",
        ],
        cwd=ROOT,
    )
    try:
        time.sleep(warmup)
        bridge_cpu, egm_cpu = measure(bridge.pid, egm.pid, seconds)
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/status", timeout=5) as r:
            status = json.loads(r.read())
    finally:
        bridge.terminate()
        bridge.wait(10)
        egm.terminate()
        egm.wait(10)
    return bridge_cpu, egm_cpu, status


def run_baseline(seconds: float, warmup: float) -> tuple[float, float]:
    egm, pty = start_egm(2.5)
    bare = subprocess.Popen([sys.executable, "-c", BARE_LOOP, pty, "0.04"], cwd=ROOT)
    try:
        time.sleep(warmup)
        return measure(bare.pid, egm.pid, seconds)
    finally:
        bare.terminate()
        bare.wait(10)
        egm.terminate()
        egm.wait(10)


def exactness(plays: int, cut: float) -> int:
    """The end-to-end tests with `plays` plays and the hall cut for `cut` seconds
    (tests/e2e/test_sas_bridge.py reads HALL_SAS_PLAYS and HALL_SAS_CUT_SECONDS): the test each changes."""
    env = {**os.environ, "HALL_SAS_PLAYS": str(plays or 150), "HALL_SAS_CUT_SECONDS": str(cut or 5)}
    which = " or ".join((["plays_meters"] if plays else []) + (["nothing_is_lost"] if cut else []))
    return subprocess.call(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "tests/e2e/test_sas_bridge.py",
            "-k",
            which,
            "-p",
            "no:cacheprovider",
        ],
        cwd=ROOT,
        env=env,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--plays", type=int, default=0, help="run the exactness test with this many plays instead"
    )
    parser.add_argument("--cut", type=float, default=0, help="run the hall-cut test with this long a cut")
    args = parser.parse_args()
    hold_lock("/tmp/hall-bench.lock")  # noqa: S108 (the machine's shared bench lock)
    if args.plays or args.cut:
        sys.exit(exactness(args.plays, args.cut))
    stop = threading.Event()
    hall_port = free_port()
    threading.Thread(target=stand_in_hall, args=(hall_port, stop), daemon=True).start()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(1, args.runs + 1):
            base_cpu, base_egm = run_baseline(args.seconds, args.warmup)
            bridge_cpu, egm_cpu, status = run_bridge(args.seconds, args.warmup, hall_port, Path(tmp))
            load = os.getloadavg()
            counters = status["counters"]
            rows.append((bridge_cpu, base_cpu))
            print(
                f"run {run}: bridge {bridge_cpu:.2f} % of a core (machine {egm_cpu:.2f} %), "
                f"bare poll loop {base_cpu:.2f} % (machine {base_egm:.2f} %); "
                f"bridge polls {counters.get('polls', 0)}, "
                f"broadcasts {counters.get('broadcasts', 0)}, plays {counters.get('plays', 0)}, "
                f"acked {counters.get('acked_accepted', 0)}; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
                flush=True,
            )
    stop.set()
    worst = max(r[0] for r in rows)
    bridge = ",".join(f"{r[0]:.2f}" for r in rows)
    baseline = ",".join(f"{r[1]:.2f}" for r in rows)
    print(
        f"bridge_cpu_pct={bridge} baseline_cpu_pct={baseline} target=5.00 {'OK' if worst <= 5.0 else 'OVER'}"
    )


if __name__ == "__main__":
    main()
