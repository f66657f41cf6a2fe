"""What the machine end-to-end tests share: a linked floor, the link's beat in threads, simulated machines
(machines.simulator) on the live server, a hall screen's socket, and staff HTTP calls to the live server.

The server is tests/e2e/conftest.py's (uvicorn in a thread of this process, on the Redis pub/sub layer of
the settings under a prefix of each test's own). The simulated machines run in the test's event loop, so
nothing here may block it: database work goes through `call` (a worker thread), HTTP through
`asyncio.to_thread`. A machine that misses broadcasts for 5 s locks itself, so a blocked loop would show
up as a lock-up, not as slowness.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from http.cookies import SimpleCookie
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from websockets.asyncio.client import ClientConnection, connect

from halls.models import Venue
from jackpots.models import Contribution, Pool, PoolLevel
from jackpots.services import folding, pools
from jackpots.services.pools import LevelSpec
from machines import simulator, tasks
from machines.models import LinkGroup, Machine, Play
from machines.services import links, registry

D = Decimal
SOFTWARE = "SIM-1.0"  # the simulator's version, registered as the approved one
DENOMINATION = D("0.20")
# Two levels, no reserve: every play adds exactly bet × rate to each level's meter.
LEVELS = (
    LevelSpec(name="Mayor", seed=D("2000.00"), contribution_rate=D("0.015")),
    LevelSpec(name="Menor", seed=D("200.00"), contribution_rate=D("0.005")),
)


@pytest.fixture
def isolated_layer(settings: Any) -> str:
    """The Redis pub/sub layer under a prefix of this test's own: no other run's events cross in."""
    layer = settings.CHANNEL_LAYERS["default"]
    assert layer["BACKEND"] == "channels_redis.pubsub.RedisPubSubChannelLayer", layer
    prefix = f"e2e-mach-{uuid.uuid4().hex[:10]}"
    settings.CHANNEL_LAYERS = {"default": {**layer, "CONFIG": {**layer["CONFIG"], "prefix": prefix}}}
    return prefix


# --- the linked floor ------------------------------------------------------------------------------------


@dataclass
class Floor:
    pool: Pool
    group: LinkGroup
    machines: list[Machine]
    tokens: list[str]


def link_floor(venue: Venue, operator: User, count: int, *, code: str = "ISLA-A") -> Floor:
    """`count` type C machines of 0.20 € on one link group of a two-level pool of the venue."""
    pool = pools.create_pool(
        name="Progresivo Isla A",
        code=f"P-{code}",
        jurisdiction=venue.jurisdiction,
        authorisation_ref="AUT-MQ-2026/07",
        rule_pack="",
        venue=venue,
        levels=list(LEVELS),
        carousel_bet=None,
        actor=operator,
    )
    group = links.create_link_group(venue=venue, code=code, name="Isla A", pool=pool, actor=operator)
    machines, tokens = [], []
    for n in range(count):
        machine, token = registry.register_machine(
            venue=venue,
            asset_number=f"{code}-{101 + n}",
            machine_type="C",
            modality="individual",
            manufacturer="Zitro",
            model="Link King",
            serial=f"SN-{code}-{n}",
            denomination=DENOMINATION,
            paytable_id="PT-90",
            software_version=SOFTWARE,
            location=f"Isla A · puesto {n + 1}",
            actor=operator,
        )
        links.join_link(group=group, machine=machine, actor=operator)
        machines.append(machine)
        tokens.append(token)
    return Floor(pool=pool, group=group, machines=machines, tokens=tokens)


# --- the link's beat -------------------------------------------------------------------------------------


class LinkBeat:
    """The machine link's two loops, in two threads of the test: a `broadcast_progressives` round every 0.4 s
    (machines.broadcaster's loop sends one every HALL_MACHINE_BROADCAST_SECONDS, 0.25 s) and beat's
    `watch_machine_links` every second (the tasks' own functions, called directly).
    `pause()` stops the broadcasts, as a lost link does; the watch goes on."""

    BROADCAST_SECONDS = 0.4
    WATCH_SECONDS = 1.0

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.lock = threading.Lock()  # held by a broadcast tick: pause() returns once none is in flight
        self.paused = False
        self.broadcasts = 0
        self.errors: list[BaseException] = []
        self.threads = [
            threading.Thread(target=self._loop, args=(self._broadcast, self.BROADCAST_SECONDS), daemon=True),
            threading.Thread(target=self._loop, args=(self._watch, self.WATCH_SECONDS), daemon=True),
        ]

    def _broadcast(self) -> None:
        with self.lock:
            if not self.paused:
                tasks.broadcast_progressives()
                self.broadcasts += 1

    def _watch(self) -> None:
        tasks.watch_machine_links()

    def _loop(self, tick: Callable[[], None], every: float) -> None:
        try:
            while not self.stop.wait(every):
                try:
                    tick()
                except BaseException as exc:  # reported at teardown
                    self.errors.append(exc)
        finally:
            connection.close()

    def start(self) -> LinkBeat:
        for thread in self.threads:
            thread.start()
        return self

    def pause(self) -> None:
        with self.lock:
            self.paused = True

    def resume(self) -> None:
        with self.lock:
            self.paused = False

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(10)


@pytest.fixture
def link_beat(isolated_layer: str, server_url: str) -> Iterator[LinkBeat]:
    beat = LinkBeat().start()
    yield beat
    beat.close()
    assert not beat.errors, f"the link's beat failed: {beat.errors!r}"


# --- simulated machines ----------------------------------------------------------------------------------


def fast_config(**changes: Any) -> simulator.SimConfig:
    """A game every 0.1 s (25 times the type C pace: a test, not a hall), meters every 10 games, no
    random hits (a test asks for its hit), heartbeats every second."""
    base = simulator.SimConfig(
        seed=20260705, pace_scale=0.04, think=0.0, meters_every=10, hit_probability=0.0, heartbeat_every=1.0
    )
    return dataclasses.replace(base, **changes)


@dataclass
class Simulation:
    """Simulated machines connected to the live server, each driven by `simulator.run_machine`."""

    brains: list[simulator.MachineBrain]
    urls: list[str]
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    errors: list[str] = field(default_factory=list)
    runners: list[asyncio.Task[None]] = field(default_factory=list)

    @classmethod
    def start(cls, floor: Floor, server_url: str, config: simulator.SimConfig) -> Simulation:
        base = server_url.replace("http://", "ws://", 1)
        now = time.monotonic()
        brains, urls = [], []
        for index, (machine, token) in enumerate(zip(floor.machines, floor.tokens, strict=True)):
            profile = simulator.MachineProfile(
                index=index,
                asset=machine.asset_number,
                machine_type=machine.machine_type,
                denomination=machine.denomination,
                software_version=SOFTWARE,
            )
            brains.append(simulator.MachineBrain(profile, config, now=now))
            urls.append(simulator.machine_url(base, simulator.Credentials(profile, token, machine.venue_id)))
        sim = cls(brains=brains, urls=urls)
        sim.runners = [
            asyncio.create_task(
                simulator.run_machine(brain, url, stop=sim.stop, drain_seconds=10, on_error=sim.errors.append)
            )
            for brain, url in zip(brains, urls, strict=True)
        ]
        return sim

    async def finish(self) -> None:
        """Stop playing and wait until every message sent has its answer (the machines drain)."""
        self.stop.set()
        await asyncio.wait_for(asyncio.gather(*self.runners), timeout=20)
        undrained = [b.profile.asset for b in self.brains if not b.drained]
        assert not undrained, f"machines still waiting for answers: {undrained}"


# --- waiting -------------------------------------------------------------------------------------------


async def wait_until(
    condition: Callable[[], Any] | Callable[[], Awaitable[Any]],
    timeout: float,
    what: str,
    detail: Callable[[], str] = lambda: "",
    every: float = 0.05,
) -> Any:
    """Poll `condition` (sync, or async for database reads) until it is truthy; return its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}. {detail()}")
        await asyncio.sleep(every)


def brain_state(brains: list[simulator.MachineBrain]) -> str:
    return "; ".join(
        f"{b.profile.asset}: stored {b.stats.plays_stored_all}, pending {len(b.pending)}, "
        f"link_locked {b.link_locked}, server_lock {b.server_lock!r}, welcomed {b.welcomed}, "
        f"rejected {b.stats.rejected_codes}"
        for b in brains
    )


# --- a hall screen's socket ------------------------------------------------------------------------------


class ScreenSocket:
    """The WebSocket a hall screen holds (/ws/screens/<token>/): every event of its room's stream."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, server_url: str, token: str) -> ScreenSocket:
        url = f"{server_url.replace('http://', 'ws://', 1)}/ws/screens/{token}/"
        return cls(await connect(url, proxy=None, open_timeout=10))

    async def _read(self) -> None:
        async for frame in self.ws:
            self.events.append(json.loads(frame))

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == type_]

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.reader


# --- staff on the live server --------------------------------------------------------------------------


class StaffSession:
    """A logged-in member of staff calling the live server over HTTP: the session cookie of a login,
    the CSRF cookie a staff page sets, and the CSRF header on writes (what the pages' fetch sends)."""

    def __init__(self, server_url: str, user: User, page: str = "/machines/floor/") -> None:
        client = Client()
        client.force_login(user)  # writes the session row: build it from `call` (a database thread)
        self.server_url = server_url
        self.cookies = {settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value}
        self.page = page

    def _open(self, method: str, path: str, body: Any = None) -> tuple[int, Any, SimpleCookie]:
        headers = {
            "Accept": "application/json",
            "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()),
        }
        data = None
        if method != "GET":
            headers["X-CSRFToken"] = self.cookies.get(settings.CSRF_COOKIE_NAME, "")
            headers["Content-Type"] = "application/json"
            data = json.dumps(body or {}).encode()
        url = self.server_url + path
        request = urllib.request.Request(url, data=data, method=method, headers=headers)  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (the test's own server)
                status, raw, set_cookie = response.status, response.read(), response.headers
        except urllib.error.HTTPError as exc:
            status, raw, set_cookie = exc.code, exc.read(), exc.headers
        jar: SimpleCookie = SimpleCookie()
        for header in set_cookie.get_all("Set-Cookie") or []:
            jar.load(header)
        for name, morsel in jar.items():
            self.cookies[name] = morsel.value
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = raw.decode(errors="replace")
        return status, payload, jar

    def get(self, path: str) -> tuple[int, Any]:
        status, payload, _ = self._open("GET", path)
        return status, payload

    def post(self, path: str, body: Any = None) -> tuple[int, Any]:
        if settings.CSRF_COOKIE_NAME not in self.cookies:
            self._open("GET", self.page)  # the staff page sets the CSRF cookie
        status, payload, _ = self._open("POST", path, body)
        return status, payload


# --- the ledger ----------------------------------------------------------------------------------------


def fold_and_read(pool: Pool) -> dict[str, Decimal]:
    """Fold what is pending and read each level's exact meter (6 decimal places, not the display's cents)."""
    folding.fold(pool)
    return {level.name: level.amount for level in PoolLevel.objects.filter(pool=pool).order_by("position")}


def contributed(pool: Pool) -> dict[str, Decimal]:
    """Per level, what the contributions put on the meter."""
    out: dict[str, Decimal] = {}
    for level in PoolLevel.objects.filter(pool=pool):
        rows = Contribution.objects.filter(pool_id=pool.pk, level_id=level.pk).values_list(
            "to_meter", flat=True
        )
        out[level.name] = sum(rows, D(0))
    return out


def plays_of(machine: Machine) -> tuple[int, Decimal]:
    """How many plays the system stored for the machine, and their bets."""
    bets = list(Play.objects.filter(machine=machine).values_list("bet", flat=True))
    return len(bets), sum(bets, D(0))
