"""``manage.py demo_network_node``: one installation of the network demo (started by `manage.py demo_network`,
which gives it its environment: SQLITE_PATH, HALL_ROLE, HALL_CENTRAL_URL, HALL_LINK_VENUE, …).

Embedded as `manage.py demo` is: its own SQLite file, the in-memory broker with a worker and a beat inside
this process, uvicorn in the main thread. It seeds its part (demo.network), writes what the banner prints
to ``<dir>/<installation>.json``; the central also writes its venues' link credentials to
``<dir>/links.json``, which a venue waits for before it starts its link (demo.linkthread) in a thread.
SIGINT or SIGTERM: the server stops, then the link, the worker and the beat.

The regulator's node (HALL_ROLE=regulator) is one of them: each other installation writes its feed identity
(its id and public key) to ``<dir>/<installation>-feed.json`` and sends its feed to the node in a thread
(demo.linkthread.start_feed); the node registers each one as its file appears (as its authority would with
`manage.py regulator_register`), and its beat's silence sweep runs in its process.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import threading
from argparse import ArgumentParser
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import close_old_connections, connection

from demo import linkthread
from demo import network as demo_network
from halls.link.services import venue_side
from halls.regulator.services import registry
from halls.services import anchor_key

CENTRAL = "central"
REGULATOR = "regulator"
LINKS_FILE = "links.json"
FEED_FILE = "{name}-feed.json"
AUTHORITY_STAFF = "autoridad"
WAIT_POLL = 0.2
GRACEFUL_SECONDS = 5


def write_json(path: Path, data: Any) -> None:
    """Written whole or not at all (the orchestrator reads it as soon as it exists), readable by the owner
    only (it holds passwords and link secrets)."""
    partial = path.with_suffix(".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(data, out)
    os.replace(partial, path)


class Command(BaseCommand):
    help = "One installation of the network demo (started by `manage.py demo_network`)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        names = [CENTRAL, *(spec.key for spec in demo_network.VENUES), REGULATOR]
        parser.add_argument("--installation", choices=names, required=True)
        parser.add_argument("--port", type=int, required=True)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--dir", required=True, help="the demo's folder (its JSON files)")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.HALL_EMBEDDED or connection.vendor != "sqlite":
            raise CommandError("The network demo's installations run embedded (no DATABASE_URL / REDIS_URL).")
        name: str = options["installation"]
        folder = Path(options["dir"])
        role = {CENTRAL: "central", REGULATOR: "regulator"}.get(name, "venue")
        if role != settings.HALL_ROLE:
            raise CommandError(f"{name} needs HALL_ROLE={role}.")
        # Three servers on one host share its cookies (a cookie has no port): one name each, so logging in
        # at a venue does not log out of the central.
        settings.SESSION_COOKIE_NAME = f"sessionid-{name}"
        settings.CSRF_COOKIE_NAME = f"csrftoken-{name}"
        if name == REGULATOR:
            password = _authority_staff()
            write_json(folder / f"{name}.json", {"logins": {AUTHORITY_STAFF: password}})
            venue_id = None
        elif name == CENTRAL:
            seeded = demo_network.seed_central()
            write_json(folder / LINKS_FILE, seeded.links)
            write_json(folder / f"{name}.json", {"logins": seeded.credentials})
            venue_id = None
        else:
            spec = next(s for s in demo_network.VENUES if s.key == name)
            venue_seed = demo_network.seed_venue(spec)
            hall = venue_seed.hall
            screens = [
                {"name": s.name, "path": f"/screens/{s.token}/"}
                for s in [*hall.screens, venue_seed.network_screen]
            ]
            write_json(
                folder / f"{name}.json",
                {"name": spec.name, "licence": spec.licence, "screens": screens, "logins": hall.credentials},
            )
            venue_id = venue_side.local_venue_id(spec.licence)
        if name != REGULATOR:
            write_json(folder / FEED_FILE.format(name=name), anchor_key.document())
        close_old_connections()
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
        from demo.embedded import start_embedded_celery

        celery = start_embedded_celery()
        stopping = threading.Event()
        stop_link: list[Callable[[], None]] = []
        if name == REGULATOR:
            threading.Thread(
                target=_register_installations, args=(folder, stopping), name="demo-registry", daemon=True
            ).start()
        elif settings.HALL_REGULATOR_URL:
            stop_link.append(linkthread.start_feed(linkthread.feed_config()))
        if venue_id is not None:
            threading.Thread(
                target=_link_when_credentials,
                args=(folder / LINKS_FILE, settings.HALL_LINK_VENUE, venue_id, stopping, stop_link),
                name="demo-link-start",
                daemon=True,
            ).start()
        self.stdout.write(f"{name}: serving on {options['host']}:{options['port']}")
        self.stdout.flush()
        try:
            import uvicorn

            from config.asgi import application
            from config.web_worker import UVICORN_OPTIONS

            uvicorn.run(
                application,
                **UVICORN_OPTIONS,
                host=options["host"],
                port=options["port"],
                lifespan="off",
                access_log=False,
                log_level="warning",
                # Open sockets (screens, the venues' links) get this long to close before it stops anyway.
                timeout_graceful_shutdown=GRACEFUL_SECONDS,
            )
        except KeyboardInterrupt:
            pass  # uvicorn has shut down and re-raised it: stop the rest below
        finally:
            stopping.set()
            for stop in stop_link:
                stop()
            celery.stop()
            self.stdout.write(f"{name}: stopped")


def _authority_staff() -> str:
    """The authority's staff login at its node (the admin's read-only feed until the portal): its password."""
    password = secrets.token_urlsafe(9)
    user, _ = get_user_model().objects.get_or_create(username=AUTHORITY_STAFF)
    user.set_password(password)
    user.is_active = user.is_staff = user.is_superuser = True
    user.save()
    return password


def _register_installations(folder: Path, stopping: threading.Event) -> None:
    """The node registers each installation of the demo as its feed identity appears."""
    names = [CENTRAL, *(spec.key for spec in demo_network.VENUES)]
    licences = {spec.key: spec.licence for spec in demo_network.VENUES}
    waiting = set(names)
    try:
        while waiting and not stopping.wait(WAIT_POLL):
            for name in sorted(waiting):
                path = folder / FEED_FILE.format(name=name)
                if not path.exists():
                    continue
                document = json.loads(path.read_text())
                registry.register(
                    uid=document["installation"],
                    name=f"{demo_network.NETWORK_NAME} (central)" if name == CENTRAL else _venue_name(name),
                    kind="central" if name == CENTRAL else "venue",
                    licence_number=licences.get(name, ""),
                    jurisdiction="ML",
                    public_key=document["key"],
                    # Melilla, each a little apart on the portal's map
                    latitude=Decimal("35.2900") + Decimal("0.0040") * names.index(name),
                    longitude=Decimal("-2.9400") + Decimal("0.0050") * names.index(name),
                    actor="demo",
                )
                waiting.discard(name)
    finally:
        close_old_connections()


def _venue_name(key: str) -> str:
    return next(spec.name for spec in demo_network.VENUES if spec.key == key)


def _link_when_credentials(
    path: Path, licence: str, venue_id: int, stopping: threading.Event, stops: list[Callable[[], None]]
) -> None:
    """Wait for the central's credentials (HALL_LINK_KEY / HALL_LINK_SECRET from the environment first),
    then start the link."""
    key, secret = settings.HALL_LINK_KEY, settings.HALL_LINK_SECRET
    while not (key and secret):
        if stopping.wait(WAIT_POLL):
            return
        if path.exists():
            issued = json.loads(path.read_text())[licence]
            key, secret = issued["key"], issued["secret"]
    try:
        stops.append(linkthread.start_link(linkthread.config(venue_id=venue_id, key=key, secret=secret)))
    finally:
        close_old_connections()
    if stopping.is_set():  # stopped while it started: the main thread may have missed it
        stops.pop()()


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)
