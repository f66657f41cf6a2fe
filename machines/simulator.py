"""Simulated type B and C machines: the interface boards (SMIBs) of issue 5, speaking the gateway's protocol.

Two parts:

- ``MachineBrain``: the pure decision logic of one machine, driven by the caller's clock (``now`` in
  seconds, any monotonic origin). It decides when to play (never faster than the type's minimum game time: C
  2.5 s, B 3 s, times ``pace_scale``), what to bet (whole credits of the denomination), what the game pays
  (a paytable returning 90 %), when a progressive hits (rare, seeded), when to send a meter snapshot, when
  to lock itself (no ``progressive`` broadcast for 5 s) and how to come back (when it hears the broadcasts
  again: ``hello`` after a jittered, exponentially growing delay, so a floor that locked at once does not
  come back as one storm; wait for ``welcome``, play on), what to retry (an unanswered message is re-sent
  with the same seq and content: the gateway answers it ``duplicate``). It obeys the system's
  ``lock``/``unlock`` pushes (hand pay, operator) and keeps the statistics. No network, no Django: the tests
  drive it with a fake clock.
- ``run_simulation``: asyncio, one ``websockets`` client connection per machine, feeding each brain the
  frames it receives and sending what it decides. ``manage.py simulate_machines``, the demo and
  ``bench/machines.py`` run it. Its scaffolding (reconnection backoff, the ramp and run of many devices,
  statistics helpers) is halls.simulation, shared with bingo.electronic.simulator.

Determinism: a machine's RNG is ``random.Random(seed + index)`` (the link's jitter has one of its own);
given the same clock and the same incoming messages, a brain makes the same games, bets, wins and hits.
(``random`` is right here: this is a test device, never a draw; the hall's draws use ``secrets``.)
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import quote

from halls import money, simulation
from halls.money import CENT
from halls.simulation import Clock, percentile

# Minimum seconds per game by machine type (the issue: type C at most one game every 2.5 s, type B 3 s).
MIN_GAME_SECONDS: dict[str, float] = {"B": 3.0, "C": 2.5}
# A machine that hears no progressive broadcast for this long locks itself (issue 5, spec §7).
LINK_TIMEOUT = 5.0
WEIGHT_SCALE = 100_000
# Refusals after which the seq stays taken (the system holds other content under it, or closed it).
SEQ_CONSUMED = frozenset({"seq_reused", "gap_reconciled", "bad_seq"})
# Refusals that mean "not now": the message stays pending and goes again (same seq) after BUSY_RETRY.
TRANSIENT = frozenset({"busy", "server_error"})
BUSY_RETRY = 1.0
# The resync hello after a lock-up (the protocol's expectation, see machines.protocol): a uniform delay in
# [0, window); the window starts at RESYNC_FIRST and doubles with every lock-up in a row (one within
# RESYNC_CALM of the last recovery) and every hello left unanswered, up to RESYNC_MAX.
RESYNC_FIRST = 2.0
RESYNC_MAX = 32.0
RESYNC_CALM = 60.0

# (multiplier of the bet, weight out of WEIGHT_SCALE). Return: sum(multiplier * weight) / WEIGHT_SCALE
# = 90,000 / 100,000 = 90 %, hit frequency 30.66 %. A plausible slot paytable, not an approved one.
PAYTABLE: tuple[tuple[int, int], ...] = (
    (1, 15_000),
    (2, 10_000),
    (5, 4_000),
    (10, 1_000),
    (20, 500),
    (50, 100),
    (100, 50),
    (500, 10),
)


def paytable_return(paytable: Sequence[tuple[int, int]] = PAYTABLE) -> Decimal:
    """The paytable's theoretical return to player, exact (0.9 for PAYTABLE)."""
    return Decimal(sum(mult * weight for mult, weight in paytable)) / WEIGHT_SCALE


# --- configuration -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Meters:
    """The machine's own meters (what a meters snapshot reports)."""

    coin_in: Decimal = Decimal("0.00")
    coin_out: Decimal = Decimal("0.00")
    jackpots_paid: Decimal = Decimal("0.00")
    credits: Decimal = Decimal("0.00")
    games_played: int = 0


@dataclass(frozen=True)
class MachineProfile:
    """Who a simulated machine is. ``index`` makes its RNG (seed + index) and staggers its first game;
    ``next_seq``/``meters`` let a machine resume where an earlier run of it stopped."""

    index: int
    asset: str
    machine_type: str = "C"
    denomination: Decimal = Decimal("0.20")
    bet_credits: tuple[int, ...] = (1, 2, 3, 5, 10)
    software_version: str = "SIM-1.0"
    next_seq: int = 1
    meters: Meters = field(default_factory=Meters)


