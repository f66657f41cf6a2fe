"""``manage.py demo``: migrate, seed the demo hall, start the Celery worker and beat, and serve on $PORT.

Embedded (no REDIS_URL): SQLite, the in-memory channel layer, and a worker and a beat inside this process
on the in-memory broker. With REDIS_URL (and DATABASE_URL) set: ``celery worker`` and ``celery beat`` run as
subprocesses with the same environment and stop with the server. Either way the web server is uvicorn in
the main thread, and "Sala Principal" plays by itself (demo.autoplay) so screens show balls at once. The
runners (demo.seed.RUNNERS: the simulated slot machines, the progressive broadcaster) run beside it.

A PostgreSQL database named by DATABASE_URL that does not exist yet is created first.

Stopping: SIGINT (Ctrl+C) or SIGTERM (what ``make`` passes on when it is terminated) stops the server, then
the runners, the worker and the beat. uvicorn re-raises the signal once it has shut down; SIGTERM's default
action would end the process there, before the worker and beat were stopped, so it raises SystemExit instead.
The worker and beat run in a session of their own (a Ctrl+C reaches this process only, which stops them in
order) and are sent SIGTERM by the kernel if this process dies without stopping them (even by SIGKILL). One
that exits on its own is started again after two seconds (production's units have Restart=always).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from argparse import ArgumentParser
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import OperationalError, connection

from demo import voice
from demo.seed import DemoHall, seed_demo, start_runners
from demo.template import copy_template

# The staff pages the banner lists: (label, path, who uses it). The inspector's login reads every page and
# report of the venue and writes nothing.
STAFF_PAGES = (
    ("caller console", "/console/", "caller; Sala 2 is played by hand"),
    ("cashier", "/cashier/", "cashier"),
    ("paper cards", "/paper/", "operator: series, printing, stock"),
    ("setup", "/setup/", "operator: rooms, devices, screens, voice"),
    ("casino tables", "/tables/", "caller or operator"),
    ("machine floor", "/machines/floor/", "operator, caller or cashier"),
    ("inspector", "/inspector/", "inspector: minutes, records, statistics, audit"),
    ("admission", "/admission/", "door (or operator): admit, exits, self-exclusions, who is inside"),
    ("admin", "/admin/", "operator"),
)
STOP_TIMEOUT = 10.0
RESTART_DELAY = 2.0


class Command(BaseCommand):
    help = (
        "Run the demo hall: migrate, seed, start the Celery worker and beat, serve on $PORT (default 8000)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--host", default="0.0.0.0")  # noqa: S104  (a demo reached from other devices)
        parser.add_argument("--seed-only", action="store_true", help="migrate and seed, print, and exit")
        parser.add_argument(
            "--sas-machines",
            type=int,
            default=None,
            help=(
                "run the first N linked machines as simulated SAS machines, each behind a SAS host bridge "
                "process on a pty (default: $HALL_DEMO_SAS_MACHINES, else 0)"
            ),
        )

    def handle(self, *args: Any, **options: Any) -> None:
        port: int = options["port"]
        if options["sas_machines"] is not None:
            # demo.machines and demo.sasfloor read it (the seed's notes, the runners).
            os.environ["HALL_DEMO_SAS_MACHINES"] = str(options["sas_machines"])
        if create_database_if_missing():
            self.stdout.write(f"Created the database {connection.settings_dict['NAME']}.")
        start_from_template(self.stdout.write)
        call_command("migrate", interactive=False, verbosity=0)
        hall = seed_demo()
        self._print_banner(hall, port)
        if options["seed_only"]:
            return
        # Static files come from the app folders (WhiteNoise finders); an absent STATIC_ROOT only warns.
        Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
        # The demo's casino tables play by themselves (demo.tasks): on for the in-process
        # worker through settings, for the worker subprocesses through the environment they inherit.
        os.environ["HALL_DEMO_TABLE_AUTOPLAY"] = "1"
        settings.HALL_DEMO_TABLE_AUTOPLAY = True
        # SIGTERM unwinds like Ctrl+C, through the finally below (see the module's docstring).
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        stop = self._start_background()
        # The runners (simulated slot machines) start once the server below listens.
        stop_runners = start_runners(hall, f"http://127.0.0.1:{port}")
        # The caller's voice is made beside the server (demo.voice): the demo serves at once.
        stop_voice = (
            voice.start_voice_build(self.stdout.write, die_with_parent=_die_with_parent())
            if voice.enabled()
            else (lambda: None)
        )
        try:
            import uvicorn

            from config.asgi import application
            from config.web_worker import UVICORN_OPTIONS

            uvicorn.run(
                application,
                host=options["host"],
                port=port,
                lifespan="off",
                access_log=False,
                **UVICORN_OPTIONS,
            )
        except KeyboardInterrupt:
            pass  # Ctrl+C: uvicorn has shut down and re-raised it; stop the rest below
        finally:
            stop_voice()
            stop_runners()
            self.stdout.write("Stopping the Celery worker and beat…")
            stop()

    def _start_background(self) -> Callable[[], None]:
        if settings.HALL_EMBEDDED:
            from demo.embedded import start_embedded_celery

            handle = start_embedded_celery()
            self.stdout.write("Celery worker and beat running inside this process (in-memory broker).")
            return handle.stop
        return _start_subprocesses(self.stdout.write)

    def _print_banner(self, hall: DemoHall, port: int) -> None:
        base = f"http://localhost:{port}"
        out = self.stdout.write
        if settings.HALL_EMBEDDED:
            path = settings.DATABASES["default"]["NAME"]
            mode = f"embedded: SQLite {path}, in-memory broker and channel layer"
        else:
            engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
            mode = (
                f"services: {engine} database {settings.DATABASES['default']['NAME']}, Redis broker and layer"
            )
        out("")
        out(self.style.SUCCESS(f"{hall.venue.name} — demo hall ({mode})"))
        out("")
        out("Hall screens (public, by token):")
        for screen in hall.screens:
            flag = "  [plays by itself]" if screen.room_id in hall.self_playing else ""
            out(f"  {screen.name:<30} {base}/screens/{screen.token}/{flag}")
        if hall.terminal_pages:
            out("")
            out("Electronic bingo, a player terminal page each (insert the player card shown):")
            for label, path, card in hall.terminal_pages:
                out(f"  {label:<30} {base}{path}   card {card}")
        out("")
        out("Staff pages (log in at /accounts/login/):")
        for label, path, who in STAFF_PAGES:
            out(f"  {label:<16} {base}{path:<20} ({who})")
        out(f"  {'API docs':<16} {base}{'/api/docs/':<20} (works offline)")
        out(f"  {'health':<16} {base}{'/health/':<20} (metrics: {base}/metrics)")
        out("")
        out("Staff (passwords are new at every start):")
        for username, password in hall.credentials.items():
            out(f"  {username:<10} {password}")
        if hall.notes:
            out("")
            out("Also seeded:")
            for note in hall.notes:
                out(f"  {note}")
        if settings.SECRET_KEY.startswith("insecure-"):
            out(self.style.WARNING("SECRET_KEY is the insecure demo default: set it before any real use."))
        out("")


def create_database_if_missing() -> bool:
    """Create the PostgreSQL database of the settings if it does not exist; True if it was created."""
    if connection.vendor != "postgresql":
        return False  # SQLite creates its file
    try:
        connection.ensure_connection()
        return False
    except OperationalError as exc:
        if "does not exist" not in str(exc):
            raise
    name = connection.settings_dict["NAME"]
    # The maintenance database ("postgres") of the same server, as Django's test runner does.
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {connection.ops.quote_name(name)}")
    return True


def start_from_template(say: Callable[[str], None]) -> bool:
    """A new SQLite database starts as the migrated template's copy (demo.template): the migrate that follows
    has nothing left to do. True if it was copied."""
    if connection.vendor != "sqlite":
        return False
    path = Path(connection.settings_dict["NAME"])
    if path.exists() and path.stat().st_size > 0:
        return False
    connection.close()
    for leftover in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"), path):
        leftover.unlink(missing_ok=True)
    copy_template(path, say)
    return True


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> Callable[[], None] | None:
    """A hook for the child, run before exec: the kernel sends it SIGTERM when the demo process ends, however
    it ends (Linux's PR_SET_PDEATHSIG); None elsewhere. prctl is looked up here, the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _start_subprocesses(write: Callable[[str], None]) -> Callable[[], None]:
    """A worker on both queues and exactly one beat, with this process's environment, restarted if one
    exits on its own; returns their stop."""
    python = sys.executable
    schedule = settings.VAR_DIR / "celerybeat-schedule"
    settings.VAR_DIR.mkdir(exist_ok=True)
    celery = [python, "-m", "celery", "-A", "config", "--quiet"]
    commands = {
        "worker": [*celery, "worker", "-Q", "celery,draws", "--concurrency", "2", "-l", "warning"],
        "beat": [*celery, "beat", "-l", "warning", "-s", str(schedule)],
    }
    supervisor = _Supervisor(commands, write)
    started = " and ".join(f"{name} (pid {p.pid})" for name, p in supervisor.procs.items())
    write(f"Celery {started} started.")
    return supervisor.stop


class _Supervisor:
    """Runs the commands and, from a thread of its own, starts again one that exits on its own (after
    RESTART_DELAY s), as systemd's Restart=always does in production. The children get SIGTERM from the
    kernel when the thread that started them ends (PR_SET_PDEATHSIG): the main thread or this one, both
    alive until stop()."""

    def __init__(self, commands: dict[str, list[str]], write: Callable[[str], None]) -> None:
        self.commands = commands
        self.write = write
        self.hook = _die_with_parent()
        self.stopping = threading.Event()
        self.procs = {name: self._spawn(name) for name in commands}
        self.thread = threading.Thread(target=self._watch, name="demo-supervisor", daemon=True)
        self.thread.start()

    def _spawn(self, name: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(  # noqa: S603
            self.commands[name],
            cwd=settings.BASE_DIR,
            env=os.environ.copy(),
            start_new_session=True,  # a terminal's Ctrl+C reaches the demo, which stops them in order
            preexec_fn=self.hook,  # only a system call between fork and exec
        )

    def _watch(self) -> None:
        while not self.stopping.wait(1.0):
            for name, proc in list(self.procs.items()):
                if proc.poll() is None:
                    continue
                self.write(f"Celery {name} exited with {proc.returncode}: starting it again.")
                if self.stopping.wait(RESTART_DELAY):
                    return
                self.procs[name] = self._spawn(name)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(STOP_TIMEOUT)
        # A second Ctrl+C while they stop must not leave them running: ignore it until they are gone.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            _stop(self.procs)
        finally:
            signal.signal(signal.SIGINT, previous)


def _stop(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            proc.terminate()  # the worker's warm shutdown: it finishes its task, puts back what it holds
    for proc in procs.values():
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
