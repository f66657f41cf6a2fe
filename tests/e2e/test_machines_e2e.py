"""Issue 5 end to end: simulated machines on the live server play into a linked pool, one hits, and the hit
goes the whole way: paid from the pool, the machine in hand-pay lock-up, the hit on a hall screen, and the
payment recorded at the cashier, after which the machine plays on.

The pieces are the real ones: uvicorn serving config.asgi (the machine gateway's WebSocket, the screens'
WebSocket, the REST API) on the Redis pub/sub channel layer, `machines.simulator` machines over real
sockets, and the link's two tasks called by a loop of the test: `broadcast_progressives` every 0.4 s (as
machines.broadcaster would every HALL_MACHINE_BROADCAST_SECONDS, 0.25 s), `watch_machine_links` every
second (as beat would). The machines play 25 times faster than a type C may (a game every 0.1 s) so the
test takes seconds.

Exactness: what each level of the pool received equals, to the sixth decimal, the bets the machines were
told were stored (their own count, from the gateway's acks) times the level's rate; the database holds the
same plays; the level nobody hit stands at exactly its seed plus those contributions; the pool's balancing
report holds.
"""

from __future__ import annotations

import asyncio
import dataclasses
from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from halls.models import Screen, Venue
from jackpots.services import reports
from machines.models import MachineAlert, ProgressiveHit, SequenceGap
from tests.cashier_support import on_shift
from tests.e2e.browser_support import call
from tests.e2e.machines_support import (
    LEVELS,
    Floor,
    LinkBeat,
    ScreenSocket,
    Simulation,
    StaffSession,
    brain_state,
    contributed,
    fast_config,
    fold_and_read,
    link_beat,
    link_floor,
    plays_of,
    wait_until,
)

__all__ = ["link_beat"]  # fixtures, imported for pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

D = Decimal
RATES = {spec.name: spec.contribution_rate for spec in LEVELS}
SEEDS = {spec.name: spec.seed for spec in LEVELS}

PAYING_FLOAT = Decimal("10000.00")


def pending_hit(floor: Floor) -> ProgressiveHit:
    return ProgressiveHit.objects.select_related("level", "machine").get(machine=floor.machines[0])


def machine_row(floor: Floor, index: int) -> tuple[str, str, bool]:
    machine = floor.machines[index]
    machine.refresh_from_db()
    return machine.state, machine.lock_reason, machine.online


