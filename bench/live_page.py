"""Benchmark: the authority portal's live page with INSTALLATIONS installations (issue 29, "Scale").

Not a test. A scratch regulator node (``--fresh`` drops and recreates its PostgreSQL database; migrated):
INSTALLATIONS installations registered, each sending a night of electronic bingo through the node's intake
(halls.regulator.services.intake.receive, signed, in batches): a session opened, GAMES games of
bench/feed_node.py's script (commitment, sales, 30 balls, a Line and a Bingo, the end) and a last one in
play, the pools' amounts every tenth message; every third installation's session closed. Then, timed in
process through Django's test client (the authority's user signed in), ROUNDS times each:

- the plain baseline: ``GET /.well-known/hall-anchor-key`` (the same stack, nothing read);
- the live page's fragment (``/authority/live/?fragment=1``, what portal.js reloads) and the whole page,
  with their queries, read from the live read model (halls.regulator.services.livemodel);
- the replay the fragment used to be (portal.live_replay: each installation's stored messages replayed).

``--shot PATH``: the node served by uvicorn (on a port of HALL_BENCH_PORTS when set) and the live page
opened in Debian's chromium (Playwright), its load timed and a full-page screenshot written to PATH.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hall_bench_live REDIS_URL=redis://127.0.0.1:6379/5 \\
        .venv/bin/python bench/live_page.py --fresh --lock /tmp/hall-bench.lock --shot /tmp/live.png

The last line sums it up: ``installations=… messages=… fragment_p50_ms=… page_p50_ms=… fragment_queries=…
replay_p50_ms=… replay_queries=… baseline_p50_ms=…``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hall_bench_live")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/5")
os.environ["HALL_ROLE"] = "regulator"
os.environ.setdefault("CHANNEL_PREFIX", "bench-live")
os.environ.setdefault("HALL_CACHE_PREFIX", "bench-live")

import netsim  # noqa: E402  (bench/netsim.py, beside this script)
from feed_node import game_script, iso, pools_payload  # noqa: E402

from halls.feed.kinds import FeedKind  # noqa: E402  (pure: the one list of feed kinds)

CHROMIUM = "/usr/bin/chromium"


def night(licence: str, i: int, games: int, t: float) -> list[tuple[str, dict[str, Any]]]:
    """One installation's messages: a session opened, `games` games and a last one in play, the pools'
    amounts every tenth message; every third installation's session closed."""
    room, session = "Sala electrónica", f"S-{i:03d}"
    checks = [{"check": "rng", "ok": True}, {"check": "system", "ok": i % 17 != 5}]
    facts: list[tuple[str, dict[str, Any]]] = [
        (FeedKind.SESSION_OPENED, {"venue": licence, "room": room, "session": session, "family": "electronic",
                            "opened_at": iso(t), "checks": checks}),
    ]  # fmt: skip
    for g in range(1, games + 2):
        script = game_script(licence, i * 10_000 + g, t)
        facts.extend(script if g <= games else script[: 2 + (i * 7) % 25])  # the last one in play
    out: list[tuple[str, dict[str, Any]]] = []
    for fact in facts:
        if (len(out) + 1) % 10 == 0:
            out.append(("pool.amounts", pools_payload(licence, len(out))))
        out.append(fact)
    if i % 3 == 0:
        out.append((FeedKind.SESSION_CLOSED, {"venue": licence, "room": room, "session": session,
                                       "closed_at": iso(t), "games": games, "sales": f"{120 * games}.00",
                                       "prizes": f"{72 * games}.00"}))  # fmt: skip
    return out


