"""The simulated machine's decisions (machines.simulator.MachineBrain), driven by a fake clock: no network.

Pace per type, bets in the denomination, the paytable's return, the 5-second link-loss lock-up and the
resync on recovery, hand-pay locks, retries with the same seq, and seeded determinism.
"""

from __future__ import annotations

import itertools
import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halls.simulation import percentile
from machines.simulator import (
    LINK_TIMEOUT,
    MIN_GAME_SECONDS,
    PAYTABLE,
    RESYNC_FIRST,
    RESYNC_MAX,
    MachineBrain,
    MachineProfile,
    Meters,
    Report,
    SimConfig,
    paytable_return,
)

LEVELS = [{"level": "Mayor", "amount": "200.00"}, {"level": "Mini", "amount": "25.00"}]


def broadcast(at_ms: int = 0) -> dict[str, Any]:
    return {"type": "progressive", "group": "G", "levels": LEVELS, "at": at_ms}


def welcome(last_seq: int = 0, state: str = "in_service", **extra: Any) -> dict[str, Any]:
    return {
        "type": "welcome",
        "machine": "M1",
        "state": state,
        "last_seq": last_seq,
        "levels": LEVELS,
        **extra,
    }


def ack(seq: int, status: str = "accepted", **extra: Any) -> dict[str, Any]:
    return {"type": "ack", "seq": seq, "status": status, **extra}