@dataclass(frozen=True)
class SimConfig:
    """Behaviour shared by every machine of a run."""

    seed: int = 0
    # Multiplies the minimum game time (0.5 = twice as fast as the type allows: benchmarks only).
    pace_scale: float = 1.0
    # Extra thinking time per game, a uniform fraction of the game time (0 = always at the minimum).
    think: float = 0.25
    meters_every: int = 50  # plays between meter snapshots (0: never)
    hit_probability: float = 1 / 20_000  # per game, when the machine knows its levels
    link_timeout: float = LINK_TIMEOUT
    # Re-send an unanswered message after this long (same seq, same content). On a live connection a
    # late reply is late, not lost (TCP): early re-sends would only add to a busy gateway's queue. After a
    # reconnection everything unanswered goes again at once (see _on_welcome).
    ack_timeout: float = 30.0
    # A heartbeat when nothing was sent for this long and nothing waits for an answer (the link watch
    # marks a machine silent after 5 s; a game every 2.5-3 s keeps it alive by itself).
    heartbeat_every: float = 3.0
    # The resync hello's backoff window: first, and most (seconds); see RESYNC_FIRST.
    resync_first: float = RESYNC_FIRST
    resync_max: float = RESYNC_MAX
    max_outstanding: int = 16  # unanswered messages a board buffers before it stops playing
    bill: Decimal = Decimal("20.00")  # what the player inserts when the credits do not cover a bet
    cash_out_above: Decimal = Decimal("200.00")
    measure_from: float = -math.inf  # statistics count from this clock value on (a benchmark's warm-up)


# --- statistics ----------------------------------------------------------------------------------------


@dataclass
class MachineStats:
    """What one machine saw. Latencies and intervals are seconds; counts are counts."""

    # Counters of the measured window (messages first sent from config.measure_from on) ...
    plays_sent: int = 0  # distinct plays (a retry is not a new play)
    plays_accepted: int = 0
    plays_duplicate: int = 0
    plays_rejected: int = 0
    other_sent: int = 0  # meters, hits, events
    other_accepted: int = 0
    other_rejected: int = 0
    retries: int = 0
    late_replies: int = 0  # replies for a seq already answered (the answer to a retry)
    busy: int = 0  # "not now" refusals (the message went again)
    rejected_codes: dict[str, int] = field(default_factory=dict)
    lockups: int = 0  # link-loss lock-ups
    recoveries: int = 0  # resynchronised after a lock-up
    locks_received: int = 0  # lock pushes from the system
    hits_sent: int = 0
    hits_accepted: int = 0
    hand_pay_amount: Decimal = Decimal(0)
    broadcasts: int = 0
    connects: int = 0
    disconnects: int = 0
    # ... and of the whole run. Bets of every play the system stored (accepted or duplicate), from the
    # first play: what the pool must have received.
    plays_sent_all: int = 0
    plays_stored_all: int = 0
    bets_stored: Decimal = Decimal(0)
    reply_latencies: list[float] = field(default_factory=list)
    broadcast_intervals: list[float] = field(default_factory=list)
    broadcast_delays: list[float] = field(default_factory=list)  # system's "at" to arrival (wall clock)
    broadcast_seconds: dict[int, int] = field(default_factory=dict)  # whole second -> broadcasts heard


# --- the brain -----------------------------------------------------------------------------------------


@dataclass
class _Pending:
    message: dict[str, Any]
    first_sent: float
    last_sent: float
    measured: bool
    bet: Decimal | None = None  # plays only
    win: Decimal | None = None