def provision(count: int, games: int) -> tuple[int, str]:
    """The installations registered and their nights accepted by the intake; the authority's cookie."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client

    from halls import anchor_lines
    from halls.feed import envelope
    from halls.regulator.authority import AUTHORITY_GROUP
    from halls.regulator.services import intake, registry

    run = f"{int(time.time()) % 100000}"
    messages = 0
    start = time.time() - 3600  # the night began an hour ago: within the live window
    for i in range(count):
        key = Ed25519PrivateKey.generate()
        uid, licence = f"{int(run):08x}{i:08x}", f"LP{run}-{i:04d}"
        registry.register(
            uid=uid, name=f"Bingo {i:03d}", kind="venue", licence_number=licence, jurisdiction="ML",
            public_key=anchor_lines.raw_public(key.public_key()).hex(), actor="bench",
            latitude=netsim_spot(i)[0], longitude=netsim_spot(i)[1],
        )  # fmt: skip
        signed = []
        for n, (kind, payload) in enumerate(night(licence, i, games, start), start=1):
            at = iso(start + n * 30 + i * 0.01)
            signed.append(envelope.to_json(envelope.sign(envelope.Envelope(uid, n, kind, at, payload), key)))
        for first in range(0, len(signed), 200):
            intake.receive(messages=signed[first : first + 200])
        messages += len(signed)
    user = get_user_model().objects.create_user(username=f"autoridad{run}", password=None)
    user.groups.add(Group.objects.get_or_create(name=AUTHORITY_GROUP)[0])
    client = Client()
    client.force_login(user)
    return messages, client.cookies[settings.SESSION_COOKIE_NAME].value


def netsim_spot(i: int) -> tuple[Any, Any]:
    """A spot in the peninsula for installation i (the map's pins)."""
    from decimal import Decimal

    return Decimal(f"{37 + (i * 37 % 60) / 10:.4f}"), Decimal(f"{-8 + (i * 53 % 110) / 10:.4f}")


def timed(fn: Any, rounds: int) -> tuple[list[float], int]:
    """`fn`'s wall times (ms) over `rounds` calls (after one untimed) and the queries of its last."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times, queries = [], 0
    fn()  # warm: the templates, the connection
    for _ in range(rounds):
        with CaptureQueriesContext(connection) as captured:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1000)
        queries = len(captured)
    return times, queries


def line(label: str, times: list[float], queries: int | None = None) -> None:
    said = f"  {label:<44} p50 {statistics.median(times):8.1f} ms  max {max(times):8.1f} ms"
    print(said + (f"  {queries} queries" if queries is not None else ""), flush=True)


def shot(path: str, cookie: str) -> float:
    """The node served by uvicorn, the live page opened in chromium: its load (ms); a screenshot at path."""
    from django.conf import settings
    from playwright.async_api import async_playwright

    port = netsim.free_port()
    env = dict(os.environ, HALL_ROLE="regulator")
    cmd = [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1",
           "--port", str(port), "--lifespan", "off", "--log-level", "warning"]  # fmt: skip
    server = subprocess.Popen(cmd, cwd=ROOT, env=env)
    try:
        netsim.wait_listening(port)

        async def run() -> float:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(
                    executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"], headless=True
                )
                context = await browser.new_context(viewport={"width": 1600, "height": 1000}, locale="es-ES")
                here = f"http://127.0.0.1:{port}"
                await context.add_cookies(
                    [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": here},
                     {"name": settings.LANGUAGE_COOKIE_NAME, "value": "es", "url": here}]
                )  # fmt: skip
                page = await context.new_page()
                await page.goto(f"http://127.0.0.1:{port}/authority/live/")  # warm
                t0 = time.perf_counter()
                await page.goto(f"http://127.0.0.1:{port}/authority/live/", wait_until="load")
                loaded = (time.perf_counter() - t0) * 1000
                await page.screenshot(path=path, full_page=False)
                await browser.close()
                return loaded

        return asyncio.run(run())
    finally:
        server.terminate()
        server.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--installations", type=int, default=300)
    parser.add_argument("--games", type=int, default=2, help="games each installation played to their end")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--fresh", action="store_true", help="drop and recreate the scratch database")
    parser.add_argument("--lock", help="a file to hold flock'ed while measuring (after the provisioning)")
    parser.add_argument("--shot", help="a PNG: the live page in chromium")
    args = parser.parse_args()
    url = os.environ["DATABASE_URL"]
    netsim.ensure_database(url, fresh=args.fresh)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client
    from django.utils import timezone

    from halls.regulator.services import portal

    call_command("migrate", verbosity=0)
    t0 = time.perf_counter()
    messages, cookie = provision(args.installations, args.games)
    print(
        f"{args.installations} installations, {messages} messages accepted by the intake in "
        f"{time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    if args.lock:
        netsim.hold_lock(args.lock)
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = cookie

    def get(path: str) -> None:
        answer = client.get(path)
        assert answer.status_code == 200, answer.status_code

    la0 = os.getloadavg()[0]
    base, _ = timed(lambda: get("/.well-known/hall-anchor-key"), args.rounds)
    fragment, fragment_queries = timed(lambda: get("/authority/live/?fragment=1"), args.rounds)
    page, page_queries = timed(lambda: get("/authority/live/"), args.rounds)
    read, read_queries = timed(portal.live, args.rounds)
    replay, replay_queries = timed(portal.live_replay, max(3, args.rounds // 3))
    now = timezone.now()
    same = portal.live(now=now) == portal.live_replay(now=now)
    print(f"load average {max(la0, os.getloadavg()[0]):.1f} ({os.cpu_count()} cores)")
    line("plain GET (baseline)", base)
    line("live fragment (read model)", fragment, fragment_queries)
    line("live page, whole (read model)", page, page_queries)
    line("portal.live (read model)", read, read_queries)
    line("portal.live_replay (the replay it replaced)", replay, replay_queries)
    loaded = shot(args.shot, cookie) if args.shot else None
    if loaded is not None:
        print(f"  chromium: the live page loaded in {loaded:.0f} ms; screenshot {args.shot}")
    print(
        f"\ninstallations={args.installations} messages={messages} "
        f"fragment_p50_ms={statistics.median(fragment):.0f} page_p50_ms={statistics.median(page):.0f} "
        f"fragment_queries={fragment_queries} page_queries={page_queries} "
        f"replay_p50_ms={statistics.median(replay):.0f} replay_queries={replay_queries} "
        f"baseline_p50_ms={statistics.median(base):.0f} "
        + (f"chromium_load_ms={loaded:.0f} " if loaded is not None else "")
        + f"same_as_replay={'true' if same else 'false'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
