"""The machines' part of the demo hall, and the provisioning the simulator command and the benchmark share.

Imported by ``halls.demo_seed.seed_demo`` (Django's module autodiscovery): ``seed_machines`` creates, only
when missing and only through the services, the pool "Progresivo Sala" (three levels, no table rule pack:
machines.services.links refuses table pools), the link group ``DEMO-PROGRESIVO`` and 24 type C machines
of 0.20 € a credit in the demo venue, all linked (Melilla's link rule: one type and one denomination).

``run_demo_machines`` is the demo server's background runner (``halls.demo_seed.register_runner``): once
the server listens it gives the machines new device tokens (tokens are shown once, so every start makes
new ones, like the staff passwords) and plays them with the simulator in a daemon thread, resuming each
machine's sequence numbers and meters where the last run stopped. A slow attendant pays hand pays left
unpaid for ``HALL_DEMO_HAND_PAY_SECONDS`` (default 180; 0 = never) so the floor does not lock up over an
afternoon. ``HALL_DEMO_MACHINES=0`` turns the simulated machines off. ``run_broadcaster`` (always on) runs
the progressive broadcaster in a thread of the demo server (production runs it as a process of its own:
``manage.py broadcast_progressives``, deploy/).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Count, Sum
from django.utils import timezone

from halls.actors import Actor
from halls.demo_seed import DemoHall, register_runner, register_seeder
from halls.models import Venue
from jackpots.models import Pool
from jackpots.services import pools
from jackpots.services.pools import LevelSpec
from machines import simulator
from machines.models import (
    LinkGroup,
    LinkMember,
    Machine,
    MachineType,
    MeterSnapshot,
    Modality,
    ProgressiveHit,
)
from machines.services import handpay, links, registry

log = logging.getLogger("hall.machines.demo")

POOL_CODE = "DEMO-ML-MAQUINAS"
POOL_NAME = "Progresivo Sala"
GROUP_CODE = "DEMO-PROGRESIVO"
# Seeds and rates: every bet is whole cents, so bet × rate is exact at 6 places; the levels take 1.2 %.
LEVELS = (
    LevelSpec(name="Súper", seed=Decimal("1000.00"), contribution_rate=Decimal("0.005")),
    LevelSpec(name="Mayor", seed=Decimal("200.00"), contribution_rate=Decimal("0.004")),
    LevelSpec(name="Mini", seed=Decimal("25.00"), contribution_rate=Decimal("0.003")),
)
MACHINES = 24
ASSET_PREFIX = "DEMO-M"
MACHINE_TYPE = MachineType.C
DENOMINATION = Decimal("0.20")
SOFTWARE_VERSION = "SIM-1.0"
# Demo pace: about one hit a quarter of an hour over 24 machines (a hit per ~7,000 games).
DEMO_HIT_PROBABILITY = 1 / 7_000
DEMO_SEED = 20_250_501


@dataclass(frozen=True)
class MachineSpec:
    """What the provisioning registers when a machine is missing."""

    machine_type: str = MACHINE_TYPE
    denomination: Decimal = DENOMINATION
    manufacturer: str = "Simulador"
    model: str = "SIM-C"
    paytable_id: str = "SIM-90"
    software_version: str = SOFTWARE_VERSION


# --- provisioning (demo, simulate_machines --register, bench) ---------------------------------------------


def ensure_link_group(
    *,
    venue: Venue,
    code: str,
    name: str,
    pool_code: str,
    levels: Sequence[LevelSpec] = LEVELS,
    actor: Actor,
) -> LinkGroup:
    """The venue's link group ``code``, created with a new pool of ``levels`` when missing."""
    group = LinkGroup.objects.filter(venue=venue, code=code).select_related("pool").first()
    if group is not None:
        return group
    pool = Pool.objects.filter(code=pool_code).first()
    if pool is None:
        pool = pools.create_pool(
            name=name,
            code=pool_code,
            jurisdiction=venue.jurisdiction,
            currency=venue.currency,
            authorisation_ref="DEMO — not an authorisation",
            rule_pack="",
            venue=venue,
            levels=list(levels),
            carousel_bet=None,
            actor=actor,
        )
    return links.create_link_group(venue=venue, code=code, name=name, pool=pool, actor=actor)


