"""Issue 31, the hall's lock passed to a SAS machine, end to end with real processes (the rig of
tests/e2e/sas_rig.py: the simulated SAS machine and the bridge joined by a pty, the bridge on the live server
through a relay the test can cut; the bridge's device token in a file of its own, mode 0600).

What they show: the operator locks the machine through the API (machines.services.registry
.set_machine_state, which tells its socket ``lock``) in the middle of a game: the bridge disables play on the
machine (SAS LP 0x01), the game in progress ends and the hall takes its play (the one game a lock may find in
progress, ``after_lock``), so the hall refuses no play (``machine_locked``) and no gap opens; the machine
plays nothing more while locked, and the operator's unlock enables it (LP 0x02): it plays on and the hall
holds exactly what it played. The bridge's hall link cut for longer than its ``--hall-lost-after``: play
disabled on the machine; the link restored and the hall's welcome in service: enabled again, and nothing
lost. Each is counted on the bridge's /metrics and logged for technicians.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from django.contrib.auth.models import User

from machines.models import LockReason, Machine, MachineState, Play, SequenceGap
from tests.e2e.browser_support import call
from tests.e2e.machines_support import StaffSession, contributed, link_beat
from tests.e2e.sas_rig import Rig, assert_exact, db_call, hall_state, rig, settle
from tests.e2e.sas_support import wait_for

__all__ = ["link_beat", "rig"]

LOST_AFTER = 2.0  # the bridge's --hall-lost-after here (5 s by default: the gateway's offline window)
BRIDGE_ARGS = ("--hall-lost-after", str(LOST_AFTER))
# Seconds a game while the lock comes: 2.5 s in the game, 2.5 s before the next one starts.
SLOW = 5.0
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


async def ready(rig: Rig) -> None:
    await asyncio.to_thread(
        wait_for, lambda: rig.egm.status()["levels"], 20, "the machine to hear the levels", 0.1, rig.detail
    )
    await asyncio.to_thread(
        wait_for,
        lambda: rig.bridge.status()["machine_enabled"] is True,
        20,
        "play enabled after the welcome (LP 02)",
        0.1,
        rig.detail,
    )


def in_a_game(rig: Rig, after: int) -> int | None:
    """The machine's games played, the one in progress counted, once a game after the first `after` has
    ended, the hall holds its play and every one before it, and the next game is in progress."""
    egm = rig.egm.status()
    played = int(egm["games_played"])  # counted when a game starts
    if played > after + 1 and egm["game_open"] and db_call(lambda: hall_state(rig)["plays"]) == played - 1:
        return played
    return None


async def test_the_operators_lock_disables_play_on_the_machine_and_no_play_is_refused(
    rig: Rig, operator: User, server_url: str
) -> None:
    await ready(rig)
    await asyncio.to_thread(rig.play, 20, 0.05)
    await settle(rig, 20)

    # The machine plays slowly; the operator locks it in the middle of a game (logged in first: under load
    # a login took longer than a game).
    staff = await call(StaffSession, server_url, operator, "/machines/floor/")
    path = f"/api/machines/{rig.machine.pk}/state/"
    await asyncio.to_thread(rig.play, 6, SLOW)
    games = await asyncio.to_thread(wait_for, lambda: in_a_game(rig, 20), 20, "a game in progress", 0.02)
    locked_at = time.monotonic()
    status, body = await asyncio.to_thread(staff.post, path, {"state": "locked", "reason": "inspection"})
    assert status == 200, body
    answered = time.monotonic() - locked_at
    await asyncio.to_thread(
        wait_for, lambda: rig.egm.status()["disabled"], 10, "the machine disabled (LP 01)", 0.02, rig.detail
    )
    took = time.monotonic() - locked_at
    await asyncio.to_thread(
        wait_for, lambda: not rig.egm.status()["game_open"], 10, "the game in progress ended", 0.05
    )
    egm = await asyncio.to_thread(rig.egm.status)
    assert egm["games_played"] == games and not egm["game_open"], (took, egm)  # none after it
    assert egm["stats"]["shutdowns"] == 1 and egm["plays_left"] > 0
    print(
        f"\nthe operator's lock: API answered in {answered:.3f} s, "
        f"the machine disabled (LP 01 ACKed) {took:.3f} s after the call"
    )

    # Locked: it plays nothing, however long (past its next game's time), though it has games to play.
    await asyncio.sleep(SLOW + 1.0)
    egm = await asyncio.to_thread(rig.egm.status)
    assert egm["games_played"] == games and egm["disabled"] and egm["plays_left"] > 0, egm
    assert not egm["link_locked"]  # the broadcasts go on: the lock-out is the hall's word, not the link's
    machine = await call(Machine.objects.get, pk=rig.machine.pk)
    assert (machine.state, machine.lock_reason) == (MachineState.LOCKED, LockReason.OPERATOR)

    # The operator's unlock: enabled (LP 02), it plays what it had left and more.
    await asyncio.to_thread(rig.egm.cmd, "play", count=30, every=0.05)
    status, body = await asyncio.to_thread(staff.post, path, {"state": "in_service", "reason": "done"})
    assert status == 200, body
    await asyncio.to_thread(
        wait_for, lambda: not rig.egm.status()["disabled"], 10, "enabled (LP 02)", 0.05, rig.detail
    )
    state = await settle(rig, 20 + 6 + 30)
    egm = await asyncio.to_thread(rig.egm.status)
    assert_exact(state, egm, await call(contributed, rig.floor.pool))
    assert egm["stats"]["startups"] == 1 and egm["stats"]["shutdowns"] == 1

    # No play refused machine_locked (or anything else), no gap: the game the lock found in progress was
    # taken as such, once; counted and logged for technicians.
    assert await call(lambda: Play.objects.filter(machine_id=rig.machine.pk).count()) == egm["games_played"]
    counters = (await asyncio.to_thread(rig.bridge.status))["counters"]
    assert counters.get("acked_rejected", 0) == 0, counters
    assert not await call(lambda: list(SequenceGap.objects.all()))
    assert counters["hall_locks"] >= 1 and counters["hall_unlocks"] >= 1, counters
    metrics = await asyncio.to_thread(rig.bridge.metrics)
    assert "hall_sas_bridge_machine_disables_total 1\n" in metrics
    assert "hall_sas_bridge_machine_enables_total" in metrics and counters["machine_enables"] >= 2
    assert "hall_sas_bridge_machine_enabled 1\n" in metrics
    log = rig.bridge.log()
    assert "play disabled on the machine (LP 01): the hall locked it (operator)" in log
    assert rig.floor.tokens[0] not in log


async def test_the_hall_lost_past_the_bridges_window_disables_play_until_it_is_back(rig: Rig) -> None:
    await ready(rig)
    await asyncio.to_thread(rig.play, 150, 0.05)
    await asyncio.to_thread(wait_for, lambda: rig.egm.status()["games_played"] >= 10, 20, "plays", 0.05)

    rig.relay.cut()
    cut_at = time.monotonic()
    await asyncio.to_thread(
        wait_for, lambda: rig.egm.status()["disabled"], LOST_AFTER + 10, "disabled", 0.05, rig.detail
    )
    took = time.monotonic() - cut_at
    assert took >= LOST_AFTER - 0.1, took  # not before the window
    print(f"\nthe hall cut: play disabled on the machine {took:.2f} s later (window {LOST_AFTER:g} s)")
    egm = await asyncio.to_thread(rig.egm.status)
    games = egm["games_played"]  # counted at its start: a game in progress ends, none starts
    await asyncio.sleep(2.0)
    egm = await asyncio.to_thread(rig.egm.status)
    assert egm["disabled"] and egm["plays_left"] > 0 and egm["games_played"] == games, egm
    status = await asyncio.to_thread(rig.bridge.status)
    assert status["hall_lost"] is True and status["machine_enabled"] is False
    assert status["counters"]["machine_disables_hall_lost"] == 1, status
    assert status["journal"]["pending"] > 0  # what it played meanwhile waits in the journal

    rig.relay.restore()
    await asyncio.to_thread(
        wait_for, lambda: not rig.egm.status()["disabled"], 30, "enabled again", 0.1, rig.detail
    )
    state = await settle(rig, 150)
    egm = await asyncio.to_thread(rig.egm.status)
    assert_exact(state, egm, await call(contributed, rig.floor.pool))
    counters = (await asyncio.to_thread(rig.bridge.status))["counters"]
    assert counters.get("acked_rejected", 0) == 0, counters
    assert not await call(lambda: list(SequenceGap.objects.all()))
    metrics = await asyncio.to_thread(rig.bridge.metrics)
    assert "hall_sas_bridge_machine_disables_hall_lost_total 1\n" in metrics
    assert "play disabled on the machine (LP 01): the hall out of reach for more than 2 s" in rig.bridge.log()
