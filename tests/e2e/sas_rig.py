"""The SAS bridge's end-to-end rig on the live server (tests/e2e/test_sas_bridge.py, test_sas_lock.py): a
linked floor's first machine as a simulated SAS machine and its bridge (tests/e2e/sas_support.py), behind a
relay the test can cut; what the hall holds of it, and the check that it holds exactly what the machine
played."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from halls.models import Venue
from machines.models import MachineEvent, MeterSnapshot, ProgressiveHit
from tests.e2e.machines_support import LEVELS, SOFTWARE, Floor, LinkBeat, link_floor, plays_of
from tests.e2e.sas_support import Bridge, Egm, Relay, wait_for

D = Decimal
DENOM = D("0.20")
RATES = {spec.name: spec.contribution_rate for spec in LEVELS}


class Rig:
    def __init__(self, floor: Floor, server_url: str, tmp: Path, extra: tuple[str, ...] = ()) -> None:
        self.floor = floor
        self.machine = floor.machines[0]
        self.egm = Egm()
        self.relay = Relay(int(server_url.rsplit(":", 1)[1]))
        self.bridge = Bridge(
            pty=self.egm.pty,
            hall_port=self.relay.port,
            asset=self.machine.asset_number,
            token=floor.tokens[0],
            venue=self.machine.venue_id,
            journal=tmp / "journal.sqlite3",
            software_version=SOFTWARE,
            log=tmp / "bridge.log",
            extra=extra,
        )

    def detail(self) -> str:
        try:
            return f"egm: {self.egm.status()} bridge: {self.bridge.status()} log: {self.bridge.log()}"
        except Exception as exc:
            return f"({exc}) log: {self.bridge.log()}"

    def close(self) -> None:
        self.bridge.close()
        self.egm.close()
        self.relay.close()

    def idle(self) -> bool:
        """The machine played all it was asked, the bridge read it all and the hall acknowledged it all,
        with a meter read after the last game."""
        egm = self.egm.status()
        if egm["plays_left"] or egm["game_open"] or egm["queue"]:
            return False
        status = self.bridge.status()
        return bool(status["journal"]["pending"] == 0)

    def play(self, count: int, every: float = 0.02) -> None:
        self.egm.cmd("play", count=count, every=every)


@pytest.fixture
def rig(
    request: pytest.FixtureRequest,
    server_url: str,
    link_beat: LinkBeat,
    venue: Venue,
    operator: User,
    tmp_path: Path,
) -> Iterator[Rig]:
    """The rig; a test module's ``BRIDGE_ARGS`` are added to the bridge's command line."""
    floor = link_floor(venue, operator, 1, code="SAS-A")
    made = Rig(floor, server_url, tmp_path, tuple(getattr(request.module, "BRIDGE_ARGS", ())))
    yield made
    made.close()


def hall_state(rig: Rig) -> dict[str, Any]:
    count, bets = plays_of(rig.machine)
    snapshot = MeterSnapshot.objects.filter(machine=rig.machine).order_by("-seq").first()
    return {
        "plays": count,
        "bets": bets,
        "meters": None
        if snapshot is None
        else (snapshot.coin_in, snapshot.coin_out, snapshot.jackpots_paid, snapshot.games_played),
        "events": sorted(MachineEvent.objects.filter(machine=rig.machine).values_list("kind", flat=True)),
        "hits": list(
            ProgressiveHit.objects.filter(machine=rig.machine).values_list("pk", "level__name", "paid_at")
        ),
    }


async def settle(rig: Rig, games: int) -> dict[str, Any]:
    """Wait until the hall holds `games` plays and a meter snapshot taken after the last of them."""

    def done() -> dict[str, Any] | None:
        state = hall_state(rig)
        egm = rig.egm.status()
        meters = state["meters"]
        if state["plays"] == games and meters is not None and meters[3] == egm["games_played"] and rig.idle():
            return state
        return None

    return await asyncio.to_thread(
        wait_for, lambda: db_call(done), 60 + games // 20, f"{games} plays settled", 0.2, rig.detail
    )


def db_call(fn: Any) -> Any:
    from django.db import connection

    try:
        return fn()
    finally:
        connection.close()


def assert_exact(state: dict[str, Any], egm: dict[str, Any], pool_received: dict[str, Decimal]) -> None:
    games = egm["games_played"]
    coin_in = egm["coin_in"] * DENOM
    assert state["plays"] == games
    assert state["bets"] == coin_in
    assert state["meters"][0] == coin_in
    assert state["meters"][1] == egm["coin_out"] * DENOM
    assert state["meters"][3] == games
    assert pool_received == {name: coin_in * rate for name, rate in RATES.items()}