def ensure_machines(
    *,
    venue: Venue,
    group: LinkGroup,
    assets: Sequence[str],
    spec: MachineSpec = MachineSpec(),
    actor: Actor,
    location: Callable[[int], str] = lambda i: f"Sala de máquinas, puesto {i + 1}",
) -> list[Machine]:
    """The machines ``assets`` of the venue, registered when missing and linked to ``group``."""
    existing = {m.asset_number: m for m in Machine.objects.filter(venue=venue, asset_number__in=assets)}
    linked = set(
        LinkMember.objects.filter(
            group=group, left_at__isnull=True, machine__in=existing.values()
        ).values_list("machine_id", flat=True)
    )
    machines: list[Machine] = []
    for i, asset in enumerate(assets):
        machine = existing.get(asset)
        if machine is None:
            machine, _token = registry.register_machine(
                venue=venue,
                asset_number=asset,
                machine_type=spec.machine_type,
                modality=Modality.INDIVIDUAL,
                manufacturer=spec.manufacturer,
                model=spec.model,
                serial=f"{asset}-SN",
                denomination=spec.denomination,
                paytable_id=spec.paytable_id,
                software_version=spec.software_version,
                location=location(i),
                actor=actor,
            )
        if machine.pk not in linked:
            links.join_link(group=group, machine=machine, actor=actor)
        machines.append(machine)
    return machines


def resume_profile(machine: Machine, index: int) -> simulator.MachineProfile:
    """A simulator profile that continues the machine's record: its next seq and its meters as the last
    snapshot plus the plays since (so a restarted simulator does not look like a meter reset)."""
    snapshot = MeterSnapshot.objects.filter(machine=machine).order_by("-seq").first()
    after = snapshot.seq if snapshot is not None else 0
    since = machine.plays.filter(seq__gt=after).aggregate(n=Count("id"), bet=Sum("bet"), win=Sum("win"))
    hits = ProgressiveHit.objects.filter(machine=machine, seq__gt=after).aggregate(paid=Sum("amount"))
    zero = Decimal("0.00")
    base = simulator.Meters(
        coin_in=snapshot.coin_in if snapshot else zero,
        coin_out=snapshot.coin_out if snapshot else zero,
        jackpots_paid=snapshot.jackpots_paid if snapshot else zero,
        credits=snapshot.credits if snapshot else zero,
        games_played=snapshot.games_played if snapshot else 0,
    )
    meters = simulator.Meters(
        coin_in=base.coin_in + (since["bet"] or zero),
        coin_out=base.coin_out + (since["win"] or zero),
        jackpots_paid=base.jackpots_paid + (hits["paid"] or zero),
        credits=base.credits,
        games_played=base.games_played + int(since["n"] or 0),
    )
    return simulator.MachineProfile(
        index=index,
        asset=machine.asset_number,
        machine_type=machine.machine_type,
        denomination=machine.denomination,
        software_version=machine.software_version,
        next_seq=machine.last_seq + 1,
        meters=meters,
    )


def issue_credentials(machines: Sequence[Machine], *, actor: Actor) -> list[simulator.Credentials]:
    """New device tokens for ``machines`` (the old ones stop working) and their resumed profiles."""
    out = []
    for index, machine in enumerate(machines):
        token = registry.rotate_token(machine=machine, actor=actor)
        out.append(
            simulator.Credentials(
                profile=resume_profile(machine, index), token=token, venue_id=machine.venue_id
            )
        )
    return out


# --- the demo hall ------------------------------------------------------------------------------------


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


register_seeder(seed_machines)


def _enabled_count() -> int:
    try:
        return max(0, min(MACHINES, int(os.environ.get("HALL_DEMO_MACHINES", str(MACHINES)))))
    except ValueError:
        return MACHINES


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
            connection.close()  # this thread is the simulator's from here: no database
            config = simulator.SimConfig(seed=DEMO_SEED, hit_probability=DEMO_HIT_PROBABILITY)

            async def main() -> simulator.Report:
                done = asyncio.Event()
                state["loop"], state["done"] = asyncio.get_running_loop(), done
                if stop.is_set():
                    done.set()
                return await simulator.run_simulation(
                    credentials, ws_base, config, stop=done, connect_rate=20, drain_seconds=3
                )

            simulator.run(main)
        except Exception:
            log.exception("the demo's simulated machines stopped")
        finally:
            connection.close()

    def attend() -> None:
        try:
            # The demo's cashier (halls.demo_seed) pays: a hand pay is paid by a person.
            cashier = get_user_model().objects.filter(username="cashier").first()
            while cashier is not None and not stop.wait(15.0):
                try:
                    paid = _pay_overdue_hand_pays(hall.venue, pay_after, cashier)
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

    return stop_all


def run_broadcaster(hall: DemoHall, base_url: str) -> Callable[[], None]:
    """The progressive broadcaster (machines.broadcaster) in a thread of the demo server, embedded or on
    Redis: every linked machine (simulated or a real board) hears its levels. Returns the stop function."""
    from machines import broadcaster

    handle = broadcaster.start_thread()
    return handle.stop


register_runner(run_broadcaster)
register_runner(run_demo_machines)
