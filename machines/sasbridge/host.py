"""The SAS host: the polling cycle that drives one machine on a serial line (machines.sasbridge.line).

Each cycle, at the pace set (``poll_every``; SAS hosts poll a machine every 40-200 ms):

1. the progressive broadcast, when due (every ``broadcast_every``, 0.25 s by default, well inside the
   machine's 5 s timeout) and only while the hall's levels are fresh (heard within ``levels_stale``): when
   the hall stops broadcasting, the bridge stops too and the machine locks itself (exception 0x53), as SAS
   requires; LP 0x80 for one level, 0x86 for several, to the broadcast address 0 (no answer);
2. play control: the shutdown (LP 0x01) when the hall locks the machine or is out of reach past its window,
   the startup (LP 0x02) when it says the machine is in service again (machines.sasbridge.gate decides;
   sent until the machine ACKs it, again when the machine comes back after not answering); then a remote
   hand-pay reset (LP 0x94) when the hall said the hand pay was paid, a lock of its own;
3. the meters (LP 0x2F) at connect and every ``meters_every``, taken only between games (a read that falls
   inside a game is deferred), checked against the last read (a meter gone backwards is refused, logged and
   counted once) and reconciled with the plays read since (coin-in grown by exactly their bets);
4. a general poll; its exception handled: game start/end (real-time event reporting, enabled by LP 0x0E at
   connect) make a play; a SAS progressive level hit (0x56) is read by LP 0x85 and reported once (its
   identity kept in the journal); a hand pay pending (0x51) is read by LP 0x1B; door, tilt and power events
   are reported; 0x53 (the machine lost the broadcast) is logged and counted.

Bad input: an answer with a bad CRC, a truncated answer, bytes nobody asked for (discarded before each poll),
a machine that does not answer: each logged and counted; a poll that failed is sent again (SAS's implied
NACK: the same poll again, so the machine sends the same exception or answer); an unanswered general poll is
repeated before any other poll until it is answered. The exception is ACKed only after the journal took it.

What is read from the machine goes to the journal (``emit``) with its seq; the hall side sends it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from machines import sas
from machines.sasbridge.counters import Counters
from machines.sasbridge.gate import HALL_LOST, PlayGate
from machines.sasbridge.line import Line

log = logging.getLogger("sasbridge.host")

METER_CODES = (
    sas.METER_TOTAL_COIN_IN,
    sas.METER_TOTAL_COIN_OUT,
    sas.METER_TOTAL_JACKPOT,
    sas.METER_GAMES_PLAYED,
    sas.METER_CURRENT_CREDITS,
)
# The meters that only grow (current credits go up and down).
MONOTONIC = METER_CODES[:4]
EVENT_KINDS = {
    sas.PollEvent.DOOR_OPEN: "door_open",
    sas.PollEvent.DOOR_CLOSED: "door_closed",
    sas.PollEvent.TILT: "tilt",
    sas.PollEvent.POWER_ON: "power_on",
    sas.PollEvent.POWER_OFF: "power_off",
}


@dataclass
class Timing:
    poll_every: float = 0.04
    response_timeout: float = 0.05  # first byte of an answer (SAS: 20 ms; a pty on a loaded host needs more)
    char_timeout: float = 0.02  # between the bytes of one answer (SAS: 5 ms)
    broadcast_every: float = 0.25
    levels_stale: float = 1.0
    meters_every: float = 30.0
    offline_after: int = 5  # polls unanswered in a row before the machine is reported not answering
    play_control_retry: float = 1.0  # an LP 0x01/0x02 the machine NACKed is asked again after this


def cents(value: int) -> str:
    return str((Decimal(value) / 100).quantize(Decimal("0.01")))


class SasHost:
    def __init__(
        self,
        line: Line,
        *,
        address: int,
        denom_cents: int,
        group: int,
        asset: str,
        emit: Callable[..., int],
        remember: Callable[[str], bool],
        counters: Counters,
        timing: Timing | None = None,
        load: Callable[[str], str | None] | None = None,
        save: Callable[[str, str], None] | None = None,
        gate: PlayGate | None = None,
    ) -> None:
        self.line = line
        self.address = address
        self.denom = denom_cents
        self.group = group
        self.asset = asset
        self.emit = emit
        self.remember = remember
        self.counters = counters
        self.timing = timing or Timing()
        self.lock = threading.Lock()
        # From the hall (set by the hall side, read here).
        self.levels: list[tuple[str, int]] = []
        self.levels_at = -1e9
        self.reset_wanted = False
        self.gate = gate or PlayGate(float("inf"), 0.0)  # without one: play control left alone
        # The machine as read.
        self.real_time = False
        self.answering = False
        self.silent_polls = 0
        self.open_game: tuple[int, int] | None = None  # (bet credits, coin-in meter at its start)
        self.last_coin_in: int | None = None  # the coin-in meter as of the last game start seen
        self.last_meters: dict[int, int] | None = None
        self.refused_meters: dict[int, int] | None = None
        self.bets_since_meters = 0
        self.handpay: sas.HandpayInfo | None = None
        self.hit_reported_unpaid = False
        self.machine_enabled: bool | None = None  # as its last ACKed LP 0x01/0x02 left it; None: unknown
        self.play_control_at = 0.0  # no LP 0x01/0x02 before (after a NACK or no answer)
        self.next_broadcast = 0.0
        self.next_meters = 0.0
        self.meters_deferred = False
        self.ack_address = address % sas.MAX_ADDRESS + 1  # the implied ACK's general poll goes there
        # The game in progress is kept with the journal (`save`/`load`): a bridge restarted between a game's
        # start and its end still makes its play.
        self.save = save or (lambda key, value: None)
        kept = load("open_game") if load is not None else None
        if kept:
            bet, coin_in = json.loads(kept)
            self.open_game = (int(bet), int(coin_in))
            self.last_coin_in = int(coin_in)

    # --- from the hall side ---

    def set_levels(self, levels: list[tuple[str, int]]) -> None:
        with self.lock:
            self.levels = levels
            self.levels_at = time.monotonic()

    def request_handpay_reset(self) -> None:
        with self.lock:
            self.reset_wanted = True

    # --- the line ---

    def _transact(self, request: bytes, command: int | None, what: str) -> bytes | None:
        """Send one poll and read its answer; None (counted, logged) when there is no good answer."""
        stray = self.line.discard()
        if stray:
            self.counters.add("unsolicited_bytes", stray)
            log.warning("%d unsolicited byte(s) on the line before %s: discarded", stray, what)
        self.line.send(request, wakeup=True)
        self.counters.add("polls")
        answer = bytearray()
        timeout = self.timing.response_timeout
        while True:
            char = self.line.read(timeout)
            if char is None:
                break
            answer.append(char[0])
            timeout = self.timing.char_timeout
            try:
                need = sas.response_length(command, answer, real_time=self.real_time)
            except sas.SasError:
                need = len(answer)
            if need is not None and len(answer) >= need:
                break
        if not answer:
            self.silent_polls += 1
            self.counters.add("no_answer")
            if self.silent_polls == self.timing.offline_after and self.answering:
                self.answering = False
                self.counters.set("machine_answering", 0)
                log.error("address %d does not answer (%s)", self.address, what)
            return None
        if self.silent_polls >= self.timing.offline_after or not self.answering:
            if not self.answering:
                log.info("address %d answers", self.address)
                self.machine_enabled = None  # perhaps restarted: play control is told again
            self.answering = True
            self.counters.set("machine_answering", 1)
        self.silent_polls = 0
        need = sas.response_length(command, answer[:3], real_time=self.real_time) if len(answer) else None
        if need is not None and len(answer) < need:
            self.counters.add("truncated")
            log.warning("truncated answer to %s: %s", what, answer.hex(" "))
            return None
        return bytes(answer)

    def _long_poll(
        self, request: bytes, command: int, what: str, decode: Callable[[bytes], Any], retries: int = 1
    ) -> Any:
        for _ in range(retries + 1):
            answer = self._transact(request, command, what)
            if answer is None:
                continue
            if len(answer) == 1 and answer[0] == self.address | sas.NACK_BIT:
                self.counters.add("nack")
                log.warning("%s NACKed by address %d", what, self.address)
                return None
            try:
                return decode(answer)
            except sas.SasError as exc:
                self._bad_frame(answer, what, exc)
        return None

    def _bad_frame(self, answer: bytes, what: str, exc: Exception) -> None:
        if len(answer) > 2 and not sas.check_crc(answer):
            self.counters.add("bad_crc")
        else:
            self.counters.add("bad_frame")
        log.warning("bad answer to %s (%s): %s", what, exc, answer.hex(" "))

    # --- the cycle ---

    def connect(self) -> bool:
        """Real-time event reporting on (one try per call); True when the machine ACKed it."""
        answer = self._transact(sas.encode_enable_real_time_events(self.address), 0x0E, "LP 0E")
        if answer is not None and len(answer) == 1 and answer[0] == self.address:
            self.real_time = True
            log.info("address %d: real-time event reporting on", self.address)
            # A hand pay pending from before (a restart of the bridge): known again, so the cashier's
            # payment (the hall's unlock, or its welcome in service) still resets it.
            info = self._long_poll(
                bytes([self.address, sas.LP_SEND_HANDPAY_INFO]),
                sas.LP_SEND_HANDPAY_INFO,
                "LP 1B",
                sas.decode_handpay_info_response,
            )
            if info is not None and info.pending:
                self.handpay = info
                self.hit_reported_unpaid = info.progressive_level is not None
                log.info("a hand pay is pending on the machine: %s", cents(info.amount_cents))
            return True
        return False

    def cycle(self, now: float) -> None:
        if not self.real_time and not self.connect():
            return
        if self.general_unanswered:
            # The last general poll's exception may be waiting: the same poll again (its NACK) before any
            # other poll, which would ACK it unread.
            self._general_poll()
            if self.general_unanswered:
                return
        self._broadcast(now)
        self._play_control(now)
        if self.reset_wanted:
            self._handpay_reset()
        if now >= self.next_meters or self.meters_deferred:
            self._meters(now)
        self._general_poll()

    def _broadcast(self, now: float) -> None:
        with self.lock:
            levels, fresh = list(self.levels), now - self.levels_at <= self.timing.levels_stale
        if not levels or not fresh or now < self.next_broadcast:
            return
        self.next_broadcast = now + self.timing.broadcast_every
        amounts = [(i + 1, amount) for i, (_, amount) in enumerate(levels[: sas.MAX_LEVELS_PER_BROADCAST])]
        if len(amounts) == 1:
            frame = sas.encode_single_level_broadcast(self.group, 1, amounts[0][1])
        else:
            frame = sas.encode_multi_level_broadcast(self.group, amounts)
        self.line.send(frame, wakeup=True)
        self.counters.add("broadcasts")

    def _play_control(self, now: float) -> None:
        """LP 0x01 (disable play) or 0x02 (enable it) when the hall's word (the gate) differs from what the
        machine last ACKed; a machine that NACKs it or does not answer is asked again later."""
        wanted = self.gate.wanted(now)
        if wanted.enable is None or wanted.enable == self.machine_enabled or now < self.play_control_at:
            return
        what = "LP 02" if wanted.enable else "LP 01"
        command = sas.LP_STARTUP if wanted.enable else sas.LP_SHUTDOWN
        answer = self._transact(sas.encode_play_control(self.address, wanted.enable), command, what)
        if answer is None:
            self.play_control_at = now + self.timing.poll_every * 5
            return
        try:
            acked = sas.decode_long_poll_ack(answer, self.address)
        except sas.SasError as exc:
            self._bad_frame(answer, what, exc)
            return
        if not acked:
            self.counters.add("play_control_nack")
            self.play_control_at = now + self.timing.play_control_retry
            log.warning("%s NACKed by address %d: asked again later", what, self.address)
            return
        self.machine_enabled = wanted.enable
        self.counters.set("machine_enabled", int(wanted.enable))
        if wanted.enable:
            self.counters.add("machine_enables")
            log.info("play enabled on the machine (LP 02): the hall has it in service")
        else:
            self.counters.add("machine_disables")
            if wanted.reason == HALL_LOST:
                self.counters.add("machine_disables_hall_lost")
                log.warning(
                    "play disabled on the machine (LP 01): the hall out of reach for more than %g s",
                    self.gate.lost_after,
                )
            else:
                log.info("play disabled on the machine (LP 01): the hall locked it (%s)", wanted.reason)

    def _handpay_reset(self) -> None:
        with self.lock:
            self.reset_wanted = False
        if self.handpay is None:
            log.info("hand pay paid at the cashier, but none pending on the machine: no reset sent")
            return
        result = self._long_poll(
            sas.encode_remote_handpay_reset(self.address),
            sas.LP_REMOTE_HANDPAY_RESET,
            "LP 94",
            sas.decode_remote_handpay_reset_response,
        )
        if result is None:
            with self.lock:
                self.reset_wanted = True  # tried again next cycle
            return
        code = result[1]
        if code == sas.HANDPAY_RESET_DONE:
            self.counters.add("handpay_resets")
            log.info("remote hand-pay reset done")
        else:
            self.counters.add("handpay_reset_refused")
            log.warning("remote hand-pay reset refused by the machine (code %d)", code)
        self.handpay = None
        self.hit_reported_unpaid = False

    def _meters(self, now: float) -> None:
        read = self._long_poll(
            sas.encode_selected_meters_request(self.address, METER_CODES),
            sas.LP_SEND_SELECTED_METERS,
            "LP 2F",
            sas.decode_selected_meters_response,
        )
        if read is None:
            return
        values: dict[int, int] = read[2]
        coin_in = values[sas.METER_TOTAL_COIN_IN]
        previous = self.last_meters
        if previous is not None and any(values[c] < previous[c] for c in MONOTONIC):
            if values != self.refused_meters:  # the same bad read again is not counted again
                self.refused_meters = dict(values)
                self.counters.add("meter_backwards")
                gone = [f"{c:#04x}" for c in MONOTONIC if values[c] < previous[c]]
                log.error("meters went backwards (codes %s): snapshot not sent", ", ".join(gone))
            self.meters_deferred = True  # read again next cycle
            return
        # A consistent read falls between games: no game open, and the coin-in meter is the one the last
        # game start reported (else a game started that the general poll has not told yet).
        if self.open_game is not None or (self.last_coin_in is not None and coin_in > self.last_coin_in):
            self.meters_deferred = True
            self.counters.add("meters_deferred")
            return
        self.meters_deferred = False
        self.next_meters = now + self.timing.meters_every
        if previous is not None and self.bets_since_meters >= 0:
            grown = coin_in - previous[sas.METER_TOTAL_COIN_IN]
            if grown != self.bets_since_meters:
                self.counters.add("meter_mismatch")
                log.warning(
                    "coin-in grew by %d credits, plays read since the last meters bet %d",
                    grown,
                    self.bets_since_meters,
                )
        self.last_meters = dict(values)
        self.last_coin_in = coin_in
        self.bets_since_meters = 0
        self.counters.add("meters_read")
        self.emit(
            {
                "type": "meters",
                "coin_in": cents(coin_in * self.denom),
                "coin_out": cents(values[sas.METER_TOTAL_COIN_OUT] * self.denom),
                "jackpots_paid": cents(values[sas.METER_TOTAL_JACKPOT] * self.denom),
                "credits": cents(values[sas.METER_CURRENT_CREDITS] * self.denom),
                "games_played": values[sas.METER_GAMES_PLAYED],
            }
        )

    general_unanswered = False

    def _general_poll(self) -> None:
        """One general poll, repeated (SAS's implied NACK: the machine sends the same exception again) while
        its answer is missing or bad, three tries in all, then again at the start of each cycle before any
        other poll (which would ACK the exception unread); a good exception is ACKed (implied: a general poll
        to another address, which nobody on this one-machine line answers) after it was journaled."""
        for _ in range(3):
            answer = self._transact(sas.encode_general_poll(self.address), None, "general poll")
            if answer is None:
                continue
            try:
                if self.real_time:
                    event = sas.decode_real_time_event(answer)
                else:
                    event = sas.RealTimeEvent(self.address, sas.decode_general_poll_response(answer))
            except sas.SasError as exc:
                self._bad_frame(answer, "general poll", exc)
                continue
            self.general_unanswered = False
            if event.exception.event is sas.PollEvent.NONE:
                return
            if event.address != self.address:
                self.counters.add("unsolicited_frames")
                log.warning("an event from address %d on the line of address %d", event.address, self.address)
                continue
            self._handle(event)
            self.line.send(bytes([sas.GENERAL_POLL_BIT | self.ack_address]), wakeup=True)
            return
        self.counters.add("general_poll_failed")
        self.general_unanswered = True

    def _handle(self, event: sas.RealTimeEvent) -> None:
        kind = event.exception.event
        if kind is sas.PollEvent.NONE:
            return
        self.counters.add("exceptions")
        if kind is sas.PollEvent.GAME_STARTED:
            if self.open_game is not None:
                self.counters.add("games_unmatched")
                log.warning("a game started before the last one ended")
            self.open_game = (event.credits_wagered, event.coin_in_credits)
            self.last_coin_in = event.coin_in_credits
            self.save("open_game", json.dumps(self.open_game))
        elif kind is sas.PollEvent.GAME_ENDED:
            if self.open_game is None:
                self.counters.add("games_unmatched")
                log.warning("a game ended that was not seen starting")
                return
            bet, coin_in = self.open_game
            self.open_game = None
            self.bets_since_meters += bet
            play = {
                "type": "play",
                "game_id": f"{self.asset}-{coin_in}",
                "bet": cents(bet * self.denom),
                "win": cents(event.win_credits * self.denom),
            }
            # A game is one play however often the machine reports its end (its exception sent again after
            # a NACK the bridge did not mean, e.g. across a restart): its coin-in meter is its identity.
            if self.emit(play, once=f"game:{coin_in}"):
                self.counters.add("plays")
            else:
                self.counters.add("play_duplicate")
            self.save("open_game", "")
        elif kind is sas.PollEvent.LEVEL_HIT:
            self._level_hit()
        elif kind is sas.PollEvent.HANDPAY_PENDING:
            self._handpay_pending()
        elif kind is sas.PollEvent.HANDPAY_RESET:
            self.counters.add("handpay_reset_reported")
            self.handpay = None
        elif kind is sas.PollEvent.LINK_LOST:
            self.counters.add("machine_link_lost")
            log.warning("the machine reports no progressive broadcast for 5 s (0x53): it locks its levels")
        elif kind in EVENT_KINDS:
            self.counters.add(f"event_{EVENT_KINDS[kind]}")
            self.emit({"type": "event", "kind": EVENT_KINDS[kind]})
        else:
            self.counters.add("other_exceptions")
            log.info("exception %#04x: %s", event.exception.code, event.exception.description)

    def _level_hit(self) -> None:
        win = self._long_poll(
            bytes([self.address, sas.LP_SEND_SAS_PROGRESSIVE_WIN]),
            sas.LP_SEND_SAS_PROGRESSIVE_WIN,
            "LP 85",
            sas.decode_progressive_win_response,
        )
        if win is None:
            self.counters.add("hit_unread")
            return
        with self.lock:
            names = [name for name, _ in self.levels]
        if win.group != self.group or not 1 <= win.level <= len(names):
            self.counters.add("hit_unlinked_level")
            log.error("a hit of group %d level %d, which this machine is not linked to", win.group, win.level)
            return
        game = self.last_coin_in if self.last_coin_in is not None else 0
        if not self.remember(f"hit:{win.group}:{win.level}:{win.amount_cents}:{game}"):
            self.counters.add("hit_duplicate")
            log.warning("the machine reported the same hit (level %d) again: not reported twice", win.level)
            return
        self.counters.add("hits")
        self.hit_reported_unpaid = True
        log.info(
            "progressive hit: level %d (%s), machine's amount %s",
            win.level,
            names[win.level - 1],
            cents(win.amount_cents),
        )
        self.emit({"type": "hit", "level": names[win.level - 1], "game_id": f"{self.asset}-{game}"})

    def _handpay_pending(self) -> None:
        info = self._long_poll(
            bytes([self.address, sas.LP_SEND_HANDPAY_INFO]),
            sas.LP_SEND_HANDPAY_INFO,
            "LP 1B",
            sas.decode_handpay_info_response,
        )
        if info is None or not info.pending:
            return
        self.counters.add("handpays")
        self.handpay = info
        if info.progressive_level is None:
            self.emit({"type": "event", "kind": "hand_pay"})
        log.info("hand pay pending: %s (level code %#04x)", cents(info.amount_cents), info.level)
