"""The demo's slot machines: 24 type C machines of 0.20 € a credit, linked to the pool "Progresivo Sala"
(three levels; Melilla's link rule: one type and one denomination), and what runs beside the demo server:
the simulator playing them, a slow attendant paying hand pays, and the progressive broadcaster.

``run_demo_machines`` gives the machines new device tokens once the server listens (tokens are shown once,
so every start makes new ones, like the staff passwords) and plays them in a daemon thread, resuming each
machine's sequence numbers and meters. ``HALL_DEMO_MACHINES=0`` turns them off; the attendant pays hand
pays left unpaid for ``HALL_DEMO_HAND_PAY_SECONDS`` (default 180; 0 = never) so the floor does not lock up.
The first ``HALL_DEMO_SAS_MACHINES`` of them (``manage.py demo --sas-machines N``; 0 by default) run as
simulated SAS machines behind real SAS host bridges instead (demo.sasfloor). ``HALL_DEMO_HIT_PROBABILITY``
sets the machines' progressive hit chance per game (DEMO_HIT_PROBABILITY by default).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from demo import sasfloor
from demo.hall import DemoHall
from halls import simulation
from halls.cashier.models import Shift, ShiftState, Till
from halls.cashier.services import shifts
from halls.models import Role, StaffRole, Venue
from machines import simulator
from machines.models import Machine, MachineState, ProgressiveHit
from machines.provisioning import (
    DENOMINATION,
    LEVELS,
    MACHINE_TYPE,
    ensure_link_group,
    ensure_machines,
    issue_credentials,
)
from machines.services import handpay

__all__ = ["DENOMINATION", "LEVELS", "MACHINE_TYPE"]

log = logging.getLogger("hall.demo.machines")

POOL_CODE = "DEMO-ML-MAQUINAS"
POOL_NAME = "Progresivo Sala"
GROUP_CODE = "DEMO-PROGRESIVO"
MACHINES = 24
ASSET_PREFIX = "DEMO-M"
# Demo pace: about one hit a quarter of an hour over 24 machines (a hit per ~7,000 games).
DEMO_HIT_PROBABILITY = 1 / 7_000
DEMO_SEED = 20_250_501


def demo_assets(count: int = MACHINES) -> list[str]:
    return [f"{ASSET_PREFIX}{i:02d}" for i in range(1, count + 1)]


def seed_machines(hall: DemoHall) -> None:
    group = ensure_link_group(
        venue=hall.venue, code=GROUP_CODE, name=POOL_NAME, pool_code=POOL_CODE, actor=hall.operator
    )
    machines = ensure_machines(venue=hall.venue, group=group, assets=demo_assets(), actor=hall.operator)
    levels = ", ".join(f"{spec.name} (seed {spec.seed})" for spec in LEVELS)
    hall.notes.append(
        f"link group {group.code} on pool {group.pool.name}: {len(machines)} type {MACHINE_TYPE} machines of "
        f"{DENOMINATION} € ({machines[0].asset_number}–{machines[-1].asset_number}), levels {levels}"
    )
    bridged = demo_assets(sasfloor.enabled_count(_enabled_count()))
    if bridged:
        hall.notes.append(
            f"{len(bridged)} of them ({bridged[0]}–{bridged[-1]}) are simulated SAS machines, each on a pty "
            "behind a SAS host bridge process"
        )


def _enabled_count() -> int:
    try:
        return max(0, min(MACHINES, int(os.environ.get("HALL_DEMO_MACHINES", str(MACHINES)))))
    except ValueError:
        return MACHINES


def _hit_probability() -> float:
    try:
        return max(
            0.0, min(1.0, float(os.environ.get("HALL_DEMO_HIT_PROBABILITY", str(DEMO_HIT_PROBABILITY))))
        )
    except ValueError:
        return DEMO_HIT_PROBABILITY


def _hand_pay_after() -> float:
    try:
        return float(os.environ.get("HALL_DEMO_HAND_PAY_SECONDS", "180"))
    except ValueError:
        return 180.0


def _wait_listening(host: str, port: int, stop: threading.Event, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1.0):
                return True
        except OSError:
            stop.wait(0.2)
    return False


ATTENDANT = "attendant"
ATTENDANT_TILL = "Caja máquinas"
# The attendant's counted float: hand pays are paid in cash from its shift's drawer.
ATTENDANT_FLOAT = Decimal("100000.00")


def attendant(venue: Venue) -> User:
    """The demo's machine attendant: a cashier of the venue on shift at the machines' till (hand pays are
    paid at the cashier, in cash from the drawer), opened with ATTENDANT_FLOAT when it has no open shift."""
    user, _created = get_user_model().objects.get_or_create(username=ATTENDANT)
    StaffRole.objects.get_or_create(user=user, venue=venue, role=Role.CASHIER)
    if not Shift.objects.filter(venue=venue, cashier=user, state=ShiftState.OPEN).exists():
        till, _created = Till.objects.get_or_create(venue=venue, name=ATTENDANT_TILL)
        shifts.open_shift(till=till, cashier=user, float_amount=ATTENDANT_FLOAT, actor=user)
    return user


def _pay_overdue_hand_pays(venue: Venue, older_than: float, cashier: User) -> int:
    """The demo attendant: pays hand pays of the demo machines left unpaid for ``older_than`` seconds."""
    cutoff = timezone.now() - timedelta(seconds=older_than)
    paid = 0
    overdue = ProgressiveHit.objects.filter(
        machine__venue=venue,
        machine__asset_number__startswith=ASSET_PREFIX,
        paid_at__isnull=True,
        reported_at__lt=cutoff,
    ).order_by("id")
    for hit in overdue:
        handpay.pay_hand_pay(hit=hit, actor=cashier, payment_ref="demo attendant")
        paid += 1
    return paid


def _unpaid_hit(machine: Machine) -> tuple[int, int] | None:
    """The machine's last progressive hit left unpaid, as a SAS machine holds its hand pay: (level, 1 the
    first of the link's levels, amount in cents); None when every hit was paid."""
    hit = (
        ProgressiveHit.objects.filter(machine=machine, paid_at__isnull=True)
        .select_related("level")
        .order_by("-seq")
        .first()
    )
    if hit is None:
        return None
    names = [spec.name for spec in LEVELS]
    level = names.index(hit.level.name) + 1 if hit.level.name in names else 1
    return level, int(hit.amount * 100)


