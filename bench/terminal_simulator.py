"""Benchmark: the terminal simulator running 2,000 player terminals against one hall (issue 13, "Speed").

Not a test. On a scratch PostgreSQL database (``--fresh`` drops and recreates it) and Redis it creates one
electronic speciality (90-ball: Line, Bingo, two figures, an accumulated prize with a max ball) and TERMINALS
terminals, each with a player card loaded by the simulator's cashier (bingo.electronic.provisioning, through
the services), starts WEB uvicorn processes (config.asgi, one port each; the terminals are spread over them),
a Celery worker on both queues and exactly one beat (the electronic tick: sales close, draws, next game),
then runs ``manage.py terminal_simulator --tokens`` in SIM processes. Once every terminal has said hello it
runs the verification, opens the session and switches the speciality on; games then follow one another
(sales while the last one draws) for SECONDS. Every terminal buys for every game (BUY of them, a count from
the purchase sizes) through the device API and plays over the terminal socket.

It reports, from the simulators: purchases answered (p50/p99), balls received per terminal with their
delay (the event's time to arrival), messages lost and recovered by a snapshot, per-terminal messages that
changed nothing, prizes seen and each card's final balance against what its terminal saw; from the
database: games played, cards sold, prizes and the ledger's check (purchases = sales credited, prizes paid =
wins credited); and the CPU of each process group.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_terminals REDIS_URL=redis://127.0.0.1:6379/6 \\
        flock /tmp/hall-bench.lock .venv/bin/python bench/terminal_simulator.py --fresh --terminals 2000 \\
        --seconds 180

``--quick``: 200 terminals for 60 s. The last line sums it up:
``terminals=… games=… purchases=… purchase_p99_ms=… ball_p99_ms=… lost=… recovered=… idle_own=…
mismatched=…``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_terminals")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/6")

import screens as base  # noqa: E402  (bench/screens.py: ports, processes, CPU)

PYTHON = sys.executable
VENUE_LICENCE = "BENCH-TERMSIM"
RULES: dict[str, Any] = {
    "family": "electronic",
    "layout": "90",
    "card_price": "0.50",
    "purchase_sizes": [1, 2, 3, 4, 6],
    "max_cards": 36,
    "pace_seconds": "1",
    "sale_seconds": 20,
    "pause_seconds": 3,
    "prizes": [
        {"code": "linea", "name": "Línea", "type": "line", "percent": "10"},
        {"code": "bingo", "name": "Bingo", "type": "bingo", "percent": "50"},
        {"code": "esquinas", "name": "Esquinas", "type": "figure", "figure": "corners", "fixed": "1.00"},
        {"code": "aspa", "name": "Aspa", "type": "figure", "figure": "x", "fixed": "2.00"},
        {
            "code": "acumulado",
            "name": "Acumulado",
            "type": "accumulated",
            "pool": {"funding_percent": "2", "reserve_percent": "1", "seed": "100.00"},
            "max_ball": 40,
        },
    ],
}


def ensure_database(url: str, *, fresh: bool) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def start(name: str, cmd: list[str], env: dict[str, str], workdir: Path) -> subprocess.Popen[bytes]:
    """A process with its output in workdir/<name>.log."""
    with (workdir / f"{name}.log").open("wb") as out:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def provision(count: int, tokens: Path) -> int:
    """The speciality and its terminals with funded cards; new tokens written to `tokens`. Its id."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from bingo.electronic import provisioning, simulator
    from bingo.electronic.management.commands.terminal_simulator import write_tokens
    from bingo.electronic.models import Speciality, TerminalSoftware
    from bingo.electronic.services import specialities, verification
    from halls.models import Jurisdiction, Role, Room, StaffRole, Venue

    venue, _ = Venue.objects.get_or_create(
        licence_number=VENUE_LICENCE, defaults={"name": "Bench terminals", "jurisdiction": Jurisdiction.AN10}
    )
    operator, _ = get_user_model().objects.get_or_create(username="bench-operator")
    StaffRole.objects.get_or_create(user=operator, venue=venue, role=Role.OPERATOR)
    room, _ = Room.objects.get_or_create(venue=venue, name="Sala electrónica bench")
    speciality = Speciality.objects.filter(room=room).first() or specialities.create_speciality(
        room=room, code="BENCH", name="Bench 90", rules=RULES, authorisation_ref="BENCH", actor=operator
    )
    if not TerminalSoftware.objects.filter(venue=venue, version=simulator.SOFTWARE_VERSION).exists():
        verification.approve_software(
            venue=venue, version=simulator.SOFTWARE_VERSION, authorisation_ref="BENCH", actor=operator
        )
    t0 = time.perf_counter()
    names = [f"Bench T{i:05d}" for i in range(1, count + 1)]
    terminals = provisioning.ensure_terminals(speciality=speciality, names=names, actor=operator)
    cashier = provisioning.robot_cashier(venue)
    cards_of = provisioning.ensure_cards(
        terminals=terminals, numbers=provisioning.cards_in_use(terminals), cashier=cashier
    )
    write_tokens(
        tokens, provisioning.issue_credentials(terminals=terminals, cards_of=cards_of, actor=operator)
    )
    print(f"{len(terminals)} terminals with funded cards in {time.perf_counter() - t0:.1f} s")
    connection.close()
    return speciality.pk