class MachineBrain:
    """One simulated machine's decisions. Feed it ``on_connect``/``on_disconnect``, every received
    message (``on_message``) and clock ticks (``tick``, at the latest by ``next_deadline()``); each
    returns the messages to send, in order."""

    def __init__(self, profile: MachineProfile, config: SimConfig, *, now: float) -> None:
        if profile.machine_type not in MIN_GAME_SECONDS:
            raise ValueError(f"machine type must be B or C, not {profile.machine_type!r}")
        if config.pace_scale <= 0:
            raise ValueError("pace_scale must be positive")
        self.profile = profile
        self.config = config
        self.rng = random.Random(config.seed + profile.index)
        # The link's own randomness (resync and reconnection jitter): games stay the same whatever the link.
        self.link_rng = random.Random(f"link:{config.seed}:{profile.index}")
        self.stats = MachineStats()
        self.min_interval = MIN_GAME_SECONDS[profile.machine_type] * config.pace_scale
        self.next_seq = max(1, profile.next_seq)
        m = profile.meters
        self.coin_in, self.coin_out, self.jackpots_paid = m.coin_in, m.coin_out, m.jackpots_paid
        self.credits, self.games_played = m.credits, m.games_played
        self.game_counter = m.games_played
        self.pending: dict[int, _Pending] = {}
        self.levels: dict[str, Decimal] = {}
        # Connection and locks.
        self.connected = False
        self.welcomed = False
        self.linked = False  # in a link group: broadcasts expected (welcome levels or a broadcast heard)
        self.link_locked = False  # locked itself: no broadcast for link_timeout
        self.resync_sent = False  # hello sent after broadcasts returned, waiting for the welcome
        self.resync_at: float | None = None  # when the next resync hello goes (jittered backoff)
        self.resync_tries = 0  # doublings of the backoff window: lock-ups in a row, unanswered hellos
        self.resync_sent_at = -math.inf
        self.recovered_at = -math.inf  # clock of the last recovery (a lock-up soon after it is "in a row")
        self.server_lock = ""  # "" or the reason the system gave (hand_pay, operator, link_lost, ...)
        self.hit_in_flight: int | None = None  # seq of a hit awaiting its reply: no play meanwhile
        self.draining = False  # stop playing; only retries until every message is answered
        self.last_broadcast: float = now
        self.last_sent: float = now
        self.last_play_at: float | None = None
        # Stagger the first game over one game time so N machines do not start in step.
        self.next_play_at = now + self.rng.uniform(0, self.min_interval)
        self.wakeup = False  # set when a received message moved a deadline earlier

    # --- what the machine may do -------------------------------------------------------------------

    @property
    def locked(self) -> bool:
        return self.link_locked or bool(self.server_lock)

    def can_play(self) -> bool:
        return (
            self.connected
            and self.welcomed
            and not self.locked
            and not self.draining
            and self.hit_in_flight is None
            and len(self.pending) < self.config.max_outstanding
        )

    def game_interval(self) -> float:
        """Seconds from this game's start to the next: the minimum plus some thinking time."""
        extra = self.rng.uniform(0, self.config.think) if self.config.think > 0 else 0.0
        return self.min_interval * (1 + extra)

    def choose_bet(self) -> Decimal:
        return (self.profile.denomination * self.rng.choice(self.profile.bet_credits)).quantize(CENT)

    def spin(self, bet: Decimal) -> Decimal:
        """The game's win (whole cents, a multiple of the bet) from the paytable."""
        roll = self.rng.randrange(WEIGHT_SCALE)
        for multiplier, weight in PAYTABLE:
            if roll < weight:
                return (bet * multiplier).quantize(CENT)
            roll -= weight
        return Decimal("0.00")

    def choose_level(self) -> str:
        """A level to hit, rarer the bigger it is (weight 1/amount)."""
        names = sorted(self.levels)
        weights = [1 / max(float(self.levels[name]), 1.0) for name in names]
        return self.rng.choices(names, weights=weights)[0]

    # --- sending --------------------------------------------------------------------------------------

    def _measured(self, now: float) -> bool:
        return now >= self.config.measure_from

    def _stored_message(
        self, message: dict[str, Any], now: float, bet: Decimal | None = None, win: Decimal | None = None
    ) -> dict[str, Any]:
        seq = self.next_seq
        self.next_seq += 1
        message["seq"] = seq
        self.pending[seq] = _Pending(message, now, now, self._measured(now), bet, win)
        self.last_sent = now
        return message

    def hello(self, now: float) -> dict[str, Any]:
        self.last_sent = now
        return {
            "type": "hello",
            "last_seq": self.next_seq - 1,
            "software_version": self.profile.software_version,
        }

    def _meters_message(self, now: float) -> dict[str, Any]:
        if self._measured(now):
            self.stats.other_sent += 1
        return self._stored_message(
            {
                "type": "meters",
                "coin_in": money.text_cents(self.coin_in),
                "coin_out": money.text_cents(self.coin_out),
                "jackpots_paid": money.text_cents(self.jackpots_paid),
                "credits": money.text_cents(self.credits),
                "games_played": self.games_played,
            },
            now,
        )

    def play(self, now: float) -> list[dict[str, Any]]:
        """One game: the play, and maybe a progressive hit and a meter snapshot."""
        bet = self.choose_bet()
        if self.credits < bet:
            self.credits += self.config.bill * math.ceil(bet / self.config.bill)
        win = self.spin(bet)
        self.credits = self.credits - bet + win
        if self.credits > self.config.cash_out_above:
            self.credits = Decimal("0.00")  # the player cashes out
        self.coin_in += bet
        self.coin_out += win
        self.games_played += 1
        self.game_counter += 1
        game_id = f"g-{self.game_counter}"
        out = [
            self._stored_message(
                {
                    "type": "play",
                    "game_id": game_id,
                    "bet": money.text_cents(bet),
                    "win": money.text_cents(win),
                },
                now,
                bet,
                win,
            )
        ]
        self.stats.plays_sent_all += 1
        if self._measured(now):
            self.stats.plays_sent += 1
        self.last_play_at = now
        self.next_play_at = now + self.game_interval()
        if self.levels and self.rng.random() < self.config.hit_probability:
            hit = self._stored_message({"type": "hit", "level": self.choose_level(), "game_id": game_id}, now)
            self.hit_in_flight = hit["seq"]
            self.stats.hits_sent += 1
            if self._measured(now):
                self.stats.other_sent += 1
            out.append(hit)
        if self.config.meters_every and self.games_played % self.config.meters_every == 0:
            out.append(self._meters_message(now))
        return out

    # --- the clock ------------------------------------------------------------------------------------

    def tick(self, now: float) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        self._watch_link(now)
        if self.connected and self.resync_at is not None and now >= self.resync_at:
            out.append(self._resync(now))
        if not self.connected or self.link_locked:
            return out  # the link is down: nothing goes out until broadcasts return (then hello)
        if self.welcomed:
            for seq, pending in self.pending.items():
                if now - pending.last_sent >= self.config.ack_timeout:
                    pending.last_sent = now
                    self.stats.retries += 1
                    self.last_sent = now
                    out.append(self.pending[seq].message)
        if self.can_play() and now >= self.next_play_at:
            out.extend(self.play(now))
        if (
            self.welcomed
            and not out
            and not self.pending
            and now - self.last_sent >= self.config.heartbeat_every
        ):
            self.last_sent = now
            out.append({"type": "heartbeat"})
        return out

    def resync_window(self) -> float:
        return min(self.config.resync_max, self.config.resync_first * 2.0**self.resync_tries)

    def _schedule_resync(self, now: float, *, again: bool = False) -> None:
        """The resync hello, after a uniform delay in [0, window): N machines that locked together spread
        their hellos over the window instead of sending them in the same millisecond. `again`: the last
        hello went unanswered (the window doubles); else a lock after a calm spell starts afresh."""
        if not again and now - self.recovered_at > RESYNC_CALM:
            self.resync_tries = 0
        if self.resync_at is None:
            self.resync_at = now + self.link_rng.uniform(0, self.resync_window())
            self.wakeup = True

    def _resync(self, now: float) -> dict[str, Any]:
        """Send the scheduled hello. Unanswered after ack_timeout, another goes after a doubled window."""
        self.resync_at = None
        self.resync_sent = True
        self.resync_sent_at = now
        self.resync_tries += 1
        return self.hello(now)

    def _watch_link(self, now: float) -> None:
        if self.linked and not self.link_locked and now - self.last_broadcast >= self.config.link_timeout:
            self.link_locked = True
            self.resync_sent = False
            self.resync_at = None
            if self._measured(now):
                self.stats.lockups += 1

    def next_deadline(self, now: float) -> float:
        """The latest clock value by which ``tick`` must run again."""
        deadlines = [now + 1.0]
        if self.connected and self.resync_at is not None:
            deadlines.append(self.resync_at)
        if self.linked and not self.link_locked:
            deadlines.append(self.last_broadcast + self.config.link_timeout)
        if self.connected and not self.link_locked and self.welcomed:
            if self.can_play():
                deadlines.append(self.next_play_at)
            if self.pending:
                deadlines.append(min(p.last_sent for p in self.pending.values()) + self.config.ack_timeout)
            deadlines.append(self.last_sent + self.config.heartbeat_every)
        return min(deadlines)

    # --- the connection -------------------------------------------------------------------------------

    def on_connect(self, now: float) -> list[dict[str, Any]]:
        self.connected = True
        self.welcomed = False
        self.stats.connects += 1
        # The link's clock starts with the connection: a machine gets link_timeout to hear a broadcast.
        if not self.link_locked:
            self.last_broadcast = max(self.last_broadcast, now)
        self.resync_sent = False  # the resync is the hello sent after a broadcast is heard again
        self.resync_at = None
        return [self.hello(now)]

    def on_disconnect(self, now: float) -> None:
        if self.connected:
            self.stats.disconnects += 1
        self.connected = False
        self.welcomed = False

    def on_message(
        self, message: dict[str, Any], now: float, wall: float | None = None
    ) -> list[dict[str, Any]]:
        kind = message.get("type")
        if kind == "progressive":
            return self._on_progressive(message, now, wall)
        if kind == "ack":
            return self._on_ack(message, now)
        if kind == "welcome":
            return self._on_welcome(message, now)
        if kind == "lock":
            return self._on_lock(message, now)
        if kind == "unlock":
            self.server_lock = ""
            self.next_play_at = max(self.next_play_at, now + self.min_interval)
            self.wakeup = True
        return []

    def _on_progressive(
        self, message: dict[str, Any], now: float, wall: float | None
    ) -> list[dict[str, Any]]:
        measured = self._measured(now)
        if measured:
            stats = self.stats
            stats.broadcasts += 1
            if self.linked:  # also the gap that locked it: that is the one that matters
                stats.broadcast_intervals.append(now - self.last_broadcast)
            second = int(now)
            stats.broadcast_seconds[second] = stats.broadcast_seconds.get(second, 0) + 1
            at = message.get("at")
            if wall is not None and isinstance(at, int | float):
                stats.broadcast_delays.append(wall - at / 1000)
        self.last_broadcast = now
        self._set_levels(message.get("levels"))
        unavailable = message.get("unavailable")  # wide-area levels withdrawn (jackpots.widearea): not shown
        if isinstance(unavailable, list):
            for name in unavailable:
                self.levels.pop(str(name), None)
        if not self.linked:
            self.linked = True
            self.wakeup = True
        if self.link_locked and self.connected:
            if not self.resync_sent:
                self._schedule_resync(now)
            elif now - self.resync_sent_at >= self.config.ack_timeout:
                self.resync_sent = False  # the hello went unanswered: another, after a longer wait
                self._schedule_resync(now, again=True)
        return []

    def _set_levels(self, levels: Any) -> None:
        if not isinstance(levels, list):
            return
        for row in levels:
            if isinstance(row, dict):
                name = row.get("level", row.get("name"))
                try:
                    amount = Decimal(str(row.get("amount", "0")))
                except ArithmeticError:
                    continue
                if isinstance(name, str) and amount.is_finite():
                    self.levels[name] = amount

    def _on_welcome(self, message: dict[str, Any], now: float) -> list[dict[str, Any]]:
        first = not self.welcomed
        self.welcomed = True
        self.wakeup = True
        last_seq = message.get("last_seq")
        if isinstance(last_seq, int) and not isinstance(last_seq, bool):
            # The system has seen seqs up to last_seq: never reuse one (a restarted board resumes above).
            self.next_seq = max(self.next_seq, last_seq + 1)
        levels = message.get("levels")
        if isinstance(levels, list) and levels:
            self._set_levels(levels)
            if not self.linked:
                self.linked = True
                self.last_broadcast = max(self.last_broadcast, now)
        if self.resync_sent:
            self.recovered_at = now  # a resync answered: a lock-up soon after this one counts in a row
        state = message.get("state")
        if state == "in_service":
            self.server_lock = ""
        elif state == "locked":
            self.server_lock = str(message.get("lock_reason") or "operator")
        elif state == "out_of_service":
            self.server_lock = "out_of_service"
        if self.link_locked and self.resync_sent and now - self.last_broadcast < self.config.link_timeout:
            self.link_locked = False
            self.resync_sent = False
            self.recovered_at = now
            if self._measured(now):
                self.stats.recoveries += 1
            self.next_play_at = max(self.next_play_at, now)
        elif not self.link_locked:
            self.resync_sent = False
        out: list[dict[str, Any]] = []
        if first and self.pending:
            # A new connection: whatever was in flight on the old one may be lost. Same seq, same content.
            for pending in self.pending.values():
                pending.last_sent = now
                self.stats.retries += 1
                out.append(pending.message)
            self.last_sent = now
        return out

    def _on_lock(self, message: dict[str, Any], now: float) -> list[dict[str, Any]]:
        reason = str(message.get("reason") or "operator")
        self.server_lock = reason
        self.stats.locks_received += 1
        if reason == "link_lost" and self.connected and not self.link_locked:
            # The system lost us although we hear it: resynchronise (hello clears its link_lost lock),
            # after the same jittered backoff (the watch may have marked a whole floor at once).
            self._schedule_resync(now)
        return []

    def _on_ack(self, message: dict[str, Any], now: float) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        seq = message.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool):
            return out  # a reply to a heartbeat or to an unreadable frame: nothing pending
        pending = self.pending.pop(seq, None)
        if pending is None:
            self.stats.late_replies += 1
            return out
        stats = self.stats
        status = message.get("status")
        if status == "rejected" and message.get("code") in TRANSIENT:
            # The gateway is busy: nothing was taken. Same seq, same content, a little later.
            self.pending[seq] = pending
            pending.last_sent = now - self.config.ack_timeout + BUSY_RETRY
            stats.busy += 1
            return out
        stored = status in ("accepted", "duplicate")
        kind = pending.message["type"]
        if kind == "play" and stored and pending.bet is not None:
            stats.plays_stored_all += 1
            stats.bets_stored += pending.bet
        if pending.measured:
            stats.reply_latencies.append(now - pending.first_sent)
            if kind == "play":
                if status == "accepted":
                    stats.plays_accepted += 1
                elif status == "duplicate":
                    stats.plays_duplicate += 1
                else:
                    stats.plays_rejected += 1
            elif stored:
                stats.other_accepted += 1
            else:
                stats.other_rejected += 1
        if not stored:
            code = str(message.get("code") or "rejected")
            stats.rejected_codes[code] = stats.rejected_codes.get(code, 0) + 1
            if kind == "play" and pending.bet is not None and pending.win is not None:
                # The board refused the game (the machine was locked): it did not happen on the meters.
                self.coin_in -= pending.bet
                self.coin_out -= pending.win
                self.games_played -= 1
            if seq == self.next_seq - 1 and code not in SEQ_CONSUMED:
                # A refused message consumes no seq: the next message reuses it (no gap for the system).
                self.next_seq = seq
            if code in ("machine_locked", "machine_out_of_service") and not self.server_lock:
                # Locked without being told (a push lost): stop, and learn why from the welcome.
                self.server_lock = "locked" if code == "machine_locked" else "out_of_service"
                if self.connected:
                    out.append(self.hello(now))
        if kind == "hit" and seq == self.hit_in_flight:
            self.hit_in_flight = None
            self.wakeup = True
            if stored:
                stats.hits_accepted += 1
                try:
                    amount = Decimal(str(message.get("amount", "0")))
                except ArithmeticError:
                    amount = Decimal(0)
                if amount.is_finite():
                    self.jackpots_paid += amount
                    stats.hand_pay_amount += amount
                if message.get("lock"):
                    self.server_lock = str(message["lock"])
        return out

    # --- shutting down ---------------------------------------------------------------------------------

    def drain(self) -> None:
        """Stop playing; keep answering and retrying until nothing is pending."""
        self.draining = True

    @property
    def drained(self) -> bool:
        return not self.pending

    def take_wakeup(self) -> bool:
        woke, self.wakeup = self.wakeup, False
        return woke


