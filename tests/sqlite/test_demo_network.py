"""`make demo-network` as a real process: `manage.py demo_network` starts a central and two venue
installations (each embedded: its own SQLite file, its worker and beat in its process), links the venues to
the central, and plays the interconnected prize and the simultaneous game by themselves; and a regulator's
node (issue 29) that every installation feeds.

The test waits for the banner, logs in at the central with the printed login and sees both venues online on
its network page, opens a venue's screen, then reads the installations' databases (read-only): the prize's
meter rises from its seed as the venues' games contribute, and the central's simultaneous game is drawn and
its balls reach both venues' games; the node registered all three installations and holds their feed, in
order from 1. Ctrl-C (SIGINT) stops every process it started, with exit status 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from demo.network import PRIZE_SEED
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 240.0  # a first start migrates the template database (about a minute on a loaded machine)
PLAY_TIMEOUT = 60.0

pytestmark = pytest.mark.timeout(420)


def four_free_ports() -> int:
    """A port p with p to p+3 free (the central, the two venues and the regulator's node)."""
    for _ in range(50):
        base = free_port()
        if base > 65531:
            continue
        with contextlib.ExitStack() as stack:
            try:
                for port in (base + 1, base + 2, base + 3):
                    sock = stack.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return base
    raise AssertionError("no four consecutive free ports")


def embedded_env(**extra: str) -> dict[str, str]:
    dropped = (
        "DATABASE_URL",
        "REDIS_URL",
        "HALL_TEST_DB",
        "SQLITE_PATH",
        "TEST_DATABASE_URL",
        "TEST_REDIS_URL",
    )
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(PYTHONUNBUFFERED="1", **extra)
    return env


def rows(folder: Path, installation: str, sql: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(f"file:{folder / installation}.sqlite3?mode=ro", uri=True)) as db:
        db.execute("PRAGMA busy_timeout = 5000")
        return db.execute(sql).fetchall()


def relayed(folder: Path, venue: str, at_least: int) -> bool:
    """The venue's copies of the network games hold `at_least` balls (relayed from the central's draw)."""
    sql = "SELECT count(*) FROM bingo_ball b JOIN bingo_simultaneous_hallgame h ON h.game_id = b.game_id"
    return int(rows(folder, venue, sql)[0][0]) >= at_least


def wait_for(condition: Callable[[], Any], timeout: float, what: str, logs: Callable[[], str]) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(sqlite3.OperationalError):  # a table a moment locked: asked again
            value = condition()
            if value:
                return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{logs()}"
        time.sleep(0.5)


def test_demo_network_links_two_venues_and_plays_network_games(tmp_path: Path) -> None:
    port = four_free_ports()
    folder = tmp_path / "net"
    out_path = tmp_path / "demo-network.out"
    started = time.monotonic()
    with out_path.open("wb") as out:
        demo = subprocess.Popen(
            [
                *(sys.executable, "manage.py", "demo_network"),
                *("--port", str(port), "--host", "127.0.0.1", "--dir", str(folder)),
            ],
            cwd=ROOT,
            env=embedded_env(HALL_DEMO_NETWORK_SALES_SECONDS="6"),
            stdout=out,
            stderr=subprocess.STDOUT,
        )

    def logs() -> str:
        text = "--- demo_network ---\n" + out_path.read_text(errors="replace")[-4000:]
        for log in sorted(folder.glob("*.log")):
            text += f"\n--- {log.name} ---\n" + log.read_text(errors="replace")[-3000:]
        return text

    children: list[psutil.Process] = []
    try:

        def ready() -> bool:
            assert demo.poll() is None, f"demo_network exited with {demo.returncode}\n{logs()}"
            return "Network demo ready." in out_path.read_text(errors="replace")

        wait_for(ready, READY_TIMEOUT, "the banner", logs)
        ready_in = time.monotonic() - started
        banner = out_path.read_text(errors="replace")
        children = psutil.Process(demo.pid).children(recursive=True)
        assert len(children) == 4, [c.cmdline() for c in children]

        # --- the banner's pages and logins ----------------------------------------------------------------
        central = f"http://localhost:{port}"
        for path in ("/network/", "/central/pools/", "/central/games/", "/central/reports/"):
            assert f"{central}{path}" in banner, banner
        password = re.search(r"login\s+operator / (\S+)", banner)
        assert password, banner
        screens = re.findall(r"screen Pantalla 1 · Sala Principal\s+(http://\S+)", banner)
        assert len(screens) == 2 and all(f":{port + n}/" in s for n, s in ((1, screens[0]), (2, screens[1])))
        assert (
            f"http://localhost:{port + 1}/console/" in banner
            and f"http://localhost:{port + 2}/console/" in banner
        )

        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            client.get("/accounts/login/")
            csrf = client.cookies["csrftoken-central"]
            answer = client.post(
                "/accounts/login/",
                data={"username": "operator", "password": password.group(1), "csrfmiddlewaretoken": csrf},
                headers={"Referer": f"http://127.0.0.1:{port}/accounts/login/"},
            )
            assert answer.status_code == 302, answer.text[:2000]

            def both_online() -> bool:
                page = client.get("/network/")
                assert page.status_code == 200
                return page.text.count('data-state="online"') == 2

            wait_for(both_online, 30, "both venues online on the central's network page", logs)
            page = client.get("/network/").text
            assert "Bingo Demo Norte" in page and "Bingo Demo Sur" in page
            for path in ("/central/pools/", "/central/games/", "/central/reports/"):
                assert client.get(path).status_code == 200, path
        screen = httpx.get(screens[0].replace("localhost", "127.0.0.1"), timeout=10)
        assert screen.status_code == 200

        # --- the interconnected prize: its meter rises from the seed as the venues' games contribute ------
        def meter() -> Decimal:
            amounts = rows(
                folder,
                "central",
                "SELECT payload FROM link_streamentry WHERE kind = 'ib.meter' ORDER BY sequence",
            )
            return max((Decimal(json.loads(p)["amount"]) for (p,) in amounts), default=Decimal(0))

        wait_for(lambda: meter() > PRIZE_SEED, PLAY_TIMEOUT, "the network meter to move", logs)
        contributed = rows(folder, "central", "SELECT DISTINCT venue_id FROM bingo_network_roundcontribution")
        assert contributed

        # --- the simultaneous game: sold in both halls, drawn at the central, its balls in both halls ----
        def drawn() -> int:
            games = rows(
                folder, "central", "SELECT state, cards_sold, balls_drawn FROM bingo_simultaneous_networkgame"
            )
            return max((balls for _state, _cards, balls in games), default=0)

        wait_for(lambda: drawn() >= 3, PLAY_TIMEOUT, "the central's draw", logs)
        (halls_sold,) = rows(
            folder, "central", "SELECT count(DISTINCT venue_id) FROM bingo_simultaneous_reportedsale"
        )
        assert halls_sold == (2,)
        for venue in ("norte", "sur"):
            wait_for(partial(relayed, folder, venue, 3), 30, f"the central's balls in {venue}", logs)

        # --- the regulator's node: every installation registered and feeding it, in order from 1 --------
        node = f"http://localhost:{port + 3}"
        assert f"{node}/authority/" in banner and f"{node}/admin/regulator/feedmessage/" in banner, banner
        authority = re.search(r"login\s+autoridad / (\S+)", banner)
        assert authority, banner

        def fed() -> bool:
            found = rows(folder, "regulator", "SELECT uid, accepted_sequence FROM regulator_installation")
            return len(found) == 3 and all(accepted >= 1 for _uid, accepted in found)

        wait_for(fed, PLAY_TIMEOUT, "the three installations' feed at the node", logs)
        for (installation_id,) in rows(folder, "regulator", "SELECT id FROM regulator_installation"):
            held = rows(
                folder,
                "regulator",
                f"SELECT sequence FROM regulator_feedmessage WHERE installation_id = {int(installation_id)}"  # noqa: S608
                " ORDER BY id",
            )
            assert [s for (s,) in held] == list(range(1, len(held) + 1))
        assert rows(folder, "regulator", "SELECT count(*) FROM regulator_feedrefusal") == [(0,)]
        with httpx.Client(base_url=f"http://127.0.0.1:{port + 3}", timeout=10) as client:
            client.get("/accounts/login/")
            answer = client.post(
                "/accounts/login/",
                data={
                    "username": "autoridad",
                    "password": authority.group(1),
                    "csrfmiddlewaretoken": client.cookies["csrftoken-regulator"],
                },
                headers={"Referer": f"http://127.0.0.1:{port + 3}/accounts/login/"},
            )
            assert answer.status_code == 302, answer.text[:2000]
            portal = client.get("/authority/")
            assert portal.status_code == 200
            assert "Bingo Demo Norte" in portal.text and "Bingo Demo Sur" in portal.text
        print(f"\nnetwork demo ready in {ready_in:.1f} s; meter {meter()}; {drawn()} network balls")
        assert "Traceback" not in logs(), logs()
    finally:
        if demo.poll() is None:
            demo.send_signal(signal.SIGINT)  # Ctrl-C
            try:
                demo.wait(60)
            except subprocess.TimeoutExpired:
                demo.kill()
                demo.wait(10)
        for child in children:
            with contextlib.suppress(psutil.NoSuchProcess):
                if child.is_running() and child.status() != psutil.STATUS_ZOMBIE:
                    child.kill()
    assert demo.returncode == 0, logs()
    assert "Stopped." in out_path.read_text(errors="replace")
    _gone, alive = psutil.wait_procs(children, timeout=5)
    assert not alive, [p.pid for p in alive]
    for name in ("central", "norte", "sur", "regulator"):
        assert f"{name}: stopped" in (folder / f"{name}.log").read_text(errors="replace"), logs()
