"""The demo's electronic bingo: two rooms of player terminals, "Sala Electrónica" (the 90-ball 3×9 card: Line,
Bingo, two figures and an accumulated prize with a max ball) and "Sala Electrónica 75" (the 75-ball 5×5 card,
the second layout), each with its screen, simulated terminals with funded player cards playing continuously,
and one terminal left for a person: its page URL (``/electronic/terminal/#<device id>:<token>``) and its
player card are printed with the demo's URLs.

Seeding registers what is missing (specialities, terminals, player cards loaded by the simulator's cashier,
the simulator's and the terminal page's software versions approved). ``run_demo_terminals``, once the server
listens, gives the simulated terminals new tokens, starts them (bingo.electronic.simulator, in a daemon
thread), and once they have said hello runs the verification, opens the session and switches the speciality
on (when no session is open: a restarted demo plays on in the one it had). ``HALL_DEMO_TERMINALS`` (default 6
per room; 0 = none) sets how many simulated terminals play.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from bingo.electronic import provisioning, simulator
from bingo.electronic.models import Speciality, Terminal, TerminalSoftware
from bingo.electronic.services import games, sessions, specialities, terminals, verification
from bingo.electronic.views import software_version as terminal_page_version
from demo.hall import AUTHORISATION, DemoHall, _room, _screen
from demo.machines import _wait_listening
from halls import simulation

log = logging.getLogger("hall.demo.electronic")

ROOM_90 = "Sala Electrónica"
ROOM_75 = "Sala Electrónica 75"
TERMINALS = 6
PAGE_TERMINAL = "Terminal {code} · sala"  # the one a person plays at the terminal page
SIM_PREFIX = "Terminal {code} · sim "
DEMO_SEED = 20_261_126
# How long the simulated terminals get to say hello before the verification checks they are alive.
HELLO_WAIT = 20.0

RULES_90: dict[str, Any] = {
    "family": "electronic",
    "layout": "90",
    "card_price": "0.50",
    "purchase_sizes": [1, 2, 3, 4, 6],
    "max_cards": 24,
    "pace_seconds": "2",
    "sale_seconds": 20,
    "pause_seconds": 5,
    "prizes": [
        {"code": "linea", "name": "Línea", "type": "line", "percent": "10"},
        {"code": "bingo", "name": "Bingo", "type": "bingo", "percent": "50"},
        {"code": "esquinas", "name": "Esquinas", "type": "figure", "figure": "corners", "fixed": "1.00"},
        {"code": "aspa", "name": "Aspa", "type": "figure", "figure": "x", "fixed": "2.00"},
        {
            "code": "acumulado",
            "name": "Acumulado",
            "type": "accumulated",
            "pool": {"funding_percent": "3", "reserve_percent": "1", "seed": "100.00"},
            "max_ball": 45,
            "info": "Bingo hasta la bola 45",
        },
    ],
}
RULES_75: dict[str, Any] = {
    "family": "electronic",
    "layout": "75",
    "card_price": "0.50",
    "purchase_sizes": [1, 2, 4],
    "max_cards": 12,
    "pace_seconds": "2",
    "sale_seconds": 20,
    "pause_seconds": 5,
    "prizes": [
        {"code": "linea", "name": "Línea", "type": "line", "percent": "10"},
        {"code": "cruz", "name": "Cruz", "type": "figure", "figure": "cross", "fixed": "1.50"},
        {"code": "bingo", "name": "Bingo", "type": "bingo", "percent": "50"},
    ],
}
# (room, speciality code, name, rules)
SPECIALITIES: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    (ROOM_90, "E90", "Electrónico 90", RULES_90),
    (ROOM_75, "E75", "Electrónico 75", RULES_75),
)


def _count() -> int:
    try:
        return max(0, min(200, int(os.environ.get("HALL_DEMO_TERMINALS", str(TERMINALS)))))
    except ValueError:
        return TERMINALS


def _paced(rules: dict[str, Any]) -> dict[str, Any]:
    """The rules with the demo's pace: HALL_DEMO_ELECTRONIC_PACE (seconds a ball) and
    HALL_DEMO_ELECTRONIC_SALE (seconds of sales) when set (the tests play faster). Read when the speciality
    is created: a database seeded before keeps its own."""
    paced = dict(rules)
    if os.environ.get("HALL_DEMO_ELECTRONIC_PACE"):
        paced["pace_seconds"] = os.environ["HALL_DEMO_ELECTRONIC_PACE"]
    if os.environ.get("HALL_DEMO_ELECTRONIC_SALE"):
        paced["sale_seconds"] = int(os.environ["HALL_DEMO_ELECTRONIC_SALE"])
    return paced


def seed_electronic(hall: DemoHall) -> None:
    """The rooms, their screens and specialities, the terminals and their funded cards, the software
    approved; a new token for each room's page terminal (printed)."""
    venue = hall.venue
    # The simulated terminals' software and the terminal page's (the room's page terminal a person opens):
    # a session's verification fails a terminal whose version is not approved.
    for version in (simulator.SOFTWARE_VERSION, terminal_page_version()):
        if not TerminalSoftware.objects.filter(venue=venue, version=version).exists():
            verification.approve_software(
                venue=venue, version=version, authorisation_ref=AUTHORISATION, actor=hall.operator
            )
    cashier = provisioning.robot_cashier(venue)
    for room_name, code, name, rules in SPECIALITIES:
        with transaction.atomic():
            room = _room(venue, room_name, autoplay=False, pace=Decimal("2"))
            hall.rooms[room_name] = room
            hall.screens.append(_screen(room, f"Pantalla · {room_name}"))
        speciality = Speciality.objects.filter(room=room).first() or specialities.create_speciality(
            room=room,
            code=code,
            name=name,
            rules=_paced(rules),
            authorisation_ref=AUTHORISATION,
            actor=hall.operator,
        )
        names = [PAGE_TERMINAL.format(code=code)] + [
            f"{SIM_PREFIX.format(code=code)}{i:02d}" for i in range(1, _count() + 1)
        ]
        found = provisioning.ensure_terminals(speciality=speciality, names=names, actor=hall.operator)
        cards_of = provisioning.ensure_cards(
            terminals=found, numbers=provisioning.cards_in_use(found), cashier=cashier
        )
        page = found[0]
        token = terminals.rotate_token(terminal=page, actor=hall.operator)
        hall.self_playing.add(room.pk)
        hall.terminal_pages.append(
            (f"{name} ({room_name})", f"/electronic/terminal/#{page.device_id}:{token}", cards_of[page.pk])
        )
        hall.page_devices.append((page.device_id, token))
    hall.notes.append(
        f"electronic bingo: {', '.join(code for _r, code, _n, _rules in SPECIALITIES)}, {_count()} simulated "
        f"terminals each (HALL_DEMO_TERMINALS), player cards loaded to {provisioning.FLOAT} €"
    )


