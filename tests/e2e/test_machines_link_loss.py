"""Issue 5's link-loss test: the progressive broadcasts stop, the simulated machine locks itself within 5 s,
the system shows it offline (the link watch, `watch_machine_links`), and when the broadcasts return the
machine resynchronises (hello → welcome) and plays on, with nothing lost or counted twice.

Real pieces as in test_machines_e2e.py: uvicorn on the Redis pub/sub layer, a `machines.simulator` machine
over a real socket, and a loop of the test sending the broadcast every 0.4 s (the broadcaster's own period,
HALL_MACHINE_BROADCAST_SECONDS, is 0.25 s) and running the watch every second. The test pauses the
broadcasts: the link goes quiet while the socket stays open, as when the link controller stops. A machine
locked by link loss sends nothing (it is not playing, and a link it cannot hear is down), so the system
hears nothing from it either and the watch marks it offline.
"""

from __future__ import annotations

import asyncio
import time
from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from halls.models import Venue
from machines.models import AlertKind, Machine, MachineAlert, SequenceGap
from machines.simulator import LINK_TIMEOUT
from tests.e2e.machines_support import (
    LEVELS,
    Floor,
    LinkBeat,
    Simulation,
    StaffSession,
    brain_state,
    contributed,
    fast_config,
    isolated_layer,
    link_beat,
    link_floor,
    plays_of,
    wait_until,
)
from tests.e2e.test_browser_screen import call

__all__ = ["isolated_layer", "link_beat"]  # fixtures, imported for pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

D = Decimal
# The machine checks its link at the deadline it computes (last broadcast + 5 s): the event loop's timer
# and this test's 50 ms polling are all the slack there is.
LOCK_SLACK = 0.3


def machine_state(machine: Machine) -> tuple[bool, str, str]:
    machine.refresh_from_db()
    return machine.online, machine.state, machine.lock_reason


def open_link_alerts(machine: Machine) -> list[MachineAlert]:
    return list(
        MachineAlert.objects.filter(machine=machine, kind=AlertKind.LINK_LOST, cleared_at__isnull=True)
    )


async def test_broadcasts_stop_the_machine_locks_goes_offline_and_resynchronises_when_they_return(
    server_url: str, link_beat: LinkBeat, venue: Venue, operator: User
) -> None:
    floor: Floor = await call(link_floor, venue, operator, 1, code="ISLA-L")
    machine = floor.machines[0]
    sim = Simulation.start(floor, server_url, fast_config())
    brain = sim.brains[0]

    def detail() -> str:
        return brain_state(sim.brains) + f" errors: {sim.errors[-3:]}"

    staff = await call(StaffSession, server_url, operator)

    async def floor_row() -> dict[str, object]:
        status, data = await asyncio.to_thread(staff.get, f"/machines/floor/snapshot/?venue={venue.pk}")
        assert status == 200, data
        rows: list[dict[str, object]] = data["machines"]
        return next(row for row in rows if row["id"] == machine.pk)

    try:
        await wait_until(lambda: brain.stats.plays_stored_all >= 10, 20, "10 plays", detail)
        row = await floor_row()
        assert (row["online"], row["state"], row["lock_reason"]) == (True, "in_service", "")

        # The broadcasts stop. The machine last heard one at most 0.4 s ago (LinkBeat's period); 5 s after
        # it, it locks.
        link_beat.pause()
        stopped_at = time.monotonic()
        await wait_until(lambda: brain.link_locked, LINK_TIMEOUT + 2, "the machine to lock itself", detail)
        locked_at = time.monotonic()
        last_heard = brain.last_broadcast  # the last broadcast it heard (none comes while paused)
        assert locked_at - last_heard <= LINK_TIMEOUT + LOCK_SLACK, (locked_at - last_heard, detail())
        assert locked_at - stopped_at <= LINK_TIMEOUT + LOCK_SLACK
        assert locked_at - last_heard >= LINK_TIMEOUT - LOCK_SLACK  # not before its time either
        assert brain.stats.lockups == 1
        plays_at_lock = brain.stats.plays_sent_all  # an ack may still arrive for a play sent just before

        # Silent, it is marked offline and locked (link lost) by the watch, with an alert, and the floor
        # page's snapshot shows it so.
        async def marked_offline() -> bool:
            return await call(machine_state, machine) == (False, "locked", "link_lost")

        await wait_until(
            marked_offline, LINK_TIMEOUT + 4, "the system to mark the machine offline (link lost)", detail
        )
        alerts = await call(open_link_alerts, machine)
        assert len(alerts) == 1 and machine.asset_number in alerts[0].message
        row = await floor_row()
        assert (row["online"], row["state"], row["lock_reason"]) == (False, "locked", "link_lost")
        assert brain.stats.plays_sent_all == plays_at_lock  # nothing played while locked

        # The broadcasts return: the machine hears one, says hello, is welcomed, unlocks and plays on.
        link_beat.resume()
        await wait_until(
            lambda: not brain.link_locked and brain.stats.recoveries == 1,
            5,
            "the machine to resynchronise",
            detail,
        )
        await wait_until(
            lambda: brain.stats.plays_stored_all >= plays_at_lock + 10, 10, "the machine to play on", detail
        )
        assert await call(machine_state, machine) == (True, "in_service", "")
        assert await call(open_link_alerts, machine) == []
        row = await floor_row()
        assert (row["online"], row["state"], row["lock_reason"]) == (True, "in_service", "")
    finally:
        await sim.finish()

    # One lock-up, one recovery, nothing refused, no play lost or counted twice, the pool exact.
    assert (brain.stats.lockups, brain.stats.recoveries) == (1, 1)
    assert not brain.stats.rejected_codes, detail()
    assert await call(plays_of, machine) == (brain.stats.plays_stored_all, brain.stats.bets_stored)
    assert not await call(lambda: list(SequenceGap.objects.filter(machine=machine)))
    received = await call(contributed, floor.pool)
    assert received == {spec.name: brain.stats.bets_stored * spec.contribution_rate for spec in LEVELS}
