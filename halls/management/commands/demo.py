"""``manage.py demo``: migrate, seed the demo hall, start the Celery worker and beat, and serve on $PORT.

Embedded (no REDIS_URL): SQLite, the in-memory channel layer, and a worker and a beat inside this process
on the in-memory broker. With REDIS_URL (and DATABASE_URL) set: ``celery worker`` and ``celery beat`` run as
subprocesses with the same environment and stop with the server. Either way the web server is uvicorn in
the main thread, and "Sala Principal" plays by itself (bingo.services.autoplay) so screens show balls at once.
The apps' runners (``halls.demo_seed.register_runner``: machines' simulated slot machines) run beside it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from argparse import ArgumentParser
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from halls.demo_seed import DemoHall, seed_demo, start_runners

STOP_TIMEOUT = 10.0


class Command(BaseCommand):
    help = (
        "Run the demo hall: migrate, seed, start the Celery worker and beat, serve on $PORT (default 8000)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--host", default="0.0.0.0")  # noqa: S104  (a demo reached from other devices)
        parser.add_argument("--seed-only", action="store_true", help="migrate and seed, print, and exit")

    def handle(self, *args: Any, **options: Any) -> None:
        port: int = options["port"]
        call_command("migrate", interactive=False, verbosity=0)
        hall = seed_demo()
        self._print_banner(hall, port)
        if options["seed_only"]:
            return
        # Static files come from the app folders (WhiteNoise finders); an absent STATIC_ROOT only warns.
        Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
        # The demo's casino tables play by themselves (jackpots.tables.tasks): on for the in-process
        # worker through settings, for the worker subprocesses through the environment they inherit.
        os.environ["HALL_DEMO_TABLE_AUTOPLAY"] = "1"
        settings.HALL_DEMO_TABLE_AUTOPLAY = True
        stop = self._start_background()
        # The apps' runners (simulated slot machines) start once the server below listens.
        stop_runners = start_runners(hall, f"http://127.0.0.1:{port}")
        try:
            import uvicorn

            from config.asgi import application

            uvicorn.run(application, host=options["host"], port=port, lifespan="off", access_log=False)
        finally:
            stop_runners()
            self.stdout.write("Stopping the Celery worker and beat…")
            stop()

    def _start_background(self) -> Callable[[], None]:
        if settings.HALL_EMBEDDED:
            from halls.embedded import start_embedded_celery

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
            flag = "  [plays by itself]" if screen.room.autoplay else ""
            out(f"  {screen.name:<30} {base}/screens/{screen.token}/{flag}")
        out("")
        out("Staff pages:")
        out(f"  caller console   {base}/console/")
        out(f"  cashier          {base}/cashier/")
        out(f"  casino tables    {base}/tables/")
        out(f"  API docs         {base}/api/docs/   (works offline)")
        out(f"  health           {base}/health/   (metrics: {base}/metrics)")
        out(f"  admin            {base}/admin/   (operator)")
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


def _start_subprocesses(write: Callable[[str], None]) -> Callable[[], None]:
    """A worker on both queues and exactly one beat, with this process's environment; returns their stop."""
    python = sys.executable
    schedule = settings.VAR_DIR / "celerybeat-schedule"
    settings.VAR_DIR.mkdir(exist_ok=True)
    celery = [python, "-m", "celery", "-A", "config", "--quiet"]
    commands = {
        "worker": [*celery, "worker", "-Q", "celery,draws", "--concurrency", "2", "-l", "warning"],
        "beat": [*celery, "beat", "-l", "warning", "-s", str(schedule)],
    }
    procs = {
        name: subprocess.Popen(cmd, cwd=settings.BASE_DIR, env=os.environ.copy())  # noqa: S603
        for name, cmd in commands.items()
    }
    write("Celery " + " and ".join(f"{name} (pid {p.pid})" for name, p in procs.items()) + " started.")

    def stop() -> None:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    return stop