def admit_demo_players() -> int:
    """The demo's terminals' simulated players admitted at the door again once the venue's day changed (a
    card is played only by a player admitted today): the demo's beat runs it. How many stand admitted."""
    names = Q()
    for _room_name, code, _name, _rules in SPECIALITIES:
        names |= Q(device__name__startswith=SIM_PREFIX.format(code=code))
        names |= Q(device__name=PAGE_TERMINAL.format(code=code))
    found = list(Terminal.objects.filter(names).select_related("speciality__venue").order_by("pk"))
    if not found:
        return 0
    cashier = provisioning.robot_cashier(found[0].speciality.venue)
    admitted = provisioning.admit_players(terminals=found, actor=cashier)
    return sum(1 for player in admitted.values() if player is not None)


def _sim_terminals(hall: DemoHall) -> list[Terminal]:
    rooms = [hall.rooms[room] for room, _c, _n, _r in SPECIALITIES if room in hall.rooms]
    prefixes = [SIM_PREFIX.format(code=code) for _r, code, _n, _rules in SPECIALITIES]
    found = Terminal.objects.filter(speciality__room__in=rooms).select_related("device", "speciality")
    out = [t for t in found if any(t.device.name.startswith(p) for p in prefixes)]
    out.sort(key=lambda t: t.device.name)
    return out[: _count() * len(SPECIALITIES)]