@pytest.mark.cashier_off_shift  # on shift below, with cash in the drawer to pay the hit
async def test_machines_play_a_hit_pays_locks_shows_on_the_screen_and_is_cleared_at_the_cashier(
    server_url: str, link_beat: LinkBeat, venue: Venue, operator: User, cashier: User, screen: Screen
) -> None:
    await call(on_shift, cashier, venue, float=PAYING_FLOAT)  # hand pays are cash from the drawer
    floor = await call(link_floor, venue, operator, 3)
    screen_socket = await ScreenSocket.open(server_url, screen.token)
    sim = Simulation.start(floor, server_url, fast_config())
    winner = sim.brains[0]
    others = sim.brains[1:]

    def detail() -> str:
        return brain_state(sim.brains) + f" errors: {sim.errors[-3:]}"

    try:
        # The machines connect, are welcomed with the pool's levels, hear the broadcasts and play.
        await wait_until(
            lambda: all(b.stats.plays_stored_all >= 15 for b in sim.brains),
            30,
            "15 plays per machine",
            detail,
        )
        assert all(b.linked and b.levels.keys() == RATES.keys() for b in sim.brains)
        assert all(b.stats.broadcasts >= 2 for b in sim.brains)

        # The first machine reports a progressive hit on its next game.
        winner.config = dataclasses.replace(winner.config, hit_probability=1.0)
        await wait_until(lambda: winner.stats.hits_sent == 1, 10, "the hit to be sent", detail)
        winner.config = dataclasses.replace(winner.config, hit_probability=0.0)
        await wait_until(
            lambda: winner.stats.hits_accepted == 1 and winner.server_lock == "hand_pay",
            10,
            "the hit's ack with the hand-pay lock",
            detail,
        )
        hit = await call(pending_hit, floor)
        asset = floor.machines[0].asset_number
        assert hit.paid_at is None
        assert hit.amount == winner.stats.hand_pay_amount  # the ack told the machine what it won
        assert hit.amount >= SEEDS[hit.level.name]  # the level's whole meter, at least its seed
        assert await call(machine_row, floor, 0) == ("locked", "hand_pay", True)

        # Locked, the winner plays no more; the others play on.
        locked_plays = winner.stats.plays_sent_all
        marks = [b.stats.plays_stored_all for b in others]
        await wait_until(
            lambda: all(b.stats.plays_stored_all >= n + 10 for b, n in zip(others, marks, strict=True)),
            15,
            "the other machines to play on",
            detail,
        )
        assert winner.stats.plays_sent_all == locked_plays

        # The hall screen announced it: which machine, which level, how much.
        hits = await wait_until(lambda: screen_socket.of_type("pool.hit"), 10, "pool.hit on the screen")
        assert len(hits) == 1
        shown = hits[0]["data"]
        assert (shown["source"], shown["machine"], shown["source_kind"]) == (
            f"Máquina {asset}",
            asset,
            "machine",
        )
        assert (shown["level_name"], shown["amount"], shown["pool"]) == (
            hit.level.name,
            str(hit.amount),
            floor.pool.pk,
        )
        assert hits[0]["stream"] == screen.room.stream

        # The cashier sees it pending and pays it through the API of the live server.
        staff = await call(StaffSession, server_url, cashier, "/machines/handpays/")
        status, pending = await asyncio.to_thread(staff.get, f"/machines/handpays/snapshot/?venue={venue.pk}")
        assert status == 200
        assert [(h["id"], h["asset_number"], D(h["amount"])) for h in pending["hits"]] == [
            (hit.pk, asset, hit.amount)
        ]
        status, paid = await asyncio.to_thread(
            staff.post, f"/api/machine-hits/{hit.pk}/pay/", {"payment_ref": "VALE-0042"}
        )
        assert status == 200, paid
        assert (paid["id"], paid["payment_ref"], paid["paid_by"]) == (hit.pk, "VALE-0042", "cashier")
        status, again = await asyncio.to_thread(staff.post, f"/api/machine-hits/{hit.pk}/pay/", {})
        assert (status, again["error"]["code"]) == (409, "already_paid")

        # Told to unlock, the machine plays on.
        await wait_until(
            lambda: winner.server_lock == "" and winner.stats.plays_stored_all >= locked_plays + 10,
            10,
            "the paid machine to play on",
            detail,
        )
        assert (await call(machine_row, floor, 0))[:2] == ("in_service", "")
        status, pending = await asyncio.to_thread(staff.get, f"/machines/handpays/snapshot/?venue={venue.pk}")
        assert (status, pending["hits"]) == (200, [])
    finally:
        await sim.finish()
        await screen_socket.close()

    # Nothing was lost, repeated or refused on the way.
    assert not [b.stats.rejected_codes for b in sim.brains if b.stats.rejected_codes], detail()
    assert all(b.stats.lockups == 0 for b in sim.brains), detail()
    for brain, machine in zip(sim.brains, floor.machines, strict=True):
        assert await call(plays_of, machine) == (brain.stats.plays_stored_all, brain.stats.bets_stored)
    assert not await call(lambda: list(SequenceGap.objects.all()))
    assert not await call(lambda: list(MachineAlert.objects.filter(cleared_at__isnull=True)))

    # The pool grew by exactly the sum of the machines' contributions.
    bets = sum((b.stats.bets_stored for b in sim.brains), D(0))
    assert bets > 0
    received = await call(contributed, floor.pool)
    assert received == {name: bets * rate for name, rate in RATES.items()}
    meters = await call(fold_and_read, floor.pool)
    untouched = next(name for name in RATES if name != hit.level.name)
    assert meters[untouched] == SEEDS[untouched] + bets * RATES[untouched]
    balance = await call(reports.balance, floor.pool)
    assert balance.holds, balance
