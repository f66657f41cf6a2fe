"""Issue 31, the SAS part, end to end with real processes: a simulated SAS machine (machines.sasbridge.egm)
and the SAS host bridge (machines.sasbridge.bridge), each a process of its own, joined by a pty carrying
the wake-up bit; the bridge talks to the live server (uvicorn, the machine gateway's WebSocket) through a
relay the test can cut. The link's broadcasts come from the tasks' own function (tests/e2e/machines_support
LinkBeat), the cashier pays through the live server's API.

What they show: every game the machine played is one play in the hall and in the pool, exactly (bets ×
rate), and the hall's last meter snapshot is the machine's meters; door and tilt events arrive; a progressive
hit the machine reports twice is one hit in the hall, paid once at the cashier, and that payment resets the
machine's hand pay (LP 0x94); the hall's broadcast stopped, the machine locks itself after its 5 s
(exception 0x53) and unlocks when it returns; the hall unreachable while the machine plays and the bridge
killed and restarted meanwhile: nothing lost, nothing doubled (the journal). Bad input on the serial line
(bad CRC, truncated answer, unsolicited bytes, a mute address, a meter going backwards) is counted on the
bridge's /metrics and changes nothing in the hall.
"""

from __future__ import annotations

import asyncio
import os
import time
from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from halls.models import Venue
from jackpots.services import reports
from machines.models import SequenceGap
from tests.cashier_support import on_shift
from tests.e2e.browser_support import call
from tests.e2e.machines_support import LinkBeat, StaffSession, contributed, fold_and_read, link_beat
from tests.e2e.sas_rig import RATES, Rig, assert_exact, db_call, hall_state, rig, settle
from tests.e2e.sas_support import wait_for

__all__ = ["link_beat", "rig"]

D = Decimal

# The plays of the first test: 150 by default (seconds); bench/sas_bridge.py --plays 10000 runs it with more.
PLAYS = int(os.environ.get("HALL_SAS_PLAYS", "150"))
# How long the second test keeps the hall unreachable: 5 s by default; bench/sas_bridge.py --cut 60 (the
# issue's 60 s) runs it longer.
CUT = float(os.environ.get("HALL_SAS_CUT_SECONDS", "5"))
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120 + PLAYS // 20 + int(CUT))]


@pytest.mark.cashier_off_shift
async def test_sas_machine_plays_meters_bad_input_and_a_hit_paid_once_through_the_bridge(
    rig: Rig, venue: Venue, cashier: User, server_url: str
) -> None:
    await call(on_shift, cashier, venue, float=D("10000.00"))
    await asyncio.to_thread(
        wait_for, lambda: rig.bridge.counter("welcomes") >= 1, 20, "the welcome", 0.1, rig.detail
    )
    await asyncio.to_thread(
        wait_for, lambda: rig.egm.status()["levels"], 20, "the machine to hear the levels", 0.1, rig.detail
    )

    # Plays, a door and a tilt, and bad input on the serial line meanwhile.
    await asyncio.to_thread(rig.play, PLAYS)
    await asyncio.to_thread(rig.egm.cmd, "door")
    await asyncio.to_thread(rig.egm.cmd, "tilt")
    for bad in ("corrupt", "truncate", "unsolicited"):
        await asyncio.sleep(0.3)
        await asyncio.to_thread(rig.egm.cmd, bad)
    await asyncio.to_thread(rig.egm.cmd, "mute", on=True)
    await asyncio.sleep(0.5)
    await asyncio.to_thread(rig.egm.cmd, "mute", on=False)
    state = await settle(rig, PLAYS)
    egm = await asyncio.to_thread(rig.egm.status)
    assert_exact(state, egm, await call(contributed, rig.floor.pool))
    assert state["events"] == ["door_closed", "door_open", "tilt"]

    # The machine answers one meter read with coin-in 0 (a RAM clear, below the last
    # snapshot's): refused once, counted once, never sent.
    await asyncio.to_thread(rig.egm.cmd, "backwards")
    await asyncio.to_thread(
        wait_for,
        lambda: rig.bridge.counter("meter_backwards") == 1,
        10,
        "the backwards meter",
        0.1,
        rig.detail,
    )
    counters = (await asyncio.to_thread(rig.bridge.status))["counters"]
    assert counters["plays"] == PLAYS
    assert counters.get("bad_crc", 0) >= 1, counters
    assert counters.get("truncated", 0) >= 1, counters
    assert counters.get("unsolicited_bytes", 0) >= 1, counters
    assert counters.get("no_answer", 0) >= 1, counters
    metrics = await asyncio.to_thread(rig.bridge.metrics)
    assert "hall_sas_bridge_meter_backwards_total 1" in metrics
    assert counters.get("acked_rejected", 0) == 0, counters
    assert counters.get("meter_backwards") == 1, counters

    # A hit the machine reports twice: one hit in the hall.
    await asyncio.to_thread(rig.egm.cmd, "hit", level=1, twice=True)
    await asyncio.to_thread(rig.play, 1)
    hits = await asyncio.to_thread(
        wait_for, lambda: db_call(lambda: hall_state(rig)["hits"]), 20, "the hit in the hall", 0.2, rig.detail
    )
    assert len(hits) == 1 and hits[0][1] == "Mayor" and hits[0][2] is None
    egm = await asyncio.to_thread(rig.egm.status)
    assert egm["handpay"] and egm["handpay"] > 0  # the machine waits for its hand pay
    assert await asyncio.to_thread(rig.bridge.counter, "hit_duplicate") == 1
    assert await asyncio.to_thread(rig.bridge.counter, "hits") == 1

    # The cashier pays it: the hall unlocks the machine, the bridge resets its hand pay (LP 0x94).
    staff = await call(StaffSession, server_url, cashier, "/machines/handpays/")
    status, paid = await asyncio.to_thread(
        staff.post, f"/api/machine-hits/{hits[0][0]}/pay/", {"payment_ref": "V-31"}
    )
    assert status == 200, paid
    await asyncio.to_thread(
        wait_for,
        lambda: rig.egm.status()["handpay"] is None,
        15,
        "the remote hand-pay reset",
        0.1,
        rig.detail,
    )
    egm = await asyncio.to_thread(rig.egm.status)
    assert egm["jackpot_cents"] > 0 and egm["stats"]["handpay_resets"] == 1
    assert await asyncio.to_thread(rig.bridge.counter, "handpay_resets") == 1
    status, again = await asyncio.to_thread(staff.post, f"/api/machine-hits/{hits[0][0]}/pay/", {})
    assert (status, again["error"]["code"]) == (409, "already_paid")

    # It plays on after the payment.
    await asyncio.to_thread(rig.play, 20)
    state = await settle(rig, PLAYS + 21)
    assert len(state["hits"]) == 1
    assert not await call(lambda: list(SequenceGap.objects.all()))