def start_play(hall: DemoHall, since: float) -> bool:
    """For each demo speciality without an open session: a verification (once its simulated terminals
    said hello, or HELLO_WAIT passed), the session opened on it, and the speciality running. True when every
    one plays."""
    playing = 0
    for room_name, _code, _name, _rules in SPECIALITIES:
        speciality = Speciality.objects.filter(room=hall.rooms[room_name]).first()
        if speciality is None:
            continue
        if sessions.open_session_of(speciality) is None:
            since_dt = timezone.now() - timedelta(seconds=time.monotonic() - since)
            quiet = Terminal.objects.filter(speciality=speciality, device__name__contains=" · sim ").exclude(
                last_seen_at__gte=since_dt
            )
            if quiet.exists() and time.monotonic() - since < HELLO_WAIT:
                continue  # not every terminal said hello yet
            checked = verification.run_verification(speciality=speciality, actor=hall.operator)
            if not checked.passed:
                log.warning(
                    "the demo's verification of %s failed: %s", speciality.code, checked.system_checks
                )
                continue
            sessions.open_session(speciality=speciality, actor=hall.operator)
            log.info("%s: verified, session open", speciality.code)
        if not speciality.running:
            games.set_running(speciality=speciality, running=True, actor=hall.operator)
        playing += 1
    return playing == len(SPECIALITIES)


def run_demo_terminals(hall: DemoHall, base_url: str) -> Callable[[], None]:
    """Start the simulated terminals against ``base_url`` in a daemon thread once the server listens, then
    open play (start_play); returns the stop function."""
    parts = urlsplit(base_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    stop = threading.Event()
    state: dict[str, Any] = {}

    def simulate() -> None:
        try:
            if not _wait_listening(host, port, stop):
                return
            found = _sim_terminals(hall)
            cards_of = provisioning.cards_in_use(found)
            missing = [t for t in found if t.pk not in cards_of]
            if missing:
                cashier = provisioning.robot_cashier(hall.venue)
                cards_of.update(provisioning.ensure_cards(terminals=missing, numbers={}, cashier=cashier))
            profiles = provisioning.issue_credentials(terminals=found, cards_of=cards_of, actor=hall.operator)
            connection.close()  # the loop below reaches the database only through open_play's thread
            config = simulator.SimConfig(seed=DEMO_SEED, buy_probability=0.85, buy_spread=8.0)

            async def open_play(since: float) -> None:
                while not stop.is_set():
                    try:
                        if await asyncio.to_thread(_in_thread, lambda: start_play(hall, since)):
                            return
                    except Exception:
                        log.exception("the demo could not open electronic play")
                    await asyncio.sleep(2.0)

            async def main() -> simulator.Report:
                done = asyncio.Event()
                state["loop"], state["done"] = asyncio.get_running_loop(), done
                if stop.is_set():
                    done.set()
                await _hello_pages(hall, base_url)
                opener = asyncio.create_task(open_play(time.monotonic()))
                try:
                    return await simulator.run_simulation(
                        profiles,
                        base_url,
                        config,
                        stop=done,
                        connect_rate=20,
                        drain_seconds=2,
                        check_balances=False,
                    )
                finally:
                    opener.cancel()

            simulation.run(main)
        except Exception:
            log.exception("the demo's simulated terminals stopped")
        finally:
            connection.close()

    thread = threading.Thread(target=simulate, name="demo-terminals", daemon=True)
    thread.start()

    def stop_all() -> None:
        stop.set()
        loop, done = state.get("loop"), state.get("done")
        if loop is not None and done is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(done.set)
        thread.join(10.0)

    return stop_all


async def _hello_pages(hall: DemoHall, base_url: str) -> None:
    """A hello for each page terminal (as its page would send on opening), so the verification finds it
    alive and a person can play at it from the first game."""
    for device_id, token in hall.page_devices:
        http = simulator.HttpConnection(base_url, f"CashDevice {device_id}:{token}")
        body = {
            "seq": int(time.time() * 1_000_000),
            "software_version": simulator.SOFTWARE_VERSION,
            "clock": timezone.now().isoformat(),
        }
        try:
            status, answer = await http.request("POST", simulator.PATHS["hello"], json.dumps(body).encode())
            if status >= 300:
                log.warning("the demo's hello for terminal device %s: %s %s", device_id, status, answer)
        finally:
            await http.close()


def _in_thread(work: Callable[[], Any]) -> Any:
    """Database work from a worker thread: its connection closed after."""
    try:
        return work()
    finally:
        connection.close()
