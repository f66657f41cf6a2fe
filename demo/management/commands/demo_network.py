"""``manage.py demo_network`` (``make demo-network``): a central and two venue installations on this machine,
linked, with an interconnected prize and a simultaneous game playing by themselves (demo.network), and the
gaming authority's regulator node (HALL_ROLE=regulator) on the port after the venues', which every
installation feeds (issue 29: the feed switched on, each installation registered at the node).

Each installation is embedded as `make demo` is (demo_network_node: its own SQLite file in ``--dir``, the
in-memory broker with its worker and beat in its process): the central on $PORT (8000), the venues on the
next two ports. The databases are new at every start: one migrated template (kept in var/ while the
migrations do not change) copied for each. The venues' link credentials are issued by the central at its
seed; each venue runs its link to the central in its own process. When every installation answers, this
prints the pages and the logins, then waits.

Ctrl-C (SIGINT) or SIGTERM: each installation is sent SIGINT (its server stops, then its link, worker and
beat) and given STOP_TIMEOUT seconds, then killed. The installations run in sessions of their own (a
terminal's Ctrl-C reaches this process, which stops them in order) and get SIGTERM from the kernel if this
process dies without stopping them. One that exits by itself stops the demo (its log's end is printed).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from argparse import ArgumentParser
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from demo import network as demo_network
from demo.management.commands.demo import _die_with_parent, _exit_on_sigterm
from demo.management.commands.demo_network_node import CENTRAL, REGULATOR
from demo.template import EMBEDDED_ENV_DROPPED, migrated_template
from halls.services import audit_keys

READY_TIMEOUT = 240.0
STOP_TIMEOUT = 20.0
# The link's timings for the demo: a venue is seen online within seconds of the central starting.
LINK_ENV = {
    "HALL_LINK_HEARTBEAT_SECONDS": "2",
    "HALL_LINK_BACKOFF_MAX_SECONDS": "2",
    "HALL_LINK_CATCHUP_SECONDS": "10",
    "HALL_LINK_OFFLINE_SECONDS": "10",
}
# The feed to the regulator's node: on, a heartbeat every few seconds (the node's map shows them live).
FEED_ENV = {"HALL_FEED_ENABLED": "true", "HALL_FEED_HEARTBEAT_SECONDS": "5"}
# What the installations must not inherit: they are embedded (SQLite, in-memory broker and layer).
DROPPED_ENV = EMBEDDED_ENV_DROPPED


@dataclass
class Node:
    name: str
    port: int
    env: dict[str, str]
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


class Command(BaseCommand):
    help = (
        "Run a central and two venues on this machine, linked, playing network games by themselves, and the "
        "regulator's node they feed."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--port", type=int, default=int(os.environ.get("PORT", "8000")), help="the central's port"
        )
        parser.add_argument("--host", default="0.0.0.0")  # noqa: S104  (a demo reached from other devices)
        parser.add_argument("--dir", default=str(settings.VAR_DIR / "demo-network"))

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        folder = Path(options["dir"]).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        for old in [*folder.glob("*.sqlite3*"), *folder.glob("*.json"), *folder.glob("*.log")]:
            old.unlink()
        audit_keys.keyring()  # the one audit key file every installation signs with, made before they start
        template = migrated_template(self.stdout.write)
        nodes = self._nodes(folder, options["port"])
        for node in nodes:
            shutil.copyfile(template, node.env["SQLITE_PATH"])
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        # Ctrl+C stops it even when it was started with SIGINT ignored (a shell's background job).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        hook = _die_with_parent()
        try:
            for node in nodes:
                with node.log_path.open("wb") as log:
                    node.proc = subprocess.Popen(  # noqa: S603
                        [
                            sys.executable,
                            "manage.py",
                            "demo_network_node",
                            *("--installation", node.name, "--port", str(node.port)),
                            *("--host", options["host"], "--dir", str(folder)),
                        ],
                        cwd=settings.BASE_DIR,
                        env=node.env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,  # a terminal's Ctrl+C reaches this process, which stops them
                        preexec_fn=hook,  # only a system call between fork and exec
                    )
            self._wait_ready(nodes, folder)
            self._print_banner(nodes, folder, time.monotonic() - started)
            while True:
                for node in nodes:
                    assert node.proc is not None
                    if node.proc.poll() is not None:
                        raise CommandError(
                            f"{node.name} exited with {node.proc.returncode}; its log ends:\n{node.tail()}"
                        )
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self.stdout.write("Stopping the central and the venues…")
            self.stdout.flush()
            _stop(nodes)
            self.stdout.write("Stopped.")
            self.stdout.flush()

    def _nodes(self, folder: Path, port: int) -> list[Node]:
        base = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
        base.update(LINK_ENV, PYTHONUNBUFFERED="1", HALL_DEMO_NETWORK="1")
        base.update(FEED_ENV)
        central_url = f"http://127.0.0.1:{port}"
        venues = [(spec.key, spec.licence) for spec in demo_network.VENUES]
        names: list[tuple[str, str | None]] = [(CENTRAL, None), *venues, (REGULATOR, None)]
        regulator_url = f"http://127.0.0.1:{port + len(names) - 1}"
        nodes = []
        for offset, (name, licence) in enumerate(names):
            env = {
                **base,
                "SQLITE_PATH": str(folder / f"{name}.sqlite3"),
                "HALL_DETECTOR_DIR": str(folder / f"{name}-detector"),
                "HALL_AUDIT_ANCHOR_DIR": str(folder / f"{name}-anchors"),
                # Each installation its own key (the node registers each one's public half).
                "HALL_ANCHOR_SIGNING_KEY_FILE": str(folder / f"{name}-anchor.pem"),
                "HALL_ROLE": {CENTRAL: "central", REGULATOR: "regulator"}.get(name, "venue"),
            }
            if name != REGULATOR:
                env["HALL_REGULATOR_URL"] = regulator_url
            if licence is not None:
                env.update(HALL_CENTRAL_URL=central_url, HALL_LINK_VENUE=licence)
            nodes.append(Node(name, port + offset, env, folder / f"{name}.log"))
        return nodes

    def _wait_ready(self, nodes: list[Node], folder: Path) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        waiting = list(nodes)
        while waiting:
            for node in list(waiting):
                assert node.proc is not None
                if node.proc.poll() is not None:
                    raise CommandError(
                        f"{node.name} exited with {node.proc.returncode} while starting; its log ends:\n"
                        f"{node.tail()}"
                    )
                if (folder / f"{node.name}.json").exists() and _answers(node.url):
                    waiting.remove(node)
            if time.monotonic() > deadline:
                names = ", ".join(n.name for n in waiting)
                raise CommandError(f"{names} did not start within {READY_TIMEOUT:.0f} s (logs in {folder})")
            time.sleep(0.3)

    def _print_banner(self, nodes: list[Node], folder: Path, elapsed: float) -> None:
        out = self.stdout.write
        info = {node.name: json.loads((folder / f"{node.name}.json").read_text()) for node in nodes}
        central, venues, regulator = nodes[0], nodes[1:-1], nodes[-1]
        base = f"http://localhost:{central.port}"
        out("")
        out(
            self.style.SUCCESS(
                f"Network demo: a central and {len(venues)} venues, started in {elapsed:.0f} s"
            )
        )
        out(f"  each embedded: its own SQLite file in {folder}, its worker and beat in its process")
        out("")
        out(f"Central (HALL_ROLE=central)   {base}/")
        out(f"  network map      {base}/network/")
        out(f"  network pools    {base}/central/pools/")
        out(f"  network games    {base}/central/games/")
        out(f"  reports          {base}/central/reports/")
        out("  login            " + _logins(info[CENTRAL]["logins"]))
        for node in venues:
            data = info[node.name]
            venue_base = f"http://localhost:{node.port}"
            out("")
            out(f"{data['name']} ({data['licence']}), a venue linked to the central   {venue_base}/")
            for screen in data["screens"]:
                out(f"  screen {screen['name']:<30} {venue_base}{screen['path']}")
            out(f"  caller console   {venue_base}/console/")
            out(f"  cashier          {venue_base}/cashier/")
            out("  logins           " + _logins(data["logins"]))
        out("")
        node_base = f"http://localhost:{regulator.port}"
        out(f"Regulator's node (HALL_ROLE=regulator), fed by every installation   {node_base}/")
        out(f"  authority portal {node_base}/authority/")
        out(f"  live games       {node_base}/authority/live/")
        out(f"  alarms           {node_base}/authority/alarms/")
        out(f"  feed received    {node_base}/admin/regulator/feedmessage/")
        out("  login            " + _logins(info[REGULATOR]["logins"]))
        out("")
        out(
            f"Plays by itself: the interconnected prize {demo_network.PRIZE_NAME} (each venue's Sala "
            f"Principal contributes {demo_network.PRIZE_PERCENT} % of its sales; its rounds open by "
            "themselves) and one simultaneous game after the other (central draw, sold and claimed in each "
            "venue's Sala Red)."
        )
        out(
            f"Log in at /accounts/login/ of each installation. Logs: {folder}/*.log. Ctrl-C stops everything."
        )
        if settings.SECRET_KEY.startswith("insecure-"):
            out(self.style.WARNING("SECRET_KEY is the insecure demo default: set it before any real use."))
        out("Network demo ready.")
        out("")
        self.stdout.flush()


def _logins(logins: dict[str, str]) -> str:
    return ", ".join(f"{user} / {password}" for user, password in logins.items())


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/accounts/login/", timeout=2) as response:  # noqa: S310
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def _stop(nodes: list[Node]) -> None:
    # A second Ctrl+C while they stop must not leave them running: ignore it until they are gone.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        running = [n.proc for n in nodes if n.proc is not None and n.proc.poll() is None]
        for proc in running:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + STOP_TIMEOUT
        for proc in running:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