def run_demo_machines(hall: DemoHall, base_url: str) -> Callable[[], None]:
    """Start the demo's simulated machines against ``base_url`` (the demo server) in a daemon thread, once
    it listens; returns the stop function."""
    count = _enabled_count()
    if count == 0:
        return lambda: None
    parts = urlsplit(base_url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or 80
    ws_base = f"{'wss' if parts.scheme == 'https' else 'ws'}://{host}:{port}"
    stop = threading.Event()
    state: dict[str, Any] = {}
    pay_after = _hand_pay_after()

    def simulate() -> None:
        try:
            if not _wait_listening(host, port, stop):
                return
            machines = list(Machine.objects.filter(venue=hall.venue, asset_number__in=demo_assets(count)))
            machines.sort(key=lambda m: m.asset_number)
            credentials = issue_credentials(machines, actor=hall.operator)
            hit_probability = _hit_probability()
            bridged = sasfloor.enabled_count(len(credentials))
            sas_machines = [
                sasfloor.SasMachine(
                    c,
                    seed=DEMO_SEED + c.profile.index,
                    hit_probability=hit_probability,
                    hand_pay=_unpaid_hit(machine),
                    # The bridge disabled play on a machine the hall had locked (LP 0x01): kept in its NVRAM.
                    disabled=machine.state != MachineState.IN_SERVICE,
                )
                for c, machine in zip(credentials[:bridged], machines, strict=False)
            ]
            connection.close()  # this thread is the simulator's from here: no database
            state["sas"] = sasfloor.start_sas_floor(sas_machines, ws_base)
            if stop.is_set():  # stopped meanwhile: stop_all may have looked for them already
                state["sas"]()
            credentials = credentials[bridged:]
            if not credentials:
                return
            config = simulator.SimConfig(seed=DEMO_SEED, hit_probability=hit_probability)

            async def main() -> simulator.Report:
                done = asyncio.Event()
                state["loop"], state["done"] = asyncio.get_running_loop(), done
                if stop.is_set():
                    done.set()
                return await simulator.run_simulation(
                    credentials, ws_base, config, stop=done, connect_rate=20, drain_seconds=3
                )

            simulation.run(main)
        except Exception:
            log.exception("the demo's simulated machines stopped")
        finally:
            connection.close()

    def attend() -> None:
        try:
            # A person pays a hand pay: the demo's attendant, a cashier on shift at the machines' till.
            while not stop.wait(min(15.0, max(1.0, pay_after))):
                try:
                    paid = _pay_overdue_hand_pays(hall.venue, pay_after, attendant(hall.venue))
                    if paid:
                        log.info("demo attendant paid %d hand pay(s)", paid)
                except Exception:
                    log.exception("demo attendant failed")
                finally:
                    connection.close()
        finally:
            connection.close()

    threads = [threading.Thread(target=simulate, name="demo-machines", daemon=True)]
    if pay_after > 0:
        threads.append(threading.Thread(target=attend, name="demo-attendant", daemon=True))
    for thread in threads:
        thread.start()

    def stop_all() -> None:
        stop.set()
        loop, done = state.get("loop"), state.get("done")
        if loop is not None and done is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(done.set)
        for thread in threads:
            thread.join(10.0)
        stop_sas = state.get("sas")
        if stop_sas is not None:
            stop_sas()

    return stop_all


def run_broadcaster(hall: DemoHall, base_url: str) -> Callable[[], None]:
    """The progressive broadcaster (machines.broadcaster) in a thread of the demo server, embedded or on
    Redis: every linked machine (simulated or a real board) hears its levels. Returns the stop function."""
    from machines import broadcaster

    handle = broadcaster.start_thread()
    return handle.stop