async def test_sas_machine_locks_without_broadcast_and_nothing_is_lost_while_the_hall_is_cut(
    rig: Rig, link_beat: LinkBeat
) -> None:
    await asyncio.to_thread(
        wait_for, lambda: rig.egm.status()["levels"], 20, "the machine to hear the levels", 0.1, rig.detail
    )
    await asyncio.to_thread(rig.play, 40)
    await settle(rig, 40)

    # The hall's broadcast stops: the bridge stops broadcasting, the machine locks itself (0x53) 5 s after
    # the last broadcast it heard, and unlocks when they come back.
    link_beat.pause()
    paused = time.monotonic()
    await asyncio.to_thread(
        wait_for, lambda: rig.egm.status()["link_locked"], 10, "the machine's own lock", 0.1, rig.detail
    )
    locked_after = time.monotonic() - paused
    assert 5.0 <= locked_after <= 5.0 + 1.0 + 1.5, locked_after  # SAS's 5 s + the bridge's 1 s staleness
    await asyncio.to_thread(
        wait_for,
        lambda: rig.bridge.counter("machine_link_lost") == 1,
        5,
        "0x53 at the bridge",
        0.1,
        rig.detail,
    )
    link_beat.resume()
    await asyncio.to_thread(
        wait_for, lambda: not rig.egm.status()["link_locked"], 10, "the machine to unlock", 0.1, rig.detail
    )

    # The hall cut while the machine plays; the bridge killed and restarted meanwhile (its journal stays).
    await asyncio.to_thread(rig.play, 200, 0.02)
    await asyncio.sleep(0.5)
    rig.relay.cut()
    cut_at = time.monotonic()
    await asyncio.sleep(2.0)
    await asyncio.to_thread(rig.bridge.restart)
    await asyncio.sleep(max(0.5, CUT - (time.monotonic() - cut_at)))
    pending = await asyncio.to_thread(
        wait_for, lambda: rig.bridge.status()["journal"]["pending"], 10, "plays journaled", 0.1, rig.detail
    )
    assert pending > 0
    rig.relay.restore()
    state = await settle(rig, 240)
    # The backlog went back through the gateway's HTTP batch door, the same seqs: nothing refused.
    counters = (await asyncio.to_thread(rig.bridge.status))["counters"]
    assert counters.get("batches", 0) >= 1 and counters.get("acked_rejected", 0) == 0, counters
    egm = await asyncio.to_thread(rig.egm.status)
    assert_exact(state, egm, await call(contributed, rig.floor.pool))
    assert not await call(lambda: list(SequenceGap.objects.all()))
    meters = await call(fold_and_read, rig.floor.pool)
    assert set(meters) == set(RATES)
    balance = await call(reports.balance, rig.floor.pool)
    assert balance.holds, balance
