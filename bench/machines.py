"""Benchmark: 1,000 simulated machines through the machine gateway on this box (issues 5 and 9, "Speed").

Not a test. On a scratch PostgreSQL database (``--fresh`` drops and recreates it) and Redis it registers
MACHINES type C machines of 0.20 € linked to one three-level pool (machines.provisioning, through
the services), starts WEB uvicorn processes (config.asgi, each on its own port; the simulated machines are
spread evenly over them), a Celery worker and exactly one beat (the link watch, the pool fold and seal,
the meters), the progressive broadcaster (``manage.py broadcast_progressives``, a process of its own, as
deploy/ runs it), then runs the simulator (``manage.py simulate_machines --tokens``) in SIM processes at
each pace of ``--paces`` in turn, ``--runs`` times each, every stage on a fresh copy of the database with
fresh servers (1.0 = every machine at its type's minimum game time: 1,000 type C machines → 400 plays/s;
0.5 → 800 plays/s, a 2× overload). For each stage it reports plays/s accepted, reply latency, the
progressive broadcast as every machine heard it (interval p50/p99/max, delivery delay, the fewest any
machine heard in a whole second), lock-ups and the CPU of every process; at the end it folds the pool and
checks it is exact: each level == seed + Σ bet × rate over every play stored, and the plays stored ==
what the machines were told was accepted.

A stage is SUSTAINED when it accepts ≥ 97 % of the offered rate with reply p99 < 1 s, nothing refused,
every machine hearing ≥ 2 broadcasts in every whole second, no lock-up and the pool exact; past the
gateway's capacity it is GRACEFUL when only the rate and the latency give (answers late): still every
machine ≥ 2 broadcasts a second, no lock-up, nothing refused, exact. The last line sums it up:
``machines=… plays_per_s=… reply_p99_ms=… min_broadcasts_per_s=… lockups=…`` (one value per stage).
There is no plain baseline to run beside it: the figure is against the offered rate and the 5-second link.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_machines REDIS_URL=redis://127.0.0.1:6379/7 \\
        .venv/bin/python bench/machines.py --fresh --machines 1000 --seconds 60 --warmup 10 \\
        --connect-rate 10 --paces 1.0,0.5 --runs 3
    .venv/bin/python bench/machines.py --fresh --quick    # 200 machines, 20 s: under a minute

Redis: use a database number of its own (the bench's Celery queues must not meet another worker) and the
channel prefix ``--channel-prefix`` (pub/sub channels are not per database). Target on the 2-core box:
>= 400 plays/s sustained with every contribution exact and every machine hearing >= 2 broadcasts a second.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_machines")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/7")

PYTHON = sys.executable
GROUP_CODE = "BENCH"
POOL_CODE = "BENCH-MACHINES"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def ensure_database(url: str, *, fresh: bool) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def setup_django() -> None:
    import django

    django.setup()


# --- provisioning ----------------------------------------------------------------------------------------


def provision(count: int) -> tuple[int, int]:
    """The venue, the link group with its pool, ``count`` linked machines; returns (venue id, pool id)."""
    from halls.models import Jurisdiction, Venue
    from machines import provisioning

    venue, _ = Venue.objects.get_or_create(
        licence_number="BENCH-MACHINES", defaults={"name": "Bench casino", "jurisdiction": Jurisdiction.ML}
    )
    group = provisioning.ensure_link_group(
        venue=venue, code=GROUP_CODE, name="Bench progresivo", pool_code=POOL_CODE, actor="bench"
    )
    t0 = time.perf_counter()
    machines = provisioning.ensure_machines(venue=venue, group=group, assets=assets(count), actor="bench")
    print(f"{len(machines)} machines registered and linked in {time.perf_counter() - t0:.1f} s")
    return venue.pk, group.pool_id


def assets(count: int) -> list[str]:
    return [f"BM{i:04d}" for i in range(1, count + 1)]


def write_tokens(path: Path, venue_id: int, count: int) -> None:
    """New device tokens for the machines, with their seqs and meters resumed (a stage after a stage)."""
    from django.db import connection

    from machines import provisioning
    from machines.management.commands.simulate_machines import _write_tokens
    from machines.models import Machine

    machines = sorted(
        Machine.objects.filter(venue_id=venue_id, asset_number__in=assets(count)),
        key=lambda m: m.asset_number,
    )
    _write_tokens(path, provisioning.issue_credentials(machines, actor="bench"))
    connection.close()


# --- processes -------------------------------------------------------------------------------------------


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid


def start(name: str, cmd: list[str], env: dict[str, str], logdir: Path) -> Proc:
    log = logdir / f"{name}.log"
    with log.open("wb") as out:
        popen = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    return Proc(name, popen, log)


def stop(procs: list[Proc], *, profiled: Proc | None = None) -> None:
    if profiled is not None and profiled.popen.poll() is None:
        profiled.popen.send_signal(signal.SIGUSR1)  # web_process writes its profile
        time.sleep(5)
    for proc in procs:
        if proc.popen.poll() is None:
            proc.popen.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.popen.wait(30)
        except subprocess.TimeoutExpired:
            proc.popen.kill()
            proc.popen.wait()


def wait_listening(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"nothing listens on port {port}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- CPU accounting (/proc) ---------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
            out.extend(int(x) for x in text.split())
    except OSError:
        pass
    return out


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        todo.extend(_children(p))
    return pids


def _cpu_seconds(pid: int, *, reaped: bool = False) -> float:
    """utime + stime of ``pid`` (+ its reaped children's cutime + cstime)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / CLK_TCK


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return 0


def _pids_named(name: str) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/comm").read_text().strip() == name:
                    out.append(int(entry))
            except OSError:
                pass
    return out


def _total_cpu() -> tuple[float, float]:
    """(busy, all) seconds of every CPU since boot."""
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + parts[4]
    return (sum(parts) - idle) / CLK_TCK, sum(parts) / CLK_TCK


@dataclass
class CpuSampler:
    """CPU seconds of named process groups, sampled every second in a thread."""

    groups: dict[str, list[int]]  # name -> root pids (their trees are summed)
    samples: list[tuple[float, dict[str, float]]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def sample(self) -> None:
        row = {
            name: sum(_cpu_seconds(p, reaped=True) for root in roots for p in _tree(root))
            for name, roots in self.groups.items()
        }
        # PostgreSQL: every backend, including those that exited (the postmaster reaped them). Other
        # clients' backends (other databases) count too: the box is shared.
        pg = _pids_named("postgres")
        masters = {p for p in pg if _ppid(p) not in pg}
        row["postgres"] = sum(_cpu_seconds(p, reaped=p in masters) for p in pg)
        row["redis"] = sum(_cpu_seconds(p) for p in _pids_named("redis-server"))
        busy, total = _total_cpu()
        row["_busy"], row["_total"] = busy, total
        self.samples.append((time.time(), row))

    def run(self) -> None:
        while not self._stop.wait(1.0):
            self.sample()

    @contextmanager
    def running(self) -> Iterator[None]:
        self.sample()
        thread = threading.Thread(target=self.run, daemon=True)
        thread.start()
        try:
            yield
        finally:
            self._stop.set()
            thread.join()
            self.sample()

    def window(self, start: float, end: float) -> dict[str, float]:
        """Cores used by each group between the samples closest inside [start, end]."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2:
            return {}
        (t0, a), (t1, b) = inside[0], inside[-1]
        seconds = t1 - t0
        out = {name: (b[name] - a.get(name, 0.0)) / seconds for name in b if not name.startswith("_")}
        out["_machine_busy"] = (b["_busy"] - a["_busy"]) / seconds  # all cores, busy
        out["_cores"] = (b["_total"] - a["_total"]) / seconds
        return out


# --- a stage ----------------------------------------------------------------------------------------------


def use_database(name: str) -> None:
    """Point this process's Django connection at database ``name`` (the template or a stage's copy)."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = name


def clone_database(url: str, template: str, name: str) -> None:
    import psycopg

    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')


def start_servers(
    args: argparse.Namespace, env: dict[str, str], workdir: Path, ports: list[int], tag: str
) -> list[Proc]:
    procs: list[Proc] = []
    try:
        for i, port in enumerate(ports):
            # Every web process runs through web_process(): uvicorn plus timing logs of the gateway's
            # database calls; web0 also under cProfile with --profile.
            cmd = [PYTHON, str(Path(__file__).resolve()), "_web", str(port)]
            if args.profile and i == 0:
                cmd.append(str(workdir / f"web0-{tag}.prof"))
            procs.append(start(f"web{i}-{tag}", cmd, env, workdir))
        celery = [PYTHON, "-m", "celery", "-A", "config", "--quiet"]
        # The worker runs through worker_process(): Celery plus a timing log of its tasks.
        worker = [PYTHON, str(Path(__file__).resolve()), "_worker", "-Q", "celery,draws"]
        worker += ["--concurrency", str(args.worker_concurrency), "-l", "warning", "-n", f"bench-{tag}@%h"]
        procs.append(start(f"worker-{tag}", worker, env, workdir))
        beat = [*celery, "beat", "-l", "warning", "-s", str(workdir / f"celerybeat-{tag}")]
        procs.append(start(f"beat-{tag}", beat, env, workdir))
        # The progressive broadcaster: a process of its own (machines.broadcaster), as deploy/ runs it.
        broadcaster = [PYTHON, "manage.py", "broadcast_progressives"]
        procs.append(start(f"broadcaster-{tag}", broadcaster, env, workdir))
        for port in ports:
            wait_listening(port)
        time.sleep(3)  # the worker and beat up, the first broadcasts out
    except BaseException:
        stop(procs)
        raise
    return procs


def run_stage(
    args: argparse.Namespace,
    *,
    pace: float,
    index: int,
    tokens: Path,
    env: dict[str, str],
    workdir: Path,
) -> dict[str, Any]:
    """One pace on a fresh copy of the provisioned database, with fresh servers: no stage inherits the
    previous stage's disconnects (1,000 link-lost locks whose hellos would be the next stage's storm)."""
    from machines.simulator import Report

    url = os.environ["DATABASE_URL"]
    template = url.rsplit("/", 1)[1].split("?")[0]
    name = f"{template}_stage"
    clone_database(url, template, name)
    stage_env = {**env, "DATABASE_URL": url.rsplit("/", 1)[0] + "/" + name}
    ports = [free_port() for _ in range(args.web)]
    urls = [f"ws://127.0.0.1:{port}" for port in ports]
    tag = f"s{index}"
    servers = start_servers(args, stage_env, workdir, ports, tag)
    sims: list[Proc] = []
    reports = [workdir / f"report-{tag}-{i}.json" for i in range(args.sim)]
    try:
        for i in range(args.sim):
            cmd = [
                PYTHON, "manage.py", "simulate_machines",
                "--tokens", str(tokens), "--shard", f"{i}/{args.sim}",
                "--url", ",".join(urls),
                "--seed", str(args.seed + 1000 * index),
                "--duration", str(args.seconds), "--warmup", str(args.warmup),
                "--pace-scale", str(pace), "--think", str(args.think),
                "--hit-probability", "0", "--meters-every", str(args.meters_every),
                "--connect-rate", str(args.connect_rate), "--drain", "15",
                "--heartbeat-every", str(args.heartbeat_every),
                "--report", str(reports[i]),
            ]  # fmt: skip
            sims.append(start(f"sim{i}-{tag}", cmd, stage_env, workdir))
        groups = {p.name.rsplit("-", 1)[0]: [p.pid] for p in [*servers, *sims]}
        sampler = CpuSampler(groups)
        with sampler.running():
            for proc in sims:
                proc.popen.wait()
        time.sleep(2.5)  # the fold after the last play
    finally:
        stop(sims)
        stop(servers, profiled=servers[0] if args.profile else None)
        for proc in [*servers, *sims]:
            tail = proc.log.read_text(errors="replace")[-3000:]
            if "Traceback" in tail or proc.popen.returncode not in (0, -signal.SIGTERM):
                print(f"--- {proc.name} (exit {proc.popen.returncode}) log tail ---\n{tail}")
    for proc in sims:
        if proc.popen.returncode != 0:
            raise RuntimeError(f"{proc.name} failed ({proc.popen.returncode})")
    merged = Report()
    for path in reports:
        merged = merged.merge(Report.from_json(json.loads(path.read_text())))
    cpu = sampler.window(merged.wall_start, merged.wall_end)
    use_database(name)
    exact = check_pool(merged.counters["plays_stored_all"], merged.bets_stored, merged.unanswered)
    use_database(template)
    timing = [
        f"{p.name}: {line[line.index('[gateway db]') if '[gateway db]' in line else line.index('[tasks]') :]}"
        for p in servers
        for line in p.log.read_text(errors="replace").splitlines()
        if "[gateway db]" in line or "] [tasks]" in line
    ]
    return {"pace": pace, "report": merged, "cpu": cpu, "exact": exact, "tag": tag, "timing": timing}


def verdict(stage: dict[str, Any], machines: int, pace: float, think: float) -> tuple[bool, str, float]:
    """Sustained? (accepted ≥ 97 % of the offered rate, p99 reply < 1 s, nothing rejected, every machine
    heard ≥ 2 broadcasts in every whole second of the window, no lock-up, the pool exact)."""
    from halls.simulation import percentile
    from machines.simulator import MIN_GAME_SECONDS

    report = stage["report"]
    c = report.counters
    offered = machines / (MIN_GAME_SECONDS["C"] * pace * (1 + think / 2))
    rate = c["plays_accepted"] / report.seconds
    p99 = percentile(sorted(report.reply_latencies), 99)
    starved = sum(1 for n in report.thin_seconds_per_machine if n)
    problems = []
    if rate < 0.97 * offered:
        problems.append(f"accepted {rate:.0f}/s < 97 % of offered {offered:.0f}/s")
    if not p99 < 1.0:
        problems.append(f"reply p99 {p99 * 1000:.0f} ms")
    if c["plays_rejected"] or c["other_rejected"]:
        problems.append(f"rejections {report.rejected_codes}")
    if starved:
        problems.append(f"{starved} machines had a second with < 2 broadcasts")
    if c["lockups"]:
        problems.append(f"{c['lockups']} lock-ups")
    if not stage["exact"]:
        problems.append("pool NOT exact")
    return not problems, "; ".join(problems) or "sustained", rate


def figures(stage: dict[str, Any], args: argparse.Namespace) -> dict[str, float]:
    """The stage's headline figures: plays/s accepted, reply p99, the fewest broadcasts any machine heard
    in any whole second of the window, lock-ups, the offered rate."""
    from halls.simulation import percentile
    from machines.simulator import MIN_GAME_SECONDS

    report = stage["report"]
    heard = [min(n, 99) for n in report.min_per_second_per_machine] or [0]
    return {
        "pace": stage["pace"],
        "offered_per_s": args.machines / (MIN_GAME_SECONDS["C"] * stage["pace"] * (1 + args.think / 2)),
        "plays_per_s": report.counters["plays_accepted"] / report.seconds if report.seconds else 0.0,
        "reply_p99_ms": percentile(sorted(report.reply_latencies), 99) * 1000,
        "min_broadcasts_per_s": min(heard),
        "lockups": report.counters["lockups"],
    }


def graceful(stage: dict[str, Any], args: argparse.Namespace) -> tuple[bool, str]:
    """Sustained, or (past the gateway's capacity) degraded gracefully: answers late, but every machine
    heard >= 2 broadcasts in every second, no lock-up, nothing refused but "busy", the pool exact."""
    ok, why, _ = verdict(stage, args.machines, stage["pace"], args.think)
    if ok:
        return True, "sustained"
    report = stage["report"]
    c = report.counters
    problems = []
    if any(report.thin_seconds_per_machine):
        problems.append("a machine had a second with < 2 broadcasts")
    if c["lockups"]:
        problems.append(f"{c['lockups']} lock-ups")
    if c["plays_rejected"] or c["other_rejected"]:
        problems.append(f"rejections {report.rejected_codes}")
    if not stage["exact"]:
        problems.append("pool NOT exact")
    if problems:
        return False, "; ".join(problems)
    return True, f"degraded gracefully ({why})"


def summary_line(stages: list[dict[str, Any]], args: argparse.Namespace) -> str:
    """ONE line, key=value: each figure per stage, comma-separated in stage order."""
    rows = [figures(stage, args) for stage in stages]

    def column(key: str, fmt: str) -> str:
        return ",".join(format(row[key], fmt) for row in rows) or "-"

    ok = sum(1 for stage in stages if verdict(stage, args.machines, stage["pace"], args.think)[0])
    good = sum(1 for stage in stages if graceful(stage, args)[0])
    return (
        f"machines={args.machines} paces={column('pace', 'g')} "
        f"offered_per_s={column('offered_per_s', '.0f')} "
        f"plays_per_s={column('plays_per_s', '.1f')} reply_p99_ms={column('reply_p99_ms', '.0f')} "
        f"min_broadcasts_per_s={column('min_broadcasts_per_s', 'd')} lockups={column('lockups', 'd')} "
        f"sustained={ok}/{len(stages)} graceful={good}/{len(stages)}"
    )


def print_stage(stage: dict[str, Any], args: argparse.Namespace) -> None:
    report = stage["report"]
    ok, why, _ = verdict(stage, args.machines, stage["pace"], args.think)
    print(f"=== pace × {stage['pace']}: {'SUSTAINED' if ok else 'NOT SUSTAINED'} ({why})")
    if not ok:
        print(f"    {'graceful' if graceful(stage, args)[0] else 'NOT graceful'}: {graceful(stage, args)[1]}")
    for line in report.lines():
        print("  " + line)
    cpu = stage["cpu"]
    if cpu:
        parts = [
            f"{name} {cores * 100:.0f} %" for name, cores in sorted(cpu.items()) if not name.startswith("_")
        ]
        print(f"  CPU (% of one core): {', '.join(parts)}")
        mine = sum(v for k, v in cpu.items() if not k.startswith("_"))
        print(
            f"  box: {cpu['_machine_busy']:.2f} of {cpu['_cores']:.0f} cores busy, "
            f"{max(0.0, cpu['_machine_busy'] - mine):.2f} of them by processes outside the bench"
        )
    if stage["timing"]:
        print("  timing logs, every 5 s (web: gateway database calls; worker: tasks):")
        for line in stage["timing"]:
            print("    " + line)
    print()


# --- exactness -----------------------------------------------------------------------------------------


def check_pool(told_stored: int, told_bets: Decimal, unanswered: int) -> bool:
    """Fold the bench pool and check it: each level == seed + Σ bet × rate over its contributions (no
    hits in the bench), the plays' contributions == the plays stored == what the machines were told was
    stored, and a sequence gap's reconciled coin-in (if any) contributed once."""
    from django.db.models import Count, Q, Sum

    from jackpots.models import Award, Contribution, Pool, PoolLevel
    from jackpots.services.folding import fold
    from machines.models import MachineAlert, Play, SequenceGap

    pool = Pool.objects.get(code=POOL_CODE)
    fold(pool.pk)
    plays = Play.objects.aggregate(n=Count("id"), bet=Sum("bet"))
    n, bets = plays["n"], plays["bet"] or Decimal(0)
    # A play whose reply never reached its machine (unanswered at the end) may still be stored.
    ok = n - told_stored <= unanswered and (bets == told_bets or n != told_stored)
    print(
        f"  plays stored: {n}, bets {bets}; the machines were told {told_stored} ({told_bets}), "
        f"{unanswered} messages unanswered at the end: {'consistent' if ok else 'INCONSISTENT'}"
    )
    awards = Award.objects.filter(pool=pool).count()
    gaps = SequenceGap.objects.aggregate(n=Count("id"), coin_in=Sum("missing_coin_in"))
    alerts = dict(MachineAlert.objects.values_list("kind").annotate(n=Count("id")))
    print(
        f"  awards {awards}; sequence gaps {gaps['n']} (reconciled coin-in {gaps['coin_in'] or 0}); "
        f"alerts {alerts or 'none'} (link_lost ones include the disconnects at the end)"
    )
    ok = ok and awards == 0
    for level in PoolLevel.objects.filter(pool=pool).order_by("position"):
        rows = Contribution.objects.filter(level=level)
        all_ = rows.aggregate(n=Count("id"), bet=Sum("bet"))
        of_plays = rows.filter(~Q(idempotency_key__contains=":gap:")).aggregate(n=Count("id"), bet=Sum("bet"))
        expected = level.seed + (all_["bet"] or Decimal(0)) * level.contribution_rate
        exact = level.amount == expected and of_plays["n"] == n and (of_plays["bet"] or Decimal(0)) == bets
        ok = ok and exact
        print(
            f"  level {level.name}: {level.amount} == seed {level.seed} + Σbet {all_['bet'] or 0} × "
            f"{level.contribution_rate} = {expected.normalize()}; {of_plays['n']} play contributions "
            f"(Σbet {of_plays['bet'] or 0}), {all_['n'] - of_plays['n']} gap contributions: {exact}"
        )
    return ok


# --- profiling a web process -----------------------------------------------------------------------------


def _call_name(fn: Any) -> str:
    """The gateway function a database-thread job runs (asgiref wraps it in a partial)."""
    for arg in getattr(fn, "args", ()):
        target = getattr(arg, "func", arg)  # the partial of the function and its arguments
        name = getattr(target, "__name__", None)
        if name and getattr(target, "__module__", "").startswith("machines"):
            return str(name)
    return "?"


class TimedExecutor:
    """Wraps the gateway's database thread pool (machines.consumers._executor): for every call, how long
    it queued for a thread, how long it ran (wall) and how much CPU its thread used meanwhile (the rest of
    its run is waiting: PostgreSQL round trips and locks, or the GIL); a summary every REPORT_EVERY s."""

    REPORT_EVERY = 5.0

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.lock = threading.Lock()
        self.calls: list[tuple[str, float, float, float]] = []  # name, queued, ran, cpu
        self.in_flight = 0
        self.max_in_flight = 0
        self.lags: list[float] = []  # the event loop's lateness (lag_monitor)
        threading.Thread(target=self._report, daemon=True).start()

    async def lag_monitor(self, every: float = 0.05) -> None:
        """How late the event loop wakes a task that sleeps `every` seconds (late = busy or starved)."""
        import asyncio

        while True:
            t0 = time.perf_counter()
            await asyncio.sleep(every)
            with self.lock:
                self.lags.append(time.perf_counter() - t0 - every)

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        queued = time.perf_counter()
        name = _call_name(fn)
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

        def timed() -> Any:
            started, cpu0 = time.perf_counter(), time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                ran, cpu = time.perf_counter() - started, time.thread_time() - cpu0
                with self.lock:
                    self.in_flight -= 1
                    self.calls.append((name, started - queued, ran, cpu))

        return self.inner.submit(timed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _report(self) -> None:
        from halls.simulation import percentile

        ms = 1000
        while True:
            time.sleep(self.REPORT_EVERY)
            with self.lock:
                calls, self.calls = self.calls, []
                lags, self.lags = sorted(self.lags), []
                peak, self.max_in_flight = self.max_in_flight, self.in_flight
            if not calls:
                continue
            waits = sorted(c[1] for c in calls)
            by_name: dict[str, list[tuple[float, float]]] = {}
            for name, _, ran, cpu in calls:
                by_name.setdefault(name, []).append((ran, cpu))
            kinds = "; ".join(
                f"{name} {len(rows) / self.REPORT_EVERY:.0f}/s ran p50 "
                f"{percentile(sorted(r for r, _ in rows), 50) * ms:.1f} ms cpu "
                f"{sum(c for _, c in rows) / len(rows) * ms:.2f} ms"
                for name, rows in sorted(by_name.items(), key=lambda kv: -len(kv[1]))
            )
            print(
                f"[gateway db] {time.strftime('%H:%M:%S')} {len(calls) / self.REPORT_EVERY:.0f} calls/s, "
                f"queued p50 {percentile(waits, 50) * ms:.1f} p99 {percentile(waits, 99) * ms:.1f} ms, "
                f"in flight max {peak}, event loop late p50 {percentile(lags, 50) * ms:.1f} "
                f"p99 {percentile(lags, 99) * ms:.1f} ms | {kinds}",
                flush=True,
            )


def worker_process(argv: list[str]) -> None:
    """``celery worker`` with every task's run time logged: per task name, every 5 s, from each pool
    process ("[tasks] ..."), so a late broadcast can be told from a busy worker."""
    from celery.signals import task_postrun, task_prerun

    from config.celery import app

    started: dict[str, float] = {}
    done: list[tuple[str, float, float]] = []  # name, started, seconds
    lock = threading.Lock()
    reporter: list[threading.Thread] = []

    def report() -> None:
        from halls.simulation import percentile

        while True:
            time.sleep(5.0)
            with lock:
                rows, done[:] = list(done), []
            by_name: dict[str, list[float]] = {}
            for name, _, seconds in rows:
                by_name.setdefault(name.rsplit(".", 1)[-1], []).append(seconds)
            text = "; ".join(
                f"{name} {len(v)} runs p50 {percentile(sorted(v), 50) * 1000:.0f} max {max(v) * 1000:.0f} ms"
                for name, v in sorted(by_name.items())
            )
            print(f"[tasks] {time.strftime('%H:%M:%S')} pid {os.getpid()}: {text}", flush=True)

    @task_prerun.connect
    def _before(task_id: str, task: Any, **_: Any) -> None:
        if not reporter:
            reporter.append(threading.Thread(target=report, daemon=True))
            reporter[0].start()
        started[task_id] = time.perf_counter()

    @task_postrun.connect
    def _after(task_id: str, task: Any, **_: Any) -> None:
        t0 = started.pop(task_id, None)
        if t0 is not None:
            with lock:
                done.append((task.name, t0, time.perf_counter() - t0))

    app.worker_main(["worker", *argv])


def web_process(port: int, profile_out: str | None) -> None:
    """uvicorn serving config.asgi on ``port``, with the gateway's database calls timed (TimedExecutor);
    with ``profile_out``, cProfile on EVERY thread (the database threads too), timed by each thread's CPU
    clock, merged into that file when uvicorn stops."""
    import cProfile
    import pstats

    import uvicorn

    from machines import consumers

    timed = TimedExecutor(consumers._executor)
    consumers._executor = timed  # type: ignore[assignment]
    profiles: list[cProfile.Profile] = []
    lock = threading.Lock()

    def start_profiling(frame: Any, event: str, arg: Any) -> None:
        sys.setprofile(None)
        profiler = cProfile.Profile(time.thread_time)
        with lock:
            profiles.append(profiler)
        profiler.enable()

    if profile_out:
        threading.setprofile(start_profiling)
        main_profiler = cProfile.Profile(time.thread_time)
        profiles.append(main_profiler)
        main_profiler.enable()

    def dump(*_: Any) -> None:
        """SIGUSR1: write the merged profile now (the bench asks before it stops the process)."""
        with lock:
            stats = pstats.Stats(profiles[0])
            for profiler in profiles[1:]:
                profiler.create_stats()
                if profiler.stats:
                    stats.add(profiler)
        assert profile_out is not None
        stats.dump_stats(profile_out)

    if profile_out:
        signal.signal(signal.SIGUSR1, dump)
    config = uvicorn.Config(
        "config.asgi:application",
        host="127.0.0.1",
        port=port,
        lifespan="off",
        access_log=False,
        log_level="warning",
        loop="none",
        http="httptools",
        ws="websockets-sansio",
    )
    server = uvicorn.Server(config)

    async def serve() -> None:
        import asyncio

        monitor = asyncio.create_task(timed.lag_monitor())
        try:
            await server.serve()
        finally:
            monitor.cancel()

    from halls.simulation import run

    run(serve)


def print_profile(path: Path, limit: int = 35) -> None:
    import pstats

    stats = pstats.Stats(str(path))
    print(f"\n--- web0 profile (thread CPU seconds; {path}) ---")
    stats.sort_stats("tottime").print_stats(limit)
    stats.sort_stats("cumulative").print_stats(
        r"machines/|channels/(consumer|generic|db)|uvicorn/|websockets/", limit
    )


# --- main ----------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--machines", type=int, default=1000)
    parser.add_argument("--web", type=int, default=2, help="uvicorn processes (one port each)")
    parser.add_argument("--sim", type=int, default=2, help="simulator processes")
    parser.add_argument("--paces", default="1.0", help="pace scales to run in turn, e.g. 1.0,0.8,0.67")
    parser.add_argument("--runs", type=int, default=1, help="run each pace this many times (fresh each)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a short check: 200 machines, 20 s measured after 5 s of warm-up, connecting at 50/s",
    )
    parser.add_argument("--stop-at-first-failure", action="store_true")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured seconds per stage")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds after connecting, not measured")
    parser.add_argument("--think", type=float, default=0.0, help="extra time per game (0: at the minimum)")
    parser.add_argument("--meters-every", type=int, default=50)
    parser.add_argument("--heartbeat-every", type=float, default=3.0, help="simulated machines' heartbeat")
    parser.add_argument("--connect-rate", type=float, default=100.0, help="per simulator process")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--conn-max-age", type=int, default=60, help="CONN_MAX_AGE of the web processes")
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument("--channel-prefix", default="benchmachines")
    parser.add_argument(
        "--broadcast-seconds", type=float, help="HALL_MACHINE_BROADCAST_SECONDS (default: the settings')"
    )
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the scratch database first")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, tokens, reports)")
    parser.add_argument(
        "--profile", action="store_true", help="run web0 under cProfile (all threads, CPU time) and print it"
    )
    args = parser.parse_args()
    if args.quick:
        args.machines, args.seconds, args.warmup, args.connect_rate = 200, 20.0, 5.0, 50.0

    ensure_database(os.environ["DATABASE_URL"], fresh=args.fresh)
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    venue_id, _ = provision(args.machines)
    workdir = Path(tempfile.mkdtemp(prefix="bench-machines-"))
    tokens = workdir / "tokens.jsonl"
    write_tokens(tokens, venue_id, args.machines)  # the stages' copies of the database share them
    connection.close()

    env = {
        **os.environ,
        "CHANNEL_PREFIX": args.channel_prefix,
        "CONN_MAX_AGE": str(args.conn_max_age),
        "PYTHONUNBUFFERED": "1",
        "LOG_LEVEL": "WARNING",
    }
    if args.broadcast_seconds:
        env["HALL_MACHINE_BROADCAST_SECONDS"] = str(args.broadcast_seconds)
    print(
        f"{args.machines} machines, {args.web} web processes, 1 worker "
        f"(concurrency {args.worker_concurrency}) + 1 beat, {args.sim} simulator processes; "
        f"work dir {workdir}"
    )
    print()
    stages: list[dict[str, Any]] = []
    try:
        paces = [float(x) for x in args.paces.split(",") for _ in range(args.runs)]
        for index, pace in enumerate(paces):
            stage = run_stage(args, pace=pace, index=index, tokens=tokens, env=env, workdir=workdir)
            stages.append(stage)
            print_stage(stage, args)
            ok, _, _ = verdict(stage, args.machines, pace, args.think)
            if not ok and args.stop_at_first_failure:
                break
    finally:
        if not args.keep:
            tokens.unlink(missing_ok=True)  # device tokens
    print("SUMMARY")
    best = None
    for stage in stages:
        ok, why, rate = verdict(stage, args.machines, stage["pace"], args.think)
        print(f"  pace × {stage['pace']}: {rate:,.1f} plays/s accepted — {'sustained' if ok else why}")
        if ok and (best is None or rate > best):
            best = rate
    print(f"  highest sustained: {f'{best:,.1f} plays/s' if best else 'none'}")
    print(f"  logs and reports: {workdir}")
    if args.profile:
        for stage in stages:
            path = workdir / f"web0-{stage['tag']}.prof"
            if path.exists():
                print_profile(path)
    print(summary_line(stages, args))
    return 0 if stages and all(graceful(stage, args)[0] for stage in stages) else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["_worker"]:
        setup_django()
        worker_process(sys.argv[2:])
        sys.exit(0)
    if sys.argv[1:2] == ["_web"]:
        setup_django()
        web_process(int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
        sys.exit(0)
    sys.exit(main())
