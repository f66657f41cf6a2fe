"""Benchmark: loading a prohibited-access register of N entries, and looking documents up in it.

Not a test, and not in `make bench` (bench/door_opening.py loads a register there, then admits people at a
door through the web server; this script compares two versions and SQLite). On a scratch PostgreSQL
database (DATABASE_URL, dropped and created again) or, with ``--sqlite``, a fresh SQLite file, it writes a
register file of N people (DNI, NIE and passports; halls.door.registerfile's shape), then loads it with
`manage.py load_register` in a process of its own, twice (version 1, then version 2 replacing it: the
superseded entries deleted in the same transaction), measuring each load's wall time and the process's
peak memory (max RSS). Then it looks up LOOKUPS documents (half listed) through
halls.door.services.registers.check_document, beside the same lookups in a plain Python set of the
digests (the baseline), and prints p50 / p99.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_door .venv/bin/python bench/register_load.py
    .venv/bin/python bench/register_load.py --sqlite --entries 200000

The last line sums it up: ``engine=postgresql entries=… load_s=… reload_s=… max_rss_mb=… lookup_p99_ms=…``.

Measured here (2 cores shared with other work, 1,000,000 entries): PostgreSQL 17.5 s to load, 19.4 s to load
the next version over it, lookup p99 5.2 ms; SQLite 30.9 s and 56.5 s (deleting the superseded million).
Peak RSS of the loading process at most 195 MB (RUSAGE_CHILDREN: the largest child, `migrate` included).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
LOOKUPS = 2000


def person(i: int) -> tuple[str, str, str]:
    """The i-th person of the register: mostly DNIs, every 10th a NIE, every 25th a passport."""
    if i % 25 == 0:
        return ("PASSPORT", f"PA{i:08d}", "FRA")
    if i % 10 == 0:
        number = i % 10_000_000
        return ("NIE", f"Y{number:07d}{LETTERS[(10_000_000 + number) % 23]}", "")
    number = 10_000_000 + i
    return ("DNI", f"{number:08d}{LETTERS[number % 23]}", "ES")


def write_file(path: Path, entries: int, version: int, offset: int) -> None:
    digest = hashlib.sha256()
    with path.open("wb") as out:
        header = f"REGISTER,RGIAJ,NATIONAL,{version},2026-12-0{version}\n".encode()
        digest.update(header)
        out.write(header)
        block: list[str] = []
        for i in range(offset, offset + entries):
            block.append(",".join(person(i)) + "\n")
            if len(block) == 50_000:
                data = "".join(block).encode()
                digest.update(data)
                out.write(data)
                block.clear()
        data = "".join(block).encode()
        digest.update(data)
        out.write(data)
        out.write(f"END,{entries},{digest.hexdigest()}\n".encode())


def ensure_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True)


def timed_load(env: dict[str, str], path: Path, *extra: str) -> tuple[float, float]:
    """Wall seconds and the loading process's peak RSS in MB (RUSAGE_CHILDREN: the largest child so far)."""
    started = time.perf_counter()
    manage(env, "load_register", str(path), *extra)
    seconds = time.perf_counter() - started
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def percentile(ordered: list[float], q: float) -> float:
    rank = max(1, round(q / 100 * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--sqlite", action="store_true")
    args = parser.parse_args()

    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    scratch = Path(tempfile.mkdtemp(prefix="hall-bench-door-"))
    if args.sqlite:
        env["SQLITE_PATH"] = str(scratch / "hall.sqlite3")
        os.environ.pop("DATABASE_URL", None)
        os.environ.pop("REDIS_URL", None)
    else:
        url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_door")
        ensure_database(url)
        env["DATABASE_URL"] = os.environ["DATABASE_URL"] = url
    os.environ.update({k: v for k, v in env.items() if k == "SQLITE_PATH"})
    manage(env, "migrate", "-v", "0")

    first, second = scratch / "rgiaj-1.csv", scratch / "rgiaj-2.csv"
    started = time.perf_counter()
    write_file(first, args.entries, 1, 0)
    write_file(second, args.entries, 2, args.entries // 10)  # 90 % the same people, 10 % new
    print(
        f"files written in {time.perf_counter() - started:.1f} s ({first.stat().st_size / 1e6:.0f} MB each)"
    )

    load_s, rss1 = timed_load(env, first, "--create", "Registro General de Interdicciones de Acceso al Juego")
    print(f"load v1: {load_s:.1f} s, max RSS {rss1:.0f} MB")
    reload_s, rss2 = timed_load(env, second)
    print(f"load v2 (replacing v1): {reload_s:.1f} s, max RSS {rss2:.0f} MB")

    import django

    django.setup()
    from halls.door.documents import Document, keyed_digest, read_document
    from halls.door.services import registers
    from halls.models import Venue

    venue = Venue.objects.first() or Venue.objects.create(name="Bench", licence_number="BENCH-1")
    rng = random.Random(27)
    wanted = [
        person(rng.randrange(args.entries // 10, args.entries + args.entries // 10))
        for _ in range(LOOKUPS // 2)
    ]
    wanted += [person(rng.randrange(3 * args.entries, 4 * args.entries)) for _ in range(LOOKUPS // 2)]
    documents = [d for d in (read_document(*w) for w in wanted) if isinstance(d, Document)]
    times: list[float] = []
    listed = 0
    for document in documents:
        t0 = time.perf_counter()
        listed += registers.check_document(venue=venue, document=document).listed
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    key = registers.register_key()
    baseline = {
        keyed_digest(key, d)
        for d in (read_document(*person(i)) for i in range(args.entries))
        if isinstance(d, Document)
    }
    base_times: list[float] = []
    for document in documents:
        t0 = time.perf_counter()
        _ = keyed_digest(key, document) in baseline
        base_times.append((time.perf_counter() - t0) * 1000)
    base_times.sort()
    print(
        f"lookups: {len(times)} ({listed} listed) p50 {percentile(times, 50):.2f} ms "
        f"p99 {percentile(times, 99):.2f} ms; baseline set p99 {percentile(base_times, 99):.4f} ms"
    )
    engine = "sqlite" if args.sqlite else "postgresql"
    print(
        f"engine={engine} entries={args.entries} load_s={load_s:.1f} reload_s={reload_s:.1f} "
        f"max_rss_mb={max(rss1, rss2):.0f} lookup_p99_ms={percentile(times, 99):.2f} "
        f"set_p99_ms={percentile(base_times, 99):.4f}"
    )


if __name__ == "__main__":
    main()