def open_play(speciality_id: int, count: int, timeout: float) -> None:
    """Once every terminal said hello (or `timeout`): verification, session, running."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from bingo.electronic.models import Speciality, Terminal
    from bingo.electronic.services import games, sessions, verification

    operator = get_user_model().objects.get(username="bench-operator")
    speciality = Speciality.objects.get(pk=speciality_id)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = Terminal.objects.filter(speciality=speciality, last_seen_at__isnull=False).count()
        if seen >= count:
            break
        time.sleep(1.0)
    print(f"  {seen} of {count} terminals said hello")
    if sessions.open_session_of(speciality) is None:
        checked = verification.run_verification(speciality=speciality, actor=operator)
        failed = checked.terminal_checks.filter(passed=False).count()
        print(f"  verification passed={checked.passed}, terminals failed {failed}")
        sessions.open_session(speciality=speciality, actor=operator)
    games.set_running(speciality=speciality, running=True, actor=operator)
    connection.close()


def stop_play(speciality_id: int) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from bingo.electronic.models import Speciality
    from bingo.electronic.services import games

    operator = get_user_model().objects.get(username="bench-operator")
    games.set_running(speciality=Speciality.objects.get(pk=speciality_id), running=False, actor=operator)
    connection.close()


def books(speciality_id: int, since: float) -> dict[str, Any]:
    """What the database holds of the run: games, cards, purchases, prizes, and the ledger's check."""
    from django.db import connection
    from django.db.models import Count, Sum

    from bingo.electronic.models import ElectronicGame, EPrize, EWin, Purchase

    games_qs = ElectronicGame.objects.filter(speciality_id=speciality_id)
    purchases = Purchase.objects.filter(game__speciality_id=speciality_id)
    bought = purchases.aggregate(n=Count("id"), cards=Sum("cards"), amount=Sum("amount"))
    sold = games_qs.aggregate(cards=Sum("cards_sold"), sales=Sum("sales_total"))
    wins = EWin.objects.filter(prize__game__speciality_id=speciality_id).aggregate(
        n=Count("id"), s=Sum("amount")
    )
    won = EPrize.objects.filter(game__speciality_id=speciality_id, won=True).aggregate(
        n=Count("id"), paid=Sum("share")
    )
    out = {
        "games": dict(games_qs.values_list("state").annotate(n=Count("id")).order_by()),
        "purchases": bought["n"],
        "cards": bought["cards"] or 0,
        "amount": str(bought["amount"] or Decimal(0)),
        "cards_sold_closed": sold["cards"] or 0,
        "sales_closed": str(sold["sales"] or Decimal(0)),
        "prizes_won": won["n"],
        "wins": wins["n"],
        "wins_amount": str(wins["s"] or Decimal(0)),
    }
    connection.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--terminals", type=int, default=2000)
    parser.add_argument("--web", type=int, default=2, help="web processes")
    parser.add_argument("--sim", type=int, default=2, help="simulator processes")
    parser.add_argument(
        "--seconds", type=float, default=180.0, help="seconds of play after the session opens"
    )
    parser.add_argument("--buy", type=float, default=0.9, help="share of terminals buying for each game")
    parser.add_argument("--connect-rate", type=float, default=20.0, help="new sockets per second, in all")
    parser.add_argument(
        "--door", choices=("socket", "http"), default="socket", help="where the terminals buy (as the page)"
    )
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument("--tail", type=float, default=90.0, help="seconds the simulators play on after")
    parser.add_argument(
        "--hello-timeout", type=float, default=600.0, help="seconds to wait for every terminal's hello"
    )
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the database first")
    parser.add_argument("--quick", action="store_true", help="200 terminals, 60 s")
    args = parser.parse_args()
    # Progress lines as they come, also into a file.
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    if args.quick:
        args.terminals, args.seconds = min(args.terminals, 200), min(args.seconds, 60.0)

    ensure_database(os.environ["DATABASE_URL"], fresh=args.fresh)
    os.environ["CHANNEL_PREFIX"] = f"benchtsim{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "CONN_MAX_AGE": "0", "HALL_LOG_LEVEL": "WARNING"}  # as deploy/ runs the web
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    django.setup()
    workdir = Path(tempfile.mkdtemp(prefix="bench-termsim-"))
    tokens = workdir / "terminals.jsonl"
    speciality_id = provision(args.terminals, tokens)
    ports = [base.free_port() for _ in range(args.web)]
    web: list[subprocess.Popen[bytes]] = []
    others: list[subprocess.Popen[bytes]] = []
    sims: list[subprocess.Popen[bytes]] = []
    print(
        f"{args.terminals} terminals, {args.web} web processes, {args.sim} simulator processes, "
        f"{args.seconds:.0f} s of play, purchases over {args.door} (work dir {workdir})"
    )
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    try:
        for i, port in enumerate(ports):
            web.append(start(f"web{i}", [*base.UVICORN, "--port", str(port)], env, workdir))
        celery = [PYTHON, "-m", "celery", "-A", "config", "--quiet"]
        worker = [*celery, "worker", "-Q", "celery,draws", "--concurrency", str(args.worker_concurrency)]
        others.append(start("worker", [*worker, "-l", "warning", "-n", "bench-termsim@%h"], env, workdir))
        others.append(
            start("beat", [*celery, "beat", "-l", "warning", "-s", str(workdir / "beat")], env, workdir)
        )
        for port in ports:
            base.wait_listening(port)
        urls = ",".join(f"http://127.0.0.1:{p}" for p in ports)
        # The simulators play until told to stop (SIGTERM): after the play and its tail (the last game
        # started draws to its end), they drain, read every card's balance and write their reports.
        for i in range(args.sim):
            cmd = [
                PYTHON,
                "manage.py",
                "terminal_simulator",
                "--tokens",
                str(tokens),
                "--shard",
                f"{i}/{args.sim}",
            ]
            cmd += ["--url", urls, "--buy-probability", str(args.buy), "--purchase-door", args.door]
            cmd += ["--connect-rate", str(args.connect_rate / args.sim), "--warmup", "20"]
            cmd += ["--report", str(workdir / f"sim{i}.json")]
            sims.append(start(f"sim{i}", cmd, env, workdir))
        open_play(speciality_id, args.terminals, timeout=args.hello_timeout)
        t0 = time.time()
        cpu0 = {
            name: base.cpu_seconds([p.pid for p in group])
            for name, group in (("web", web), ("worker+beat", others), ("simulators", sims))
        }
        time.sleep(args.seconds)
        t1 = time.time()
        cpu = {
            name: (base.cpu_seconds([p.pid for p in group]) - cpu0[name]) / (t1 - t0)
            for name, group in (("web", web), ("worker+beat", others), ("simulators", sims))
        }
        stop_play(speciality_id)  # no new game; the one drawing ends
        time.sleep(args.tail)
        for sim in sims:
            sim.send_signal(signal.SIGTERM)
        for sim in sims:
            sim.wait(300)
    finally:
        base.stop_all(sims + web + others)
    from bingo.electronic.simulator import Report
    from halls.simulation import percentile

    report = Report()
    for i in range(args.sim):
        path = workdir / f"sim{i}.json"
        if path.exists():
            report = report.merge(Report.from_json(json.loads(path.read_text())))
        else:
            print(f"  simulator {i} wrote no report: see {workdir}/sim{i}.log")
    for line in report.lines():
        print(f"  {line}")
    held = books(speciality_id, t0)
    print(f"  database: {json.dumps(held)}")
    print("  cpu (cores): " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(cpu.items())))
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    c = report.counters
    lat, delays = sorted(report.purchase_latencies), sorted(report.ball_delays)
    print(
        f"terminals={report.terminals} games={held['games']} purchases={c.get('purchases_ok', 0)} "
        f"purchase_p50_ms={percentile(lat, 50) * 1000:.1f} purchase_p99_ms={percentile(lat, 99) * 1000:.1f} "
        f"balls={c.get('balls', 0)} ball_p50_ms={percentile(delays, 50) * 1000:.1f} "
        f"ball_p99_ms={percentile(delays, 99) * 1000:.1f} lost={c.get('lost', 0)} "
        f"recovered={c.get('recovered', 0)} idle_own={c.get('idle_messages', 0)} prizes={c.get('prizes', 0)} "
        f"checked={report.balance_checked} mismatched={report.balance_mismatched}"
    )


if __name__ == "__main__":
    main()