class Harness:
    """A brain on a fake clock, connected and welcomed, hearing a broadcast every 0.4 s, answering every
    stored message at once (unless told not to)."""

    def __init__(self, machine_type: str = "C", *, seed: int = 7, index: int = 0, **config: Any) -> None:
        profile = MachineProfile(index=index, asset="M1", machine_type=machine_type)
        self.config = SimConfig(seed=seed, **config)
        self.now = 0.0
        self.brain = MachineBrain(profile, self.config, now=self.now)
        self.sent: list[tuple[float, dict[str, Any]]] = []
        self.auto_ack = True
        self.broadcasting = True
        self.next_broadcast = 0.0
        self.deliver(self.brain.on_connect(self.now))
        self.receive(welcome())

    def deliver(self, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            self.sent.append((self.now, message))
        if self.auto_ack:
            for message in messages:
                if "seq" in message:
                    self.deliver(self.brain.on_message(ack(message["seq"]), self.now))

    def receive(self, message: dict[str, Any]) -> None:
        self.deliver(self.brain.on_message(message, self.now))

    def run(self, seconds: float, step: float = 0.05) -> None:
        end = self.now + seconds
        while self.now < end - 1e-9:
            self.now = round(self.now + step, 6)
            if self.broadcasting and self.now >= self.next_broadcast:
                self.receive(broadcast())
                self.next_broadcast = self.now + 0.4
            self.deliver(self.brain.tick(self.now))

    def of_type(self, kind: str) -> list[tuple[float, dict[str, Any]]]:
        """Messages of a kind as first sent (a retry re-sends the same message: not a new one)."""
        seen: set[int] = set()
        out = []
        for t, m in self.sent:
            if m["type"] == kind and id(m) not in seen:
                seen.add(id(m))
                out.append((t, m))
        return out


# --- pace ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("machine_type", ["B", "C"])
def test_games_never_come_faster_than_the_types_minimum(machine_type: str) -> None:
    h = Harness(machine_type)
    h.run(300)
    times = [t for t, _ in h.of_type("play")]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    minimum = MIN_GAME_SECONDS[machine_type]
    assert len(times) > 300 / (minimum * 1.25) * 0.9  # it does play, near the pace
    assert min(gaps) >= minimum - 1e-9
    # 0.25 think time: the mean game time is the minimum × 1.125, give or take.
    assert minimum * 1.05 < sum(gaps) / len(gaps) < minimum * 1.2


@given(
    machine_type=st.sampled_from(["B", "C"]),
    pace_scale=st.floats(min_value=0.2, max_value=3.0),
    think=st.floats(min_value=0.0, max_value=1.0),
    seed=st.integers(min_value=0, max_value=10**6),
)
@settings(max_examples=40, deadline=None)
def test_pace_scale_scales_the_minimum_and_nothing_beats_it(
    machine_type: str, pace_scale: float, think: float, seed: int
) -> None:
    h = Harness(machine_type, seed=seed, pace_scale=pace_scale, think=think)
    h.run(60, step=0.01)
    times = [t for t, _ in h.of_type("play")]
    floor = MIN_GAME_SECONDS[machine_type] * pace_scale
    assert times
    assert all(b - a >= floor - 0.011 for a, b in itertools.pairwise(times))  # one clock step


def test_think_zero_plays_exactly_at_the_minimum_for_a_benchmark() -> None:
    h = Harness("C", pace_scale=0.5, think=0.0)
    h.run(30, step=0.01)
    times = [t for t, _ in h.of_type("play")]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(1.25 - 1e-9 <= g <= 1.25 + 0.011 for g in gaps)


# --- money ---------------------------------------------------------------------------------------------


def test_the_paytable_returns_ninety_percent() -> None:
    assert paytable_return() == Decimal("0.9")
    assert all(mult > 0 and weight > 0 for mult, weight in PAYTABLE)


def test_bets_are_whole_credits_of_the_denomination_and_wins_multiples_of_the_bet() -> None:
    profile = MachineProfile(index=3, asset="B7", machine_type="B", denomination=Decimal("0.10"))
    brain = MachineBrain(profile, SimConfig(seed=1), now=0.0)
    total_bet = total_win = Decimal(0)
    for _ in range(200_000):
        bet = brain.choose_bet()
        win = brain.spin(bet)
        assert bet / profile.denomination in profile.bet_credits
        assert win == 0 or (win / bet) in {Decimal(m) for m, _ in PAYTABLE}
        total_bet += bet
        total_win += win
    assert Decimal("0.85") < total_win / total_bet < Decimal("0.95")


def test_meters_follow_the_plays_and_snapshots_come_every_n_plays() -> None:
    h = Harness("C", meters_every=10)
    h.run(120)
    plays = [m for _, m in h.of_type("play")]
    snapshots = [m for _, m in h.of_type("meters")]
    assert len(snapshots) == len(plays) // 10
    last = snapshots[-1]
    covered = plays[: last["games_played"]]
    assert last["games_played"] == 10 * len(snapshots)
    assert Decimal(last["coin_in"]) == sum(Decimal(p["bet"]) for p in covered)
    assert Decimal(last["coin_out"]) == sum(Decimal(p["win"]) for p in covered)
    # Every stored message has its own seq, in order, from 1; every message fits the protocol's 4 KB.
    seqs = [m["seq"] for _, m in h.sent if "seq" in m]
    assert seqs == list(range(1, len(seqs) + 1))
    assert all(len(json.dumps(m).encode()) <= 4096 for _, m in h.sent)


def test_a_machine_resumes_its_seqs_and_meters() -> None:
    meters = Meters(coin_in=Decimal("100.00"), coin_out=Decimal("90.00"), games_played=400)
    profile = MachineProfile(index=0, asset="M1", next_seq=501, meters=meters)
    brain = MachineBrain(profile, SimConfig(meters_every=1), now=0.0)
    brain.on_connect(0.0)
    brain.on_message(welcome(last_seq=650), 0.0)  # the system saw more than this board remembers
    out = brain.play(1.0)
    assert out[0]["seq"] == 651
    assert out[-1]["type"] == "meters" and out[-1]["games_played"] == 401
    assert Decimal(out[-1]["coin_in"]) == Decimal("100.00") + Decimal(out[0]["bet"])


# --- link loss -------------------------------------------------------------------------------------------


def test_no_broadcast_for_five_seconds_locks_and_stops_everything() -> None:
    h = Harness("C")
    h.run(20)
    assert not h.brain.locked and h.of_type("play")
    h.broadcasting = False
    last_heard = h.brain.last_broadcast
    h.run(last_heard + LINK_TIMEOUT - 0.1 - h.now)
    assert not h.brain.link_locked  # 4.9 s of silence: still playing
    h.run(0.1)
    assert h.brain.link_locked and h.brain.stats.lockups == 1  # 5 s: locked
    locked_at = h.now
    sent_before = len(h.sent)
    h.run(30)
    # Locked: no plays, no heartbeats, no retries until the link returns.
    assert len(h.sent) == sent_before
    assert h.brain.stats.lockups == 1
    assert all(t < locked_at for t, _ in h.of_type("play"))


def test_when_broadcasts_return_it_says_hello_and_plays_only_after_the_welcome() -> None:
    h = Harness("C")
    h.run(10)
    h.broadcasting = False
    h.run(8)
    assert h.brain.link_locked
    h.auto_ack = True
    before = len(h.sent)
    h.receive(broadcast())
    # Not at once: within the first backoff window (a floor that locked together spreads its hellos).
    assert h.sent[before:] == []
    heard_at = h.now
    h.broadcasting = True
    h.run(RESYNC_FIRST + 0.1, step=0.05)
    assert [m["type"] for _, m in h.sent[before:]] == ["hello"]
    sent_at, hello = h.sent[-1]
    assert heard_at <= sent_at <= heard_at + RESYNC_FIRST + 0.05
    assert hello["last_seq"] == h.brain.next_seq - 1
    h.run(5, step=0.05)  # broadcasts back, but no welcome yet: still locked, still silent
    assert h.brain.link_locked
    assert [m["type"] for _, m in h.sent[before:]] == ["hello"]
    h.receive(welcome(last_seq=hello["last_seq"]))
    assert not h.brain.locked and h.brain.stats.recoveries == 1
    h.run(10)
    assert any(t > h.now - 10 for t, _ in h.of_type("play"))


def _resync_delays(h: Harness, lockups: int, *, answer: bool = True) -> list[float]:
    """Lock the brain `lockups` times in a row (broadcasts stop 6 s, then return); the delay from the
    first broadcast heard again to its hello, each time. Welcomes answer the hellos when `answer`."""
    delays = []
    for _ in range(lockups):
        h.broadcasting = False
        h.run(LINK_TIMEOUT + 1)
        assert h.brain.link_locked
        before = len(h.sent)
        h.broadcasting, h.next_broadcast = True, h.now
        heard = h.now + 0.05
        while not any(m["type"] == "hello" for _, m in h.sent[before:]):
            h.run(0.05)
        delays.append(next(t for t, m in h.sent[before:] if m["type"] == "hello") - heard)
        if answer:
            h.receive(welcome(last_seq=h.brain.next_seq - 1))
            assert not h.brain.link_locked
            h.run(1)
    return delays


def test_repeated_lockups_back_off_exponentially_with_jitter_up_to_a_cap() -> None:
    """Lock-ups in a row double the window the resync hello is drawn from, up to RESYNC_MAX; machines
    of one floor draw different delays; after a calm minute the window starts afresh."""
    windows = [min(RESYNC_MAX, RESYNC_FIRST * 2**k) for k in range(7)]
    floor = [Harness("C", index=i) for i in range(12)]
    per_machine = [_resync_delays(h, len(windows)) for h in floor]
    for delays in per_machine:
        assert all(0 <= d <= w + 0.06 for d, w in zip(delays, windows, strict=True))
    for k, window in enumerate(windows):
        spread = [delays[k] for delays in per_machine]
        assert len({round(d, 2) for d in spread}) > len(floor) // 2  # jittered, not in step
        assert max(spread) > window / 3  # the window is used, not only its start
    h = floor[0]
    h.run(61)  # calm: the next lock-up is a first one again
    (delay,) = _resync_delays(h, 1)
    assert delay <= RESYNC_FIRST + 0.06


def test_an_unanswered_resync_hello_goes_again_after_a_longer_wait() -> None:
    h = Harness("C", ack_timeout=4.0)
    h.run(10)
    (first,) = _resync_delays(h, 1, answer=False)
    assert first <= RESYNC_FIRST + 0.06
    before = len(h.sent)
    h.run(4.0 + 2 * RESYNC_FIRST + 0.5)  # no welcome: after ack_timeout, a hello from a doubled window
    assert [m["type"] for _, m in h.sent[before:]] == ["hello"]
    assert h.brain.link_locked
    h.receive(welcome(last_seq=h.brain.next_seq - 1))
    assert not h.brain.link_locked and h.brain.stats.recoveries == 1


def test_a_machine_outside_any_link_never_locks_for_lack_of_broadcasts() -> None:
    brain = MachineBrain(MachineProfile(index=0, asset="X"), SimConfig(), now=0.0)
    brain.on_connect(0.0)
    brain.on_message({"type": "welcome", "state": "in_service", "last_seq": 0, "levels": []}, 0.0)
    for k in range(1, 400):
        brain.tick(k * 0.1)
    assert not brain.link_locked and brain.stats.plays_sent > 0


def test_the_system_declaring_the_link_lost_gets_a_hello() -> None:
    h = Harness("C")
    h.run(5)
    before = len(h.sent)
    h.receive({"type": "lock", "reason": "link_lost"})
    assert h.brain.locked and h.sent[before:] == []  # the hello follows within the backoff window
    h.run(RESYNC_FIRST + 0.1)
    assert [m["type"] for _, m in h.sent[before:]] == ["hello"]
    h.receive(welcome(last_seq=h.brain.next_seq - 1))
    assert not h.brain.locked


# --- hand pay and operator locks -------------------------------------------------------------------------


def test_a_progressive_hit_locks_for_hand_pay_until_the_unlock() -> None:
    h = Harness("C", hit_probability=1.0)
    h.auto_ack = False
    h.run(3)
    plays, hits = h.of_type("play"), h.of_type("hit")
    assert len(plays) == 1 and len(hits) == 1
    hit = hits[0][1]
    assert hit["game_id"] == plays[0][1]["game_id"] and hit["level"] in {"Mayor", "Mini"}
    h.run(6)  # the hit is unanswered: no further game
    assert len(h.of_type("play")) == 1
    h.receive(ack(plays[0][1]["seq"]))
    h.receive(ack(hit["seq"], amount="210.37", lock="hand_pay"))
    assert h.brain.server_lock == "hand_pay" and h.brain.jackpots_paid == Decimal("210.37")
    h.auto_ack = True
    h.run(20)
    assert len(h.of_type("play")) == 1
    assert h.of_type("heartbeat")  # locked for hand pay, but the link is up: it stays online
    h.receive({"type": "unlock"})
    h.run(5)
    assert len(h.of_type("play")) > 1


def test_operator_lock_and_a_locked_welcome_stop_play() -> None:
    h = Harness("C")
    h.run(5)
    h.receive({"type": "lock", "reason": "operator"})
    n = len(h.of_type("play"))
    h.run(10)
    assert len(h.of_type("play")) == n
    h.receive({"type": "unlock"})
    h.run(5)
    assert len(h.of_type("play")) > n
    h.receive(welcome(last_seq=h.brain.next_seq - 1, state="locked", lock_reason="hand_pay"))
    assert h.brain.server_lock == "hand_pay"


def test_a_play_refused_as_locked_is_undone_on_the_meters_and_asks_for_the_state() -> None:
    h = Harness("C")
    h.auto_ack = False
    h.run(3)
    play = h.of_type("play")[-1][1]
    coin_in, games = h.brain.coin_in, h.brain.games_played
    h.receive(ack(play["seq"], "rejected", code="machine_locked"))
    assert h.brain.coin_in == coin_in - Decimal(play["bet"]) and h.brain.games_played == games - 1
    assert h.brain.locked and h.sent[-1][1]["type"] == "hello"
    assert h.brain.stats.plays_rejected == 1 and h.brain.stats.rejected_codes == {"machine_locked": 1}
    # The refused seq was the last one sent: the next message reuses it, so the system sees no gap.
    h.receive(welcome(last_seq=play["seq"] - 1))
    h.run(5)
    after = [m for _, m in h.of_type("play") if m is not play]
    assert after[0]["seq"] == play["seq"] and after[0]["game_id"] != play["game_id"]


def test_a_seq_the_system_holds_is_never_reused() -> None:
    h = Harness("C")
    h.auto_ack = False
    h.run(3)
    play = h.of_type("play")[-1][1]
    h.receive(ack(play["seq"], "rejected", code="seq_reused"))
    assert h.brain.next_seq == play["seq"] + 1


# --- retries and idempotency ----------------------------------------------------------------------------


def test_an_unanswered_message_is_resent_with_the_same_seq_and_content() -> None:
    h = Harness("C", ack_timeout=2.0, think=0.0)
    h.auto_ack = False
    h.run(2.6)
    first = h.of_type("play")[0][1]
    text = json.dumps(first, sort_keys=True)
    h.run(3.0)
    resent = [m for _, m in h.sent if m.get("seq") == first["seq"]]
    assert len(resent) >= 2 and all(json.dumps(m, sort_keys=True) == text for m in resent)
    assert h.brain.stats.retries >= 1
    # The first answer settles it; the answer to the retry is a late reply, counted once as such.
    h.receive(ack(first["seq"], "duplicate"))
    h.receive(ack(first["seq"], "duplicate"))
    assert h.brain.stats.plays_duplicate == 1 and h.brain.stats.late_replies == 1
    assert h.brain.stats.bets_stored == Decimal(first["bet"])


def test_a_busy_refusal_is_not_an_answer_the_message_goes_again() -> None:
    h = Harness("C", ack_timeout=5.0)
    h.auto_ack = False
    h.run(3)
    play = h.of_type("play")[-1][1]
    h.receive(ack(play["seq"], "rejected", code="busy"))
    assert play["seq"] in h.brain.pending and h.brain.stats.plays_rejected == 0
    h.run(1.5)
    assert [m for _, m in h.sent].count(play) == 2  # sent again about a second later, unchanged
    h.receive(ack(play["seq"]))
    assert h.brain.stats.plays_accepted == 1 and h.brain.stats.busy == 1


def test_a_reconnection_resends_everything_unanswered_after_the_welcome() -> None:
    h = Harness("C", think=0.0)
    h.auto_ack = False
    h.run(8)
    pending = sorted(h.brain.pending)
    assert len(pending) >= 2
    h.brain.on_disconnect(h.now)
    h.sent.clear()
    h.deliver(h.brain.on_connect(h.now))
    assert [m["type"] for _, m in h.sent] == ["hello"]
    h.receive(welcome(last_seq=pending[0]))
    assert [m["seq"] for _, m in h.sent[1:]] == pending


def test_draining_stops_play_and_finishes_when_everything_is_answered() -> None:
    h = Harness("C")
    h.auto_ack = False
    h.run(10)
    h.brain.drain()
    n = len(h.of_type("play"))
    h.run(5)
    assert len(h.of_type("play")) == n and not h.brain.drained
    for seq in list(h.brain.pending):
        h.receive(ack(seq))
    assert h.brain.drained


# --- determinism and reports ----------------------------------------------------------------------------


def test_the_same_seed_and_clock_make_the_same_machine() -> None:
    a, b = (
        Harness("B", seed=42, index=5, hit_probability=0.01),
        Harness("B", seed=42, index=5, hit_probability=0.01),
    )
    a.run(200)
    b.run(200)
    assert a.sent == b.sent
    c = Harness("B", seed=42, index=6, hit_probability=0.01)
    c.run(200)
    assert [m for _, m in c.of_type("play")] != [m for _, m in a.of_type("play")]


def test_statistics_and_report_round_trip() -> None:
    h = Harness("C", measure_from=10.0)
    h.run(60)
    s = h.brain.stats
    assert s.plays_sent == s.plays_accepted > 0
    assert s.plays_sent_all > s.plays_sent  # the first 10 s are not measured
    assert s.bets_stored == sum(Decimal(m["bet"]) for _, m in h.of_type("play"))
    assert s.broadcast_intervals and max(s.broadcast_intervals) < 0.5
    report = Report.from_brains([h.brain], start=10.0, end=60.0)
    assert report.thin_seconds_per_machine == [0] and report.rate_per_machine[0] >= 2
    again = Report.from_json(json.loads(json.dumps(report.to_json())))
    assert again.counters == report.counters and again.bets_stored == report.bets_stored
    merged = report.merge(again)
    assert merged.machines == 2 and merged.counters["plays_sent"] == 2 * s.plays_sent
    assert any("plays/s accepted" in line for line in merged.lines())


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert (
        percentile(values, 50) == 50.0 and percentile(values, 99) == 99.0 and percentile(values, 100) == 100.0
    )
    assert percentile([], 50) != percentile([], 50)  # nan