# --- reports -------------------------------------------------------------------------------------------


@dataclass
class Report:
    """The statistics of a run (of one process, or merged), JSON-able for a benchmark's processes."""

    machines: int = 0
    seconds: float = 0.0  # the measured window
    counters: dict[str, int] = field(default_factory=dict)
    rejected_codes: dict[str, int] = field(default_factory=dict)
    bets_stored: Decimal = Decimal(0)
    hand_pay_amount: Decimal = Decimal(0)
    reply_latencies: list[float] = field(default_factory=list)
    broadcast_intervals: list[float] = field(default_factory=list)
    broadcast_delays: list[float] = field(default_factory=list)
    # Per machine: max broadcast interval, and how many of its measured whole seconds heard fewer than 2.
    max_interval_per_machine: list[float] = field(default_factory=list)
    thin_seconds_per_machine: list[int] = field(default_factory=list)
    min_per_second_per_machine: list[int] = field(default_factory=list)  # fewest heard in a whole second
    rate_per_machine: list[float] = field(default_factory=list)
    unanswered: int = 0  # messages still pending at the end (their outcome is unknown)
    wall_start: float = 0.0  # the measured window in wall-clock time (time.time())
    wall_end: float = 0.0

    COUNTERS = (
        "plays_sent",
        "plays_accepted",
        "plays_duplicate",
        "plays_rejected",
        "other_sent",
        "other_accepted",
        "other_rejected",
        "retries",
        "late_replies",
        "busy",
        "lockups",
        "recoveries",
        "locks_received",
        "hits_sent",
        "hits_accepted",
        "broadcasts",
        "connects",
        "disconnects",
        "plays_sent_all",
        "plays_stored_all",
    )

    @classmethod
    def from_brains(cls, brains: Iterable[MachineBrain], *, start: float, end: float) -> Report:
        report = cls(seconds=max(end - start, 0.0), counters=dict.fromkeys(cls.COUNTERS, 0))
        first, last = math.ceil(start), math.floor(end)  # whole seconds fully inside the window
        for brain in brains:
            s = brain.stats
            report.machines += 1
            for name in cls.COUNTERS:
                report.counters[name] += getattr(s, name)
            simulation.add_counts(report.rejected_codes, s.rejected_codes)
            report.bets_stored += s.bets_stored
            report.hand_pay_amount += s.hand_pay_amount
            report.reply_latencies.extend(s.reply_latencies)
            report.broadcast_intervals.extend(s.broadcast_intervals)
            report.broadcast_delays.extend(s.broadcast_delays)
            report.max_interval_per_machine.append(max(s.broadcast_intervals, default=math.inf))
            whole = range(first, last)
            report.thin_seconds_per_machine.append(
                sum(1 for sec in whole if s.broadcast_seconds.get(sec, 0) < 2)
            )
            report.min_per_second_per_machine.append(
                min((s.broadcast_seconds.get(sec, 0) for sec in whole), default=0)
            )
            heard = sum(s.broadcast_seconds.get(sec, 0) for sec in whole)
            report.rate_per_machine.append(heard / len(whole) if len(whole) else math.nan)
            report.unanswered += len(brain.pending)
        return report

    def merge(self, other: Report) -> Report:
        merged = Report(
            machines=self.machines + other.machines,
            seconds=max(self.seconds, other.seconds),
            counters=simulation.merged_counts(self.COUNTERS, self.counters, other.counters),
            bets_stored=self.bets_stored + other.bets_stored,
            hand_pay_amount=self.hand_pay_amount + other.hand_pay_amount,
            reply_latencies=self.reply_latencies + other.reply_latencies,
            broadcast_intervals=self.broadcast_intervals + other.broadcast_intervals,
            broadcast_delays=self.broadcast_delays + other.broadcast_delays,
            max_interval_per_machine=self.max_interval_per_machine + other.max_interval_per_machine,
            thin_seconds_per_machine=self.thin_seconds_per_machine + other.thin_seconds_per_machine,
            min_per_second_per_machine=self.min_per_second_per_machine + other.min_per_second_per_machine,
            rate_per_machine=self.rate_per_machine + other.rate_per_machine,
            unanswered=self.unanswered + other.unanswered,
            wall_start=min(self.wall_start, other.wall_start) if self.wall_start else other.wall_start,
            wall_end=max(self.wall_end, other.wall_end),
        )
        for codes in (self.rejected_codes, other.rejected_codes):
            simulation.add_counts(merged.rejected_codes, codes)
        return merged

    def to_json(self) -> dict[str, Any]:
        def rounded(values: list[float]) -> list[float]:
            return [round(v, 5) for v in values]

        return {
            "machines": self.machines,
            "seconds": self.seconds,
            "counters": self.counters,
            "rejected_codes": self.rejected_codes,
            "bets_stored": str(self.bets_stored),
            "hand_pay_amount": str(self.hand_pay_amount),
            "reply_latencies": rounded(self.reply_latencies),
            "broadcast_intervals": rounded(self.broadcast_intervals),
            "broadcast_delays": rounded(self.broadcast_delays),
            "max_interval_per_machine": [
                v if math.isfinite(v) else -1 for v in self.max_interval_per_machine
            ],
            "thin_seconds_per_machine": self.thin_seconds_per_machine,
            "min_per_second_per_machine": self.min_per_second_per_machine,
            "rate_per_machine": self.rate_per_machine,
            "unanswered": self.unanswered,
            "wall_start": self.wall_start,
            "wall_end": self.wall_end,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        return cls(
            machines=int(data["machines"]),
            seconds=float(data["seconds"]),
            counters={str(k): int(v) for k, v in data["counters"].items()},
            rejected_codes={str(k): int(v) for k, v in data["rejected_codes"].items()},
            bets_stored=Decimal(data["bets_stored"]),
            hand_pay_amount=Decimal(data["hand_pay_amount"]),
            reply_latencies=[float(v) for v in data["reply_latencies"]],
            broadcast_intervals=[float(v) for v in data["broadcast_intervals"]],
            broadcast_delays=[float(v) for v in data["broadcast_delays"]],
            max_interval_per_machine=[
                float(v) if v >= 0 else math.inf for v in data["max_interval_per_machine"]
            ],
            thin_seconds_per_machine=[int(v) for v in data["thin_seconds_per_machine"]],
            min_per_second_per_machine=[int(v) for v in data.get("min_per_second_per_machine", [])],
            rate_per_machine=[float(v) for v in data["rate_per_machine"]],
            unanswered=int(data["unanswered"]),
            wall_start=float(data.get("wall_start", 0.0)),
            wall_end=float(data.get("wall_end", 0.0)),
        )

    def lines(self) -> list[str]:
        """A human summary."""
        c = self.counters
        secs = self.seconds or math.nan
        lat = sorted(self.reply_latencies)
        gaps = sorted(self.broadcast_intervals)
        delays = sorted(self.broadcast_delays)
        worst = sorted(self.max_interval_per_machine)
        rates = sorted(r for r in self.rate_per_machine if not math.isnan(r))
        starved = sum(1 for n in self.thin_seconds_per_machine if n)
        ms = 1000.0
        out = [
            f"machines:        {self.machines}, measured {self.seconds:.1f} s",
            f"plays:           sent {c['plays_sent']}, accepted {c['plays_accepted']}, "
            f"duplicate {c['plays_duplicate']}, rejected {c['plays_rejected']}, "
            f"retries {c['retries']}, unanswered at the end {self.unanswered}",
            f"rate:            {c['plays_accepted'] / secs:,.1f} plays/s accepted "
            f"({c['plays_sent'] / secs:,.1f} sent)",
            f"other messages:  sent {c['other_sent']}, accepted {c['other_accepted']}, "
            f"rejected {c['other_rejected']}; late replies {c['late_replies']}, busy refusals {c['busy']}",
            f"reply latency:   p50 {percentile(lat, 50) * ms:.1f} ms, p99 {percentile(lat, 99) * ms:.1f} ms, "
            f"max {(lat[-1] if lat else math.nan) * ms:.1f} ms",
            f"broadcasts:      {c['broadcasts']} heard; interval p50 {percentile(gaps, 50) * ms:.0f} ms, "
            f"p99 {percentile(gaps, 99) * ms:.0f} ms, max {(gaps[-1] if gaps else math.nan) * ms:.0f} ms; "
            f"delivery delay p50 {percentile(delays, 50) * ms:.0f} ms, "
            f"p99 {percentile(delays, 99) * ms:.0f} ms",
            f"per machine:     worst interval p50 {percentile(worst, 50) * ms:.0f} ms, "
            f"max {(worst[-1] if worst else math.nan) * ms:.0f} ms; broadcasts/s min "
            f"{(rates[0] if rates else math.nan):.2f}, p50 {percentile(rates, 50):.2f}; "
            f"machines with a second under 2 broadcasts: {starved} of {self.machines}",
            f"link:            lock-ups {c['lockups']}, recoveries {c['recoveries']}, "
            f"lock pushes {c['locks_received']}; connects {c['connects']}, disconnects {c['disconnects']}",
            f"hits:            sent {c['hits_sent']}, accepted {c['hits_accepted']}, "
            f"paid {self.hand_pay_amount}",
            f"whole run:       plays sent {c['plays_sent_all']}, stored {c['plays_stored_all']}, "
            f"bets stored {self.bets_stored}",
        ]
        if self.rejected_codes:
            codes = ", ".join(f"{k} {v}" for k, v in sorted(self.rejected_codes.items()))
            out.append(f"rejections:      {codes}")
        return out


# --- the network driver --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Credentials:
    """How a simulated machine connects: its profile and its device token."""

    profile: MachineProfile
    token: str
    venue_id: int | None = None


def machine_url(base: str, credentials: Credentials) -> str:
    """``ws://host:port`` + ``/ws/machines/<asset>/?token=...`` (the gateway's route)."""
    url = f"{base.rstrip('/')}/ws/machines/{quote(credentials.profile.asset, safe='')}/"
    url += f"?token={quote(credentials.token, safe='')}"
    if credentials.venue_id is not None:
        url += f"&venue={credentials.venue_id}"
    return url


async def _send_all(ws: Any, messages: list[dict[str, Any]]) -> None:
    for message in messages:
        await ws.send(json.dumps(message, separators=(",", ":")))


async def _reader(ws: Any, brain: MachineBrain, wake: asyncio.Event, clock: Clock) -> None:
    try:
        async for message in simulation.frames(ws):
            out = brain.on_message(message, clock(), time.time())
            if out:
                await _send_all(ws, out)
            if brain.take_wakeup() or (brain.draining and brain.drained):
                wake.set()
    finally:
        wake.set()  # the connection ended: the ticker reconnects at once


async def run_machine(
    brain: MachineBrain,
    url: str,
    *,
    stop: asyncio.Event,
    drain_seconds: float = 10.0,
    clock: Clock = time.monotonic,
    on_error: Callable[[str], None] | None = None,
) -> None:
    """Drive one brain over a WebSocket until ``stop`` is set, then drain (answer what is pending,
    at most ``drain_seconds``). Reconnects with a backoff when the connection fails or drops."""
    wake = asyncio.Event()
    # The link's own randomness: boards dropped together do not reconnect together.
    backoff = simulation.Backoff(brain.link_rng)
    drain_until: float | None = None
    while True:
        if stop.is_set():
            if drain_until is None:
                brain.drain()
                drain_until = clock() + drain_seconds
            if brain.drained or clock() >= drain_until:
                return
        try:
            async with simulation.socket(url, open_timeout=20, max_size=65_536, max_queue=64) as ws:
                backoff.reset()
                await _send_all(ws, brain.on_connect(clock()))
                reader = asyncio.create_task(_reader(ws, brain, wake, clock))
                try:
                    while not reader.done():
                        now = clock()
                        if stop.is_set():
                            if drain_until is None:
                                brain.drain()
                                drain_until = now + drain_seconds
                            if brain.drained or now >= drain_until:
                                break
                        await _send_all(ws, brain.tick(now))
                        delay = max(0.001, brain.next_deadline(clock()) - clock())
                        if stop.is_set() or drain_until is not None:
                            delay = min(delay, 0.1)
                        wake.clear()
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(delay):
                                await wake.wait()
                finally:
                    reader.cancel()
                    with contextlib.suppress(asyncio.CancelledError, *simulation.connection_errors()):
                        await reader
                if drain_until is not None and (brain.drained or clock() >= drain_until):
                    return
        except simulation.connection_errors() as exc:
            if on_error is not None:
                on_error(f"{brain.profile.asset}: {exc!r}")
        brain.on_disconnect(clock())
        pause = backoff.next()
        if drain_until is not None:
            if brain.drained or clock() >= drain_until:
                return
            await asyncio.sleep(min(pause, max(0.0, drain_until - clock())))
        else:
            await simulation.pause(pause, stop)


async def run_simulation(
    machines: Sequence[Credentials],
    base_url: str | Sequence[str],
    config: SimConfig,
    *,
    duration: float | None = None,
    stop: asyncio.Event | None = None,
    warmup: float = 0.0,
    connect_rate: float = 200.0,
    drain_seconds: float = 10.0,
    on_error: Callable[[str], None] | None = None,
    brains_out: list[MachineBrain] | None = None,
) -> Report:
    """Run every machine until ``duration`` seconds have passed (or ``stop`` is set), drain, and report.

    Connections open at ``connect_rate`` per second (a thousand at once is a connection storm, not a
    hall); statistics count from ``warmup`` seconds after the last machine connected. Several base URLs
    (servers) take the machines in turn.
    """
    bases = [base_url] if isinstance(base_url, str) else list(base_url)
    clock = time.monotonic
    stop = stop or asyncio.Event()
    ramp = simulation.Ramp(clock(), len(machines), connect_rate, warmup)
    measure_from = ramp.measure_from
    config = dataclasses.replace(config, measure_from=measure_from)
    brains = [MachineBrain(m.profile, config, now=ramp.connects_at(i)) for i, m in enumerate(machines)]
    if brains_out is not None:
        brains_out.extend(brains)

    async def drive(i: int, brain: MachineBrain) -> None:
        url = machine_url(bases[i % len(bases)], machines[i])
        await run_machine(brain, url, stop=stop, drain_seconds=drain_seconds, clock=clock, on_error=on_error)

    end = await simulation.run_devices(brains, drive, ramp=ramp, stop=stop, duration=duration, clock=clock)
    report = Report.from_brains(brains, start=measure_from, end=max(end, measure_from))
    to_wall = time.time() - clock()
    report.wall_start, report.wall_end = measure_from + to_wall, max(end, measure_from) + to_wall
    return report
