"""Benchmark: the ticket redemption race through the real HTTP API (issue 30): 32 cashiers, 32 tickets,
random pairs of cashiers redeeming one ticket at the same moment, with other ticket traffic around them.

Not a test. On a scratch PostgreSQL database (DATABASE_URL, created and migrated if missing) it makes a
venue, CASHIERS cashiers (an API token and an open shift with a float each) and, per round, TICKETS tickets
issued through the services. It starts WEB uvicorn processes serving config.asgi (ports from --port), each
cashier talking to one of them. Each round: every ticket is given to two cashiers chosen at random, who
redeem it in cash at the same moment (a barrier per round); meanwhile every cashier issues tickets for cash
and redeems them (the other traffic). Every call is an HTTP request on the cashier's token.

It reports the status codes (the run must show no 5xx), and checks afterwards: each raced ticket redeemed
exactly once (one ledger transaction under its close key, one "redeemed" event), every other ticket too,
the loser of each pair refused 409 ticket_redeemed, and the venue's trial balance holding; the retries the
services made after a deadlock or serialization failure are read from each process's /metrics.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_race REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/ticket_race.py --fresh --rounds 5 --port 18100

The last line sums it up: ``requests=… status_5xx=0 raced=… redeemed_once=true trial_balance=true``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
PYTHON = sys.executable
API = "/api/cashier/venues/{venue}/tickets/"


def ensure_database(url: str, *, fresh: bool) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1].split("?")[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def provision(run: str, cashiers: int) -> dict[str, Any]:
    """A venue and its cashiers on shift (a till each, a float of 10,000.00), each with an API token."""
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from halls.cashier.models import Till
    from halls.cashier.services import shifts
    from halls.models import Jurisdiction, Role, StaffRole, Venue

    venue = Venue.objects.create(name=f"Race {run}", licence_number=f"RC-{run}", jurisdiction=Jurisdiction.ML)
    made = []
    for i in range(cashiers):
        user = User.objects.create(username=f"race-{run}-{i}")
        StaffRole.objects.create(user=user, venue=venue, role=Role.CASHIER)
        till = Till.objects.create(venue=venue, name=f"Caja {i + 1}")
        shifts.open_shift(till=till, cashier=user, float_amount=Decimal("10000.00"), actor=user)
        made.append({"user": user.pk, "token": Token.objects.create(user=user).key})
    return {"venue": venue.pk, "cashiers": made}


def issue_round(hall: dict[str, Any], tickets: int, tag: str) -> list[str]:
    """`tickets` tickets issued through the services (cash paid in at the first cashier's till)."""
    from django.contrib.auth.models import User

    from halls.cashier.services import tickets as ticket_service

    user = User.objects.get(pk=hall["cashiers"][0]["user"])
    return [
        ticket_service.issue_for_payment(
            venue_id=hall["venue"], amount=Decimal("10.00"), means="cash", key=f"{tag}:{n}", actor=user
        ).ticket.number
        for n in range(tickets)
    ]


def web_process(port: int) -> None:
    import uvicorn

    uvicorn.run("config.asgi:application", host="127.0.0.1", port=port, log_level="warning", lifespan="off")


def wait_listening(port: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"nothing listens on port {port}")


def post(port: int, path: str, token: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Token {token}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:  # noqa: S310 (our own server)
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as exc:
        text = exc.read()
        try:
            return exc.code, json.loads(text or b"{}")
        except ValueError:
            return exc.code, {"raw": text[:300].decode(errors="replace")}


def retries_of(port: int) -> dict[str, float]:
    """hall_db_retries_total by reason, as this process's /metrics tells it."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
        text = answer.read().decode()
    found: dict[str, float] = {}
    for line in text.splitlines():
        m = re.match(r'hall_db_retries(_exhausted)?_total\{.*reason="(\w+)".*\} ([0-9.e+]+)', line)
        if m:
            name = f"{'exhausted' if m.group(1) else 'retried'}_{m.group(2)}"
            found[name] = found.get(name, 0.0) + float(m.group(3))
    return found


def run_round(
    hall: dict[str, Any], numbers: list[str], ports: list[int], others: int, tag: str, rng: random.Random
) -> tuple[Counter[str], dict[str, list[int]], list[str]]:
    """One round: each ticket raced by two random cashiers, everyone also issuing and redeeming its own."""
    cashiers = hall["cashiers"]
    plans: list[list[tuple[str, str]]] = [[] for _ in cashiers]
    for number in numbers:
        for i in rng.sample(range(len(cashiers)), 2):
            plans[i].append(("race", number))
    for plan in plans:
        plan += [("own", "")] * others
        rng.shuffle(plan)
    codes: Counter[str] = Counter()
    raced: dict[str, list[int]] = {n: [] for n in numbers}
    problems: list[str] = []
    guard = threading.Lock()
    start = threading.Barrier(len(cashiers))
    path = API.format(venue=hall["venue"])

    def worker(i: int) -> None:
        token, port = cashiers[i]["token"], ports[i % len(ports)]
        start.wait()
        for n, (what, number) in enumerate(plans[i]):
            if what == "race":
                status, body = post(
                    port, f"{path}{number}/redeem/", token, {"idempotency_key": f"{tag}:{i}:{n}"}
                )
                with guard:
                    raced[number].append(status)
            else:
                status, body = post(
                    port,
                    path,
                    token,
                    {"funded_by": "cash", "amount": "2.00", "idempotency_key": f"{tag}:{i}:{n}"},
                )
                if status == 201:
                    with guard:
                        codes[str(status)] += 1
                    status, body = post(
                        port,
                        f"{path}{body['number']}/redeem/",
                        token,
                        {"idempotency_key": f"{tag}:{i}:{n}:r"},
                    )
            with guard:
                codes[str(status)] += 1
                code = body.get("error", {}).get("code") if isinstance(body.get("error"), dict) else None
                if status >= 500 or (status >= 400 and code != "ticket_redeemed"):
                    problems.append(f"cashier {i} {what}: {status} {str(body)[:200]}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(cashiers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return codes, raced, problems


def check(hall: dict[str, Any], raced: dict[str, list[int]]) -> tuple[bool, bool]:
    """Each ticket of the venue redeemed exactly once; the trial balance."""
    from halls.cashier.models import LedgerTransaction, Ticket, TicketEvent, TicketEventKind, TicketState
    from halls.cashier.services import ledger as books

    venue = hall["venue"]
    once = True
    for number, statuses in raced.items():
        if sorted(statuses) != [201, 409]:
            print(f"  ticket {number}: answers {statuses}")
            once = False
    for ticket in Ticket.objects.filter(venue_id=venue):
        closes = LedgerTransaction.objects.filter(venue_id=venue, key=f"ticket:{ticket.pk}:close").count()
        redeemed = TicketEvent.objects.filter(ticket=ticket, kind=TicketEventKind.REDEEMED).count()
        if ticket.state != TicketState.REDEEMED or closes != 1 or redeemed != 1:
            print(f"  ticket {ticket.number}: {ticket.state}, {closes} closes, {redeemed} redeemed events")
            once = False
    balance = books.trial_balance(venue).holds
    return once, balance


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the database first")
    parser.add_argument("--cashiers", type=int, default=32)
    parser.add_argument("--tickets", type=int, default=32, help="tickets raced per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--others", type=int, default=2, help="tickets each cashier issues and redeems a round"
    )
    parser.add_argument("--web", type=int, default=4, help="uvicorn processes")
    parser.add_argument("--port", type=int, default=18100, help="the first port (one per process)")
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("_web", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._web:  # a child: the web process
        web_process(int(args._web[1]))
        return 0

    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_race")
    ensure_database(os.environ["DATABASE_URL"], fresh=args.fresh)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    if connection.vendor != "postgresql":
        raise SystemExit("ticket_race runs on PostgreSQL (DATABASE_URL)")
    run = f"{int(time.time())}-{os.getpid()}"
    hall = provision(run, args.cashiers)
    connection.close()
    ports = [args.port + i for i in range(args.web)]
    procs = [
        subprocess.Popen(
            [PYTHON, str(Path(__file__).resolve()), "_web", str(port)], cwd=ROOT, env=dict(os.environ)
        )
        for port in ports
    ]
    rng = random.Random(args.seed)
    total: Counter[str] = Counter()
    raced_all: dict[str, list[int]] = {}
    problems: list[str] = []
    try:
        for port in ports:
            wait_listening(port)
        started = time.perf_counter()
        for r in range(args.rounds):
            numbers = issue_round(hall, args.tickets, f"{run}:issue:{r}")
            connection.close()
            codes, raced, found = run_round(hall, numbers, ports, args.others, f"{run}:{r}", rng)
            total.update(codes)
            raced_all.update(raced)
            problems += found
            print(f"round {r + 1}: {dict(sorted(codes.items()))}")
        elapsed = time.perf_counter() - started
        retries: Counter[str] = Counter()
        for port in ports:
            retries.update(retries_of(port))
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)
    for problem in problems[:10]:
        print("  PROBLEM", problem)
    once, balance = check(hall, raced_all)
    requests = sum(total.values())
    fives = sum(v for k, v in total.items() if k.startswith("5"))
    print(f"{requests} requests in {elapsed:.1f} s; retries in the services: {dict(retries) or 'none'}")
    print(
        f"requests={requests} status_5xx={fives} raced={len(raced_all)} redeemed_once={str(once).lower()} "
        f"trial_balance={str(balance).lower()}"
    )
    return 0 if fives == 0 and once and balance and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
