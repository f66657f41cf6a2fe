"""Benchmark: a Saturday opening at one door (issue 27, "Load"): a register of 1,000,000 entries, then 600
admissions in 10 minutes through the real HTTP API of a production web server.

Not a test. On a scratch PostgreSQL database (``--database``, dropped and created again: its name must
start with ``hall_bench``) it:

1. writes a register file of ENTRIES people (bench/register_load.py's shape: DNI, NIE, passports) and loads
   it with ``manage.py load_register`` in a process of its own, measuring the load's wall time and that
   process's peak memory (its own max RSS, from wait4) — targets ≤ 30 s and ≤ 300 MB;
2. makes a venue, a door account (the ``door`` and ``operator`` roles, an API token) and a few
   self-exclusions (through the API, before the opening; not timed);
3. starts the web server as deploy/ runs it (gunicorn with config.web_worker.HallUvicornWorker workers,
   config/gunicorn.py, HALL_DB_POOL=16; WEB_CONCURRENCY workers, 2 by default as in
   deploy/systemd/hall-web.service);
4. replays the opening: ADMISSIONS arrivals over MINUTES — a quarter of them in the first tenth of the time
   (the queue waiting outside at opening), the rest spread over the remaining nine tenths (uniform order
   statistics: a steady Poisson stream) — at DOORS doors (1: one door terminal, each admission POSTed when
   the previous one has been answered, as a door's screen does, over one kept-alive connection). 3 % of
   the people are on the register, 3 % minors and 1 % self-excluded here; every answer's decision is
   checked against what it must be. ``--minutes`` compresses the same pattern (``--minutes 1``: the
   10-minute opening in one), 0 sends each admission as soon as the previous one is answered;
5. measures each decision's latency (request sent to answer read, p50/p95/p99/max; target p99 ≤ 200 ms)
   and how late each arrival was sent (a busy door making the queue wait), beside the baseline: the same
   documents looked up in a plain Python dict of the register's digests (read the document, HMAC it, look
   it up) in this process.

    .venv/bin/python bench/door_opening.py                     # the full size (about 12 minutes)
    .venv/bin/python bench/door_opening.py --quick             # 100,000 entries, 120 admissions in 30 s
    .venv/bin/python bench/door_opening.py --minutes 0         # the full register, no waiting between people

Measured here at the reduced size (--quick, a machine of 2 cores loaded by other work, load average 8):
100,000 entries loaded in 18.1 s, peak RSS 141 MB; 120 admissions in 30 s at one door: p50 34.8 ms, p95
121.6 ms, p99 156.3 ms, max 174.3 ms, every decision right; the dict's p99 0.139 ms.

The last line sums it up: ``entries=… load_s=… load_rss_mb=… admissions=… p50_ms=… p95_ms=… p99_ms=…
max_ms=… dict_p99_ms=… mismatched=… errors=…``; the exit status is 1 when an answer was wrong or missing.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import register_load  # noqa: E402  (bench/register_load.py: the register's people and file)

PYTHON = sys.executable
DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/hall_bench_door_opening"
REGISTER_NAME = "Registro General de Interdicciones de Acceso al Juego"
BURST_SHARE = 0.25  # of the arrivals, in the first BURST_TIME of the opening
BURST_TIME = 0.10
LISTED, MINORS, SELF_EXCLUDED = 0.03, 0.03, 0.01
WARMUP = 5
TARGET_LOAD_S, TARGET_RSS_MB, TARGET_P99_MS = 30.0, 300.0, 200.0
TIME_ZONE = "Africa/Ceuta"  # the venue's (Melilla)


def venue_today() -> date:
    return datetime.now(ZoneInfo(TIME_ZONE)).date()


@dataclass(frozen=True)
class Arrival:
    at: float  # seconds after opening, in the 10-minute pattern scaled to --minutes
    kind: str
    number: str
    country: str
    birth: date
    expected: str  # admitted, minor, prohibited, self_excluded


@dataclass
class Answered:
    latency_ms: list[float] = field(default_factory=list)
    late_ms: list[float] = field(default_factory=list)
    decisions: dict[str, int] = field(default_factory=dict)
    mismatched: int = 0
    errors: list[str] = field(default_factory=list)


# --- the opening's arrivals -----------------------------------------------------------------------------


def arrival_times(count: int, span: float, rng: random.Random) -> list[float]:
    """A burst at opening (BURST_SHARE of the people in BURST_TIME of the span), then a steady stream."""
    burst = round(count * BURST_SHARE)
    times = [rng.uniform(0, span * BURST_TIME) for _ in range(burst)]
    times += [rng.uniform(span * BURST_TIME, span) for _ in range(count - burst)]
    return sorted(times)


def birth_of(today: date, years: int, rng: random.Random) -> date:
    return today - timedelta(days=years * 365 + rng.randrange(365) + years // 4)


def arrivals(count: int, entries: int, span: float, seed: int) -> list[Arrival]:
    """`count` people in a shuffled order: LISTED of them on the register (a random entry), MINORS minors,
    SELF_EXCLUDED self-excluded here (recorded before the opening), each at least one when `count` allows;
    the rest adults on no register."""
    rng = random.Random(seed)
    today = venue_today()
    shares = [("prohibited", LISTED), ("minor", MINORS), ("self_excluded", SELF_EXCLUDED)]
    expected: list[str] = []
    for name, share in shares:
        expected += [name] * min(max(1, round(count * share)), count - len(expected))
    expected += ["admitted"] * (count - len(expected))
    rng.shuffle(expected)
    people: list[Arrival] = []
    fresh = 3 * entries  # people on no register: beyond every listed index
    for at, decision in zip(arrival_times(count, span, rng), expected, strict=True):
        if decision == "prohibited":
            kind, number, country = register_load.person(rng.randrange(entries))
        else:
            kind, number, country = register_load.person(fresh)
            fresh += 1
        years = rng.randrange(14, 17) if decision == "minor" else rng.randrange(18, 85)
        people.append(Arrival(at, kind, number, country, birth_of(today, years, rng), decision))
    return people


# --- processes ------------------------------------------------------------------------------------------


def scratch_database(url: str) -> None:
    name = url.rsplit("/", 1)[1].split("?")[0]
    if not name.startswith("hall_bench"):
        raise SystemExit(
            f"--database: {name!r} is dropped and created again; its name must start with hall_bench"
        )
    register_load.ensure_database(url)


def child_env(database: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["DATABASE_URL"] = database
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run_measured(env: dict[str, str], *args: str) -> tuple[float, float]:
    """Run manage.py `args` in its own process: wall seconds and that process's own peak RSS (MB)."""
    started = time.perf_counter()
    proc = subprocess.Popen([PYTHON, "manage.py", *args], cwd=ROOT, env=env)
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed ({proc.returncode})")
    return seconds, usage.ru_maxrss / 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_web(env: dict[str, str], port: int, workers: int, log: Path) -> subprocess.Popen[bytes]:
    """The web server as deploy/systemd/hall-web.service runs it."""
    web_env = {**env, "HALL_DB_POOL": env.get("HALL_DB_POOL", "16"), "WEB_CONCURRENCY": str(workers)}
    cmd = [
        PYTHON, "-m", "gunicorn", "config.asgi:application",
        "-c", "config/gunicorn.py",
        "--worker-class", "config.web_worker.HallUvicornWorker",
        "--workers", str(workers),
        "--bind", f"127.0.0.1:{port}",
        "--graceful-timeout", "10",
    ]  # fmt: skip
    with log.open("wb") as out:
        return subprocess.Popen(cmd, cwd=ROOT, env=web_env, stdout=out, stderr=subprocess.STDOUT)


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 90.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the web server exited ({proc.returncode})")
        try:
            httpx.get(base + "/api/", timeout=2.0)
            return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise SystemExit("the web server did not answer")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def server_cpu_seconds(pid: int) -> float:
    import psutil

    try:
        master = psutil.Process(pid)
        procs = [master, *master.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


# --- the hall -------------------------------------------------------------------------------------------


def provision() -> tuple[int, str]:
    """The venue and its door account (door + operator roles: the door's API takes either): (venue, token)."""
    from decimal import Decimal

    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from halls.models import HallCategory, Jurisdiction, Role, StaffRole, Venue

    venue = Venue.objects.create(
        name="Bingo Sábado",
        licence_number="BENCH-DOOR-1",
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
        time_zone=TIME_ZONE,
        line_percent=Decimal("10"),
        bingo_percent=Decimal("50"),
    )
    user = User.objects.create_user(username="puerta", password=uuid.uuid4().hex)
    for role in (Role.DOOR, Role.OPERATOR):
        StaffRole.objects.create(user=user, venue=venue, role=role)
    token, _ = Token.objects.get_or_create(user=user)
    return venue.pk, token.key


def _body(person: Arrival) -> dict[str, str]:
    return {
        "kind": person.kind,
        "number": person.number,
        "country": person.country,
        "birth_date": person.birth.isoformat(),
        "door": "Puerta principal",
        "idempotency_key": uuid.uuid4().hex,
    }


def self_exclude(client: Any, venue_id: int, people: list[Arrival]) -> None:
    from django.urls import reverse

    until = (venue_today() + timedelta(days=365)).isoformat()
    for person in people:
        if person.expected != "self_excluded":
            continue
        body = {"kind": person.kind, "number": person.number, "country": person.country, "until": until}
        answer = client.post(reverse("api-door-self-exclusions", args=[venue_id]), json=body)
        if answer.status_code != 201:
            raise SystemExit(f"self-exclusion refused: {answer.status_code} {answer.text[:300]}")


# --- the opening ----------------------------------------------------------------------------------------


def door(
    client: Any,
    url: str,
    people: list[Arrival],
    scale: float,
    opened: float,
    result: Answered,
    lock: threading.Lock,
) -> None:
    """One door: each person admitted when they arrive, or as soon as the previous one was answered."""
    for person in people:
        due = opened + person.at * scale
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        sent = time.perf_counter()
        try:
            answer = client.post(url, json=_body(person))
            elapsed = (time.perf_counter() - sent) * 1000
            decision = answer.json().get("decision") if answer.status_code == 201 else None
        except Exception as exc:  # a refused connection, a timeout: counted, never hidden
            with lock:
                result.errors.append(f"{type(exc).__name__}: {exc}"[:200])
            continue
        with lock:
            result.latency_ms.append(elapsed)
            result.late_ms.append(max(0.0, sent - due) * 1000)
            if decision is None:
                result.errors.append(f"{answer.status_code} {answer.text[:200]}")
                continue
            result.decisions[decision] = result.decisions.get(decision, 0) + 1
            if decision != person.expected:
                result.mismatched += 1


def opening(
    base: str, token: str, venue_id: int, people: list[Arrival], scale: float, doors: int
) -> Answered:
    import httpx
    from django.urls import reverse

    url = reverse("api-door-admissions", args=[venue_id])
    headers = {"Authorization": f"Token {token}", "Accept-Language": "es"}
    clients = [httpx.Client(base_url=base, headers=headers, timeout=30.0) for _ in range(doors)]
    try:
        warm = arrivals(WARMUP * doors, 1, 1.0, seed=99)
        for i, person in enumerate(warm):  # each connection opened, the workers' first requests served
            clients[i % doors].post(url, json=_body(person))
        result, lock = Answered(), threading.Lock()
        opened = time.perf_counter() + 0.2
        threads = [
            threading.Thread(
                target=door,
                args=(clients[d], url, people[d::doors], scale, opened, result, lock),
                daemon=True,
            )
            for d in range(doors)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return result
    finally:
        for client in clients:
            client.close()


# --- the baseline ---------------------------------------------------------------------------------------


def build_baseline(entries: int) -> tuple[dict[bytes, str], float]:
    """The register's digests in a plain dict, as the file lists them, and the seconds it took."""
    from halls.door.documents import Document, keyed_digest, read_document
    from halls.door.services.registers import register_key

    key = register_key()
    started = time.perf_counter()
    listed: dict[bytes, str] = {}
    for i in range(entries):
        document = read_document(*register_load.person(i))
        if isinstance(document, Document):
            listed[keyed_digest(key, document)] = "RGIAJ"
    return listed, time.perf_counter() - started


def baseline(listed: dict[bytes, str], people: list[Arrival]) -> list[float]:
    """Each arrival's decision against the dict (ms): read the document, HMAC it, look it up."""
    from halls.door.documents import Document, keyed_digest, read_document
    from halls.door.services.registers import register_key

    key = register_key()
    times: list[float] = []
    for person in people:
        t0 = time.perf_counter()
        document = read_document(person.kind, person.number, person.country)
        assert isinstance(document, Document)
        found = listed.get(keyed_digest(key, document))
        times.append((time.perf_counter() - t0) * 1000)
        assert (found is not None) == (person.expected == "prohibited")
    return times


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return float(register_load.percentile(sorted(values), q))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=1_000_000, help="people on the register")
    parser.add_argument("--admissions", type=int, default=600, help="people at the door")
    parser.add_argument(
        "--minutes", type=float, default=10.0, help="the opening's length (0: as fast as the door answers)"
    )
    parser.add_argument(
        "--database",
        default=os.environ.get("DATABASE_URL") or DEFAULT_DATABASE,
        help="scratch PostgreSQL database (dropped and created again; its name starts with hall_bench)",
    )
    parser.add_argument("--doors", type=int, default=1, help="doors admitting at once (each its connection)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (WEB_CONCURRENCY)")
    parser.add_argument("--port", type=int, default=0, help="the server's port (0: a free one)")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--quick", action="store_true", help="100,000 entries, 120 admissions in 30 s")
    args = parser.parse_args()
    if args.quick:
        args.entries, args.admissions, args.minutes = 100_000, 120, 0.5
    if args.entries < 1 or args.admissions < 1 or args.minutes < 0 or args.doors < 1:
        raise SystemExit("--entries, --admissions and --doors are at least 1, --minutes at least 0")

    scratch_database(args.database)
    env = child_env(args.database)
    os.environ["DATABASE_URL"] = args.database
    workdir = Path(tempfile.mkdtemp(prefix="hall-bench-door-opening-"))
    # The schema is made while this process writes the register's file and builds the baseline's dict
    # (neither is measured against a target); the load then runs alone.
    started = time.perf_counter()
    migrate = subprocess.Popen([PYTHON, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env)
    import django

    django.setup()
    register = workdir / "rgiaj-1.csv"
    register_load.write_file(register, args.entries, 1, 0)
    print(f"register file of {args.entries:,} entries written in {time.perf_counter() - started:.1f} s")
    listed, built = build_baseline(args.entries)
    if migrate.wait() != 0:
        raise SystemExit(f"migrate failed ({migrate.returncode})")
    print(f"migrated, file written and baseline built in {time.perf_counter() - started:.1f} s")
    load_s, load_rss = run_measured(env, "load_register", str(register), "--create", REGISTER_NAME)
    print(f"register loaded in {load_s:.1f} s, peak RSS of the loading process {load_rss:.0f} MB")

    venue_id, token = provision()
    span = 600.0  # the pattern's 10 minutes, in seconds
    people = arrivals(args.admissions, args.entries, span, args.seed)
    scale = args.minutes * 60 / span

    import httpx

    port = args.port or free_port()
    base = f"http://127.0.0.1:{port}"
    web = start_web(env, port, args.workers, workdir / "web.log")
    try:
        wait_ready(base, web)
        with httpx.Client(base_url=base, headers={"Authorization": f"Token {token}"}, timeout=30.0) as client:
            self_exclude(client, venue_id, people)
        cpu_before = server_cpu_seconds(web.pid)
        print(
            f"opening: {len(people)} people over {args.minutes:g} min at {args.doors} door(s), "
            f"server {base} ({args.workers} workers)"
        )
        t0 = time.perf_counter()
        result = opening(base, token, venue_id, people, scale, args.doors)
        wall = time.perf_counter() - t0
        cpu = server_cpu_seconds(web.pid) - cpu_before
    finally:
        stop(web)
    base_ms = baseline(listed, people)

    lat = result.latency_ms
    p50, p95, p99, top = (percentile(lat, 50), percentile(lat, 95), percentile(lat, 99), max(lat, default=0))
    decisions = dict(sorted(result.decisions.items()))
    print(f"decisions: {decisions}; mismatched {result.mismatched}; errors {len(result.errors)}")
    for error in result.errors[:5]:
        print(f"  error: {error}")
    print(
        f"decision latency (HTTP, {len(lat)} answers): p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
        f"p99 {p99:.1f} ms, max {top:.1f} ms (target p99 ≤ {TARGET_P99_MS:.0f} ms)"
    )
    late = result.late_ms
    per = cpu / max(len(lat), 1) * 1000
    print(
        f"queue: sent late p50 {percentile(late, 50):.0f} ms, max {max(late, default=0):.0f} ms; "
        f"the opening took {wall:.1f} s; server CPU {cpu:.1f} s ({per:.1f} ms per admission)"
    )
    b50, b99, btop = percentile(base_ms, 50), percentile(base_ms, 99), max(base_ms)
    print(
        f"baseline: a dict of {len(listed):,} digests (built in {built:.1f} s): "
        f"p50 {b50:.3f} ms, p99 {b99:.3f} ms, max {btop:.3f} ms"
    )
    verdict = {"load": load_s <= TARGET_LOAD_S, "rss": load_rss <= TARGET_RSS_MB, "p99": p99 <= TARGET_P99_MS}
    print("targets: " + ", ".join(f"{k} {'met' if ok else 'MISSED'}" for k, ok in verdict.items()))
    print(
        f"entries={args.entries} load_s={load_s:.1f} load_rss_mb={load_rss:.0f} admissions={len(lat)} "
        f"minutes={args.minutes:g} doors={args.doors} p50_ms={p50:.1f} p95_ms={p95:.1f} p99_ms={p99:.1f} "
        f"max_ms={top:.1f} dict_p99_ms={b99:.3f} mismatched={result.mismatched} errors={len(result.errors)}"
    )
    if result.mismatched or result.errors or len(lat) != len(people):
        sys.exit(1)


if __name__ == "__main__":
    main()
