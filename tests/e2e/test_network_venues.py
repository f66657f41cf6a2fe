"""A network of venues as real processes on one machine: a central and three venue installations, each on its
own PostgreSQL database, linked through TCP proxies the test can cut (tests/e2e/link_support.py).

- The central: uvicorn (config.asgi, HALL_ROLE=central: the venues' messages and sockets), a Celery worker
  (the simultaneous game's draw and decisions) and beat (the sales' deadline, stalled steps, overdue rounds).
- Each venue: `manage.py run_link` (its outbox up, the central's stream down) and a Celery worker (it applies
  the simultaneous game's entries hall by hall), its own Redis key prefixes.
- Each installation is driven through the services its doors call, from a long-lived `manage.py shell` of
  its own (link_support.Driver running tests/e2e/network_actions.py).

The first test plays an interconnected prize (IB-01) and a simultaneous game (SB-01) on a whole network: the
prize's pool exact to the cent across the venues (the central's balancing report holds, its contributions
are each venue's), each prize paid once, at the winner's venue. The second cuts one venue's line mid-session:
its local games go on, the central shows it offline, what it owes the network queues in its outbox, it stops
selling into the network game whose deadline passes, and when the line returns the outbox drains and every
pool reconciles, nothing counted twice.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings

from tests.e2e import link_support as ls
from tests.ports import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]  # the first run migrates the template

HALLS = (1, 2, 3)
D = Decimal


def lic(n: int) -> str:
    return f"ML-B-{n:04d}"


# The central's periodic tasks this test does not use, kept quiet (a solo worker runs one task at a time).
QUIET = dict.fromkeys(
    [
        "HALL_POOL_SEAL_SECONDS",
        "HALL_TABLE_AUTOPLAY_SECONDS",
        "HALL_METER_SECONDS",
        "HALL_PROGRAM_SCHEDULE_SECONDS",
        "HALL_MACHINE_BROADCAST_SECONDS",
        "HALL_MACHINE_WATCH_SECONDS",
        "HALL_ELECTRONIC_TICK_SECONDS",
        "HALL_AUDIT_ANCHOR_SECONDS",
        "HALL_TICKET_EXPIRY_SECONDS",
        "HALL_AUTOPLAY_SECONDS",
    ],
    "3600",
)


@dataclass
class Net:
    central: ls.Driver
    venues: dict[int, ls.Driver]
    proxies: dict[int, ls.CuttableProxy]
    databases: dict[int, str]
    processes: list[ls.Process] = field(default_factory=list)

    def logs(self) -> str:
        return "\n".join(
            [*(p.log() for p in self.processes), self.central.log(), *(d.log() for d in self.venues.values())]
        )

    def wait(self, condition: Callable[[], Any], timeout: float, what: str) -> Any:
        return ls.wait_for(condition, timeout, what, self.logs)

    def at_venues(self, function: str, halls: tuple[int, ...] = HALLS, **kwargs: Any) -> dict[int, Any]:
        """`function` at several venues at once."""
        for n in halls:
            self.venues[n].send(function, **kwargs)
        return {n: self.venues[n].receive() for n in halls}

    def each_venue(self, calls: dict[int, tuple[str, dict[str, Any]]]) -> dict[int, Any]:
        """A call of its own at each venue, at once."""
        for n, (function, kwargs) in calls.items():
            self.venues[n].send(function, **kwargs)
        return {n: self.venues[n].receive() for n in calls}


def _celery(name: str, args: list[str], env: dict[str, str], directory: Path) -> ls.Process:
    return ls.Process(name, [sys.executable, "-m", "celery", "-A", "config", *args], env, directory)


def _worker(name: str, env: dict[str, str], directory: Path, *more: str) -> ls.Process:
    return _celery(
        name,
        [
            "worker", "-Q", "celery,draws", "--pool=solo", "-c", "1", "-l", "warning",
            "-n", f"{name}-{uuid.uuid4().hex[:6]}@%h",
            "--without-mingle", "--without-gossip", "--without-heartbeat", *more,
        ],
        env,
        directory,
    )  # fmt: skip


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Net]:
    directory = tmp_path_factory.mktemp("network")
    stem = f"{ls.base_name()}_net"
    port = free_port()
    run = f"e2e-net-{port}"
    # This run's databases are its own (a run that died left its own behind: dropped, not waited for).
    ls.drop_databases_later(*ls.databases_like(stem))
    names = {0: f"{stem}{port}_central", **{n: f"{stem}{port}_venue{n}" for n in HALLS}}
    up = time.monotonic()
    ls.create_databases(*names.values())
    print(f"\n4 databases in {time.monotonic() - up:.1f} s")
    up = time.monotonic()

    def env(n: int, **more: str) -> dict[str, str]:
        prefix = f"{run}-{n}"
        (directory / prefix).mkdir(exist_ok=True)
        return {
            "REDIS_URL": str(settings.REDIS_URL),
            "CHANNEL_PREFIX": prefix,
            "HALL_CACHE_PREFIX": f"{prefix}.cache",
            "HALL_BROKER_PREFIX": f"{prefix}.broker:",
            "HALL_DETECTOR_DIR": str(directory / prefix / "detector"),
            "HALL_AUDIT_KEY": f"e2e-audit-key-{n}",
            "HALL_AUDIT_ANCHOR_DIR": str(directory / prefix / "anchors"),
            "HALL_ROLE": "central" if n == 0 else "venue",
            "HALL_LOG_LEVEL": "WARNING",
            **QUIET,
            **more,
        }

    central_env = env(
        0,
        HALL_LINK_OFFLINE_SECONDS="30",
        HALL_SIMULTANEOUS_CLAIM_SECONDS="0.5",
        HALL_SIMULTANEOUS_CLOSE_SECONDS="1",
        HALL_NETWORK_TICK_SECONDS="2",
        HALL_NETWORK_METER_SECONDS="1",
        HALL_DRAW_STALL_GRACE_SECONDS="3",
        HALL_REAPER_SECONDS="5",
        HALL_POOL_FOLD_SECONDS="5",
    )
    proxies: dict[int, ls.CuttableProxy] = {}
    net = Net(
        central=ls.Driver("central-shell", names[0], directory, **central_env),
        venues={n: ls.Driver(f"venue{n}-shell", names[n], directory, **env(n)) for n in HALLS},
        proxies=proxies,
        databases=names,
    )
    try:
        central_db = ls.database_url(names[0])
        full = ls.base_env(DATABASE_URL=central_db, **central_env)
        net.processes += [
            ls.Process(
                "central-web",
                [
                    *(sys.executable, "-m", "uvicorn", "config.asgi:application"),
                    *("--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"),
                ],
                full,
                directory,
            ),
            # Its beat embedded (-B: a child forked from the worker, one start less on a busy machine).
            _worker("central-worker", full, directory, "-B", "-s", str(directory / "beat-schedule")),
        ]
        net.processes += [
            _worker(
                f"venue{n}-worker", ls.base_env(DATABASE_URL=ls.database_url(names[n]), **env(n)), directory
            )
            for n in HALLS
        ]
        for n in HALLS:
            proxies[n] = ls.CuttableProxy(port)
        for n in HALLS:
            net.venues[n].send("setup_venue", n=n)
        issued = net.central.call("setup_central", halls=list(HALLS))
        for n in HALLS:
            net.venues[n].receive()
        for n in HALLS:
            venue_env = ls.base_env(DATABASE_URL=ls.database_url(names[n]), **env(n))
            net.processes += [
                ls.Process(
                    f"venue{n}-link",
                    [sys.executable, "manage.py", "run_link"],
                    {
                        **venue_env,
                        "HALL_CENTRAL_URL": f"http://127.0.0.1:{proxies[n].port}",
                        "HALL_LINK_VENUE": lic(n),
                        "HALL_LINK_KEY": issued[lic(n)]["key"],
                        "HALL_LINK_SECRET": issued[lic(n)]["secret"],
                        "HALL_LINK_POLL_SECONDS": "0.1",
                        "HALL_LINK_BACKOFF_MAX_SECONDS": "1",
                        "HALL_LINK_HEARTBEAT_SECONDS": "5",
                        "HALL_LINK_CATCHUP_SECONDS": "5",
                    },
                    directory,
                ),
            ]
        # Every venue's hello applied and its socket open.
        net.wait(
            lambda: all(
                s["state"] == "online" and s["socket"] for s in net.central.call("link_states").values()
            ),
            90,
            "every venue online",
        )
        print(
            f"\n{len(net.processes)} processes and 4 shells up in {time.monotonic() - up:.1f} s ({directory})"
        )
        yield net
    finally:
        down = time.monotonic()
        ls.stop_all([*reversed(net.processes), net.central, *net.venues.values()])
        print(f"\nthe processes stopped in {time.monotonic() - down:.1f} s")
        for proxy in proxies.values():
            proxy.close()
        if not os.environ.get("HALL_E2E_KEEP"):  # set: the databases stay, to be looked at
            ls.drop_databases_later(*names.values())
        client = redis.Redis.from_url(str(settings.REDIS_URL))
        for key in client.scan_iter(f"{run}-*"):
            client.delete(key)
        print(f"\nthe network down in {time.monotonic() - down:.1f} s")


def test_an_interconnected_prize_and_a_simultaneous_game_across_three_venues(net: Net) -> None:
    started = time.monotonic()
    # --- IB-01: a round; each hall's game contributes 10 % of its sales; halls 1 and 2 bingo at ball 15 ---
    assert net.central.call("open_round", wait_seconds=600) == 1
    net.wait(
        lambda: all(r == [1] for r in net.at_venues("known_rounds").values()), 30, "round 1 at the venues"
    )
    sold = net.each_venue(
        {1: ("ib_sell", {"cards": 30, "first": 1}), 2: ("ib_sell", {"cards": 20, "first": 1}),
         3: ("ib_sell", {"cards": 25, "first": 1})}
    )  # fmt: skip
    assert {n: (s["round"], D(s["to_meter"])) for n, s in sold.items()} == {
        1: (1, D("6")),
        2: (1, D("4")),
        3: (1, D("5")),
    }
    ordinals = net.each_venue(
        {1: ("ib_bingo", {"game": sold[1]["game"], "serial": 7, "fillers": 0}),
         2: ("ib_bingo", {"game": sold[2]["game"], "serial": 3, "fillers": 0}),
         3: ("ib_bingo", {"game": sold[3]["game"], "serial": 7, "fillers": 5})}
    )  # fmt: skip
    assert ordinals == {1: 15, 2: 15, 3: 20}
    rnd = net.wait(
        lambda: (r := net.central.call("round_state", number=1))["state"] == "decided" and r,
        30,
        "round 1 decided",
    )
    assert (rnd["rule"], rnd["ordinal"], rnd["missing"]) == ("all_reported", 15, [])
    # The pool: the seed and each venue's contribution, to the cent; the central's balancing report holds.
    venues = net.wait(
        lambda: (v := net.at_venues("venue_state")) and all(s["backlog"] == 0 for s in v.values()) and v,
        30,
        "the venues' outboxes acknowledged",
    )
    for n in HALLS:
        mine = venues[n]["round_games"]["1"]
        assert rnd["contributions"][lic(n)]["to_meter"] == mine["to_meter"] and mine["reported"]
        assert rnd["contributions"][lic(n)]["game"] == mine["game"] == sold[n]["game"]
    assert (
        D(rnd["ledger_to_meter"]) == sum(D(v["round_games"]["1"]["to_meter"]) for v in venues.values()) == 15
    )
    assert rnd["ledger_count"] == 3 and all(n == 1 for n, _ in rnd["ledger_by_source"].values())
    assert rnd["balance_holds"] and D(rnd["pool_contributions"]) == 15
    assert (D(rnd["pool_amount"]), D(rnd["share"]), D(rnd["remainder"])) == (
        D("115.01"),
        D("57.50"),
        D("0.01"),
    )
    shares = rnd["shares"]
    assert [(s[1], s[2], s[3]) for s in shares] == [(lic(1), "A-0007", "57.50"), (lic(2), "A-0003", "57.50")]
    # Each share paid once, at its own venue's cashier; the meter back at its seed plus the remainder.
    venues = net.wait(
        lambda: (
            (v := net.at_venues("venue_state")) and all(s["meter"] == ["100.01"] for s in v.values()) and v
        ),
        30,
        "the decision and the meter at every venue",
    )
    assert venues[1]["payables"] == [[f"network.share:{shares[0][0]}", "accumulated", "57.50"]]
    assert venues[2]["payables"] == [[f"network.share:{shares[1][0]}", "accumulated", "57.50"]]
    assert venues[3]["payables"] == []
    print(f"\ninterconnected round across 3 venues: {time.monotonic() - started:.1f} s")

    # --- SB-01: one game, 10 strips allocated per hall, sold, closed network-wide, drawn at the central ---
    started = time.monotonic()
    net.central.call("sb_create", code="SB-1", strips=[10, 10, 10], deadline_seconds=300, pace="0.1")
    net.wait(lambda: set(net.at_venues("sb_place", code="SB-1").values()) == {"selling"}, 30, "SB-1 on sale")
    counts = {1: 60, 2: 45, 3: 50}
    sales = net.each_venue(
        {n: ("sb_sell", {"code": "SB-1", "offset": 0, "cards": c}) for n, c in counts.items()}
    )
    assert all("operation" in s for s in sales.values()), sales
    net.wait(
        lambda: all(h["reports"] for h in net.central.call("sb_state", code="SB-1")["halls"].values()),
        30,
        "the sales reported",
    )
    game = net.central.call("sb_close_and_draw", code="SB-1")
    assert (game["state"], game["cards_sold"], D(game["sales_total"])) == ("drawing", 155, D("155.00"))
    # Line 10 %, Bingo 40 %, every hall's Bingo 10 % of the network's sales.
    figures = (D(game["line_prize"]), D(game["bingo_prize"]), D(game["hall_prize"]))
    assert figures == (D("15.50"), D("62.00"), D("15.50"))
    # The central draws (its worker, a ball every 0.1 s); each hall's caller claims what its cards have.
    deadline = time.monotonic() + 120
    while (state := _central_game(net, "SB-1"))[0] != "closed":
        assert time.monotonic() < deadline, f"SB-1 not over: {state}\n{net.logs()}"
        looks = net.at_venues("sb_claim_complete", code="SB-1")
        if os.environ.get("HALL_E2E_KEEP"):
            print(f"{time.monotonic() - started:6.1f} s central {state} halls {looks}")
        time.sleep(0.3)
    game = net.central.call("sb_state", code="SB-1")
    halls = net.wait(
        lambda: (
            (h := net.at_venues("sb_hall", code="SB-1"))
            and all(x["state"] == "closed" for x in h.values())
            and h
        ),
        30,
        "SB-1 closed in every hall",
    )
    venues = net.at_venues("venue_state")
    # Sales: what each hall's drawer took is what the central counted for it.
    for n in HALLS:
        assert D(game["halls"][lic(n)]["amount"]) == D(halls[n]["taken"]) == counts[n]
    # Prizes: the network Line and Bingo once each, every hall's own Bingo once (unless the balls ran out
    # first: a hall whose caller lagged that far); each winner's share a payable at the winner's own venue,
    # nothing else and nothing twice.
    prizes = {(p["kind"], p["scope"]): p for p in game["prizes"]}
    halls_won = {scope for kind, scope in prizes if kind == "hall"}
    assert {("line", "network"), ("bingo", "network")} <= set(prizes), game
    assert set(prizes) <= {("line", "network"), ("bingo", "network"), *(("hall", lic(n)) for n in HALLS)}
    assert halls_won == {lic(n) for n in HALLS} or game["balls"] == 90, game
    won = {(c[0], c[1]) for c in game["claims"] if c[5] == "won"}
    paid: dict[tuple[str, str], list[Decimal]] = {}
    for n in HALLS:
        mine = [p for p in venues[n]["payables"] if p[0].startswith("simultaneous:SB-1:")]
        for source, _kind, amount in mine:
            _, _code, kind, claim = source.split(":")
            assert (lic(n), int(claim)) in won
            scope = lic(n) if kind == "hall" else "network"
            paid.setdefault((kind, scope), []).append(D(amount))
        assert len(halls[n]["awards"]) == len(mine)
    assert set(paid) == set(prizes)
    for key, prize in prizes.items():
        assert paid[key] == [D(prize["share"])] * prize["winners"], (key, prize, paid)
        assert D(prize["share"]) * prize["winners"] + D(prize["remainder"]) == D(prize["amount"])
        assert D(prize["amount"]) == figures[("line", "bingo", "hall").index(key[0])]
    print(
        f"simultaneous game across 3 venues: {game['balls']} balls, {len(game['claims'])} claims,"
        f" {len(prizes)} prizes, {time.monotonic() - started:.1f} s"
    )


def _central_game(net: Net, code: str) -> tuple[str, int]:
    """The network game's state and balls drawn, read straight from the central's database (cheap)."""
    with ls.connect(net.databases[0]) as conn:
        row = conn.execute(
            "SELECT state, balls_drawn FROM bingo_simultaneous_networkgame WHERE code = %s", [code]
        ).fetchone()
    assert row is not None
    return str(row[0]), int(row[1])


def test_a_venue_cut_off_mid_session_queues_and_reconciles_when_its_line_returns(net: Net) -> None:
    started = time.monotonic()
    cut = 3
    assert net.central.call("open_round", wait_seconds=600) == 2
    net.central.call("sb_create", code="SB-2", strips=[1, 1, 1], deadline_seconds=18, pace="0.25")
    net.wait(lambda: all(2 in r for r in net.at_venues("known_rounds").values()), 30, "round 2 at the venues")
    net.wait(lambda: set(net.at_venues("sb_place", code="SB-2").values()) == {"selling"}, 30, "SB-2 on sale")
    sales = net.at_venues("sb_sell", code="SB-2", offset=0, cards=2)
    assert all("operation" in s for s in sales.values()), sales
    net.wait(
        lambda: all(h["reports"] for h in net.central.call("sb_state", code="SB-2")["halls"].values()),
        30,
        "the first sales reported",
    )
    before = net.at_venues("venue_state")

    # --- the line of venue 3 cut: it sells on locally (queued), the central shows it offline ---------------
    net.proxies[cut].cut()
    late_sale = net.venues[cut].call("sb_sell", code="SB-2", offset=2, cards=2)
    assert "operation" in late_sale, late_sale
    states = net.wait(
        lambda: (s := net.central.call("link_states"))[lic(cut)]["state"] == "offline" and s,
        30,
        "the central to show venue 3 offline",
    )
    assert [states[lic(n)]["state"] for n in HALLS] == ["online", "online", "offline"]
    # Every hall plays its game of round 2; venue 3's contribution and result wait in its outbox.
    sold = net.each_venue(
        {1: ("ib_sell", {"cards": 20, "first": 31}), 2: ("ib_sell", {"cards": 15, "first": 31}),
         3: ("ib_sell", {"cards": 10, "first": 31})}
    )  # fmt: skip
    assert {n: s["round"] for n, s in sold.items()} == {1: 2, 2: 2, 3: 2}
    ordinals = net.each_venue(
        {1: ("ib_bingo", {"game": sold[1]["game"], "serial": 35, "fillers": 10}),
         2: ("ib_bingo", {"game": sold[2]["game"], "serial": 40, "fillers": 12}),
         3: ("ib_bingo", {"game": sold[3]["game"], "serial": 33, "fillers": 0})}
    )  # fmt: skip
    assert ordinals == {1: 25, 2: 27, 3: 15}
    net.wait(
        lambda: len(net.central.call("round_state", number=2)["results"]) == 2,
        30,
        "the connected halls' results",
    )
    # SB-2's deadline: the central's beat closes the sales with what it counted; venue 3, not having heard,
    # stops selling anyway.
    game = net.wait(
        lambda: (g := net.central.call("sb_state", code="SB-2"))["state"] == "sales_closed" and g,
        40,
        "SB-2 closed by the central's beat",
    )
    assert net.venues[cut].call("sb_sell", code="SB-2", offset=4, cards=1) == {"refused": "sales_closed"}
    assert [game["halls"][lic(n)]["cards"] for n in HALLS] == [2, 2, 2]
    rnd = net.central.call("round_state", number=2)
    assert rnd["state"] == "open" and sorted(rnd["contributions"]) == [lic(1), lic(2)]
    mine = net.venues[cut].call("venue_state")
    assert (
        mine["backlog"] == mine["last"] - before[cut]["last"] == 3
    )  # the sale, the contribution, the result
    assert net.venues[cut].call("sb_hall", code="SB-2")["state"] == "selling"
    assert net.central.call("link_states")[lic(cut)]["state"] == "offline"
    cut_for = time.monotonic()

    # --- the line back: the outbox drains, the round is decided with venue 3, its late sale refunded -------
    net.proxies[cut].restore()
    venues = net.wait(
        lambda: (v := net.at_venues("venue_state")) and all(s["backlog"] == 0 for s in v.values()) and v,
        30,
        "venue 3's outbox drained",
    )
    print(f"\nline of venue 3 back: its outbox drained in {time.monotonic() - cut_for:.1f} s")
    inbox = net.central.call("inbox_state")
    for n in HALLS:  # every message applied exactly once, in order, none missing
        assert inbox[lic(n)]["sequences"] == list(range(1, venues[n]["last"] + 1))
        assert inbox[lic(n)]["applied"] == venues[n]["last"]
    late = [r for r in inbox[lic(cut)]["refused"] if r[0] > before[cut]["last"]]
    assert late == [[before[cut]["last"] + 1, "simultaneous.sale", "network_sales_closed"]]
    assert net.central.call("link_states")[lic(cut)]["state"] == "online"

    rnd = net.wait(
        lambda: (r := net.central.call("round_state", number=2))["state"] == "decided" and r,
        30,
        "round 2 decided",
    )
    assert (rnd["rule"], rnd["ordinal"], rnd["missing"]) == ("all_reported", 15, [])
    for n in HALLS:
        assert rnd["contributions"][lic(n)]["to_meter"] == venues[n]["round_games"]["2"]["to_meter"]
    # Every contribution of both rounds once in the pool's ledger; the pool balances to the cent.
    contributed = sum(D(g["to_meter"]) for v in venues.values() for g in v["round_games"].values())
    assert contributed == 15 + 4 + 3 + 2
    assert rnd["ledger_count"] == 6 and all(n == 1 for n, _ in rnd["ledger_by_source"].values())
    assert D(rnd["ledger_to_meter"]) == D(rnd["pool_contributions"]) == contributed
    assert rnd["balance_holds"]
    assert D(rnd["pool_amount"]) == D(rnd["share"]) == D("100.01") + 9  # round 1's remainder + the seed
    (share,) = rnd["shares"]
    assert share[1:] == [lic(cut), "A-0033", "109.01"]
    # The share paid once, at venue 3's cashier; nothing new at the others.
    shares_paid = f"network.share:{share[0]}"
    venues = net.wait(
        lambda: (
            (v := net.at_venues("venue_state")) and any(p[0] == shares_paid for p in v[cut]["payables"]) and v
        ),
        30,
        "the decision at venue 3",
    )
    new = {n: [p for p in venues[n]["payables"] if p not in before[n]["payables"]] for n in HALLS}
    assert new == {1: [], 2: [], 3: [[shares_paid, "accumulated", "109.01"]]}

    # Venue 3 hears the close: the card it sold while cut off is not in the network game; refunded, it plays.
    hall = net.wait(
        lambda: (h := net.venues[cut].call("sb_hall", code="SB-2"))["state"] == "reconciling" and h,
        30,
        "venue 3 reconciling SB-2",
    )
    assert len(hall["unconfirmed"]) == 2
    assert net.venues[cut].call("sb_refund_unconfirmed", code="SB-2") == [hall["unconfirmed"]]
    hall = net.venues[cut].call("sb_hall", code="SB-2")
    assert hall["state"] == "playing" and D(hall["taken"]) == D(game["halls"][lic(cut)]["amount"]) == 2
    print(f"WAN cut across 3 venues: {time.monotonic() - started:.1f} s")
