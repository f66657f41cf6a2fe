"""A simulated SAS gaming machine (EGM): the machine side of the serial line, as a process.

``python -m machines.sasbridge.egm --address 1 --denom-cents 20`` opens a pty pair, prints
``{"pty": "/dev/pts/N"}`` on stdout (the bridge opens that path as ``framed:/dev/pts/N``), and answers SAS
polls on the master end through the test line (machines.sasbridge.line.FramedLine). It is driven by JSON
commands, one a line, on stdin, and answers each with a JSON line on stdout:

- ``{"cmd": "play", "count": N, "every": 0.05}``: play N games, one every `every` seconds;
- ``{"cmd": "hit", "level": 1, "twice": false}``: the next game ends with a SAS progressive hit of `level`
  (the amount is the level's last broadcast amount), paid by hand: exceptions 0x56 then 0x51, and the
  machine locked until a remote hand-pay reset (LP 0x94); `twice` reports the 0x56 twice (a bad machine);
- ``{"cmd": "door"}`` (slot door opened, then closed), ``{"cmd": "tilt"}``;
- ``{"cmd": "corrupt", "count": N}``: the next N answers to long polls go out with a broken CRC;
- ``{"cmd": "truncate", "count": N}``: the next N answers to long polls lose their last byte;
- ``{"cmd": "mute", "on": true}``: the machine stops answering (an address that does not answer);
- ``{"cmd": "unsolicited"}``: a stray frame on the line, unasked;
- ``{"cmd": "backwards"}``: the next meter read reports coin-in 0 (a meter gone backwards);
- ``{"cmd": "status"}``: the machine's state and meters; ``{"cmd": "quit"}``.

What it does as a machine: meters in credits of its accounting denomination (coin in, coin out = wins paid
to the credit meter, jackpot = hand-paid progressive wins, games played/won, credits); a game is a start
(exception 0x7E with the wager and coin-in meter, real-time event reporting) then an end (0x7F with the
win); exceptions wait in a queue (32 at most) and the oldest goes out at each general poll; with no
progressive broadcast (LP 0x80/0x86) for 5 s it locks itself and reports 0x53, and it unlocks when the
broadcasts return. The host's shutdown (LP 0x01) disables play: a game in progress ends, no other starts,
its meters, exceptions and long polls go on, until the startup (LP 0x02); the host's lock-out and the
machine's own locks (a hand pay pending, the link lost) are separate, each lifted by its own message, and
the machine plays only when none holds. ``status`` says ``disabled`` (and ``stats`` counts the shutdowns
and startups it took). Deterministic: its games come from ``random.Random(seed)`` (a test device, not a draw).

Playing on its own (the demo's bridged machines): ``--play N --every S`` plays N games from the start,
``--hit-probability P`` makes each game a progressive hit with chance P (the level drawn rarer the bigger its
amount, as machines.simulator does), and ``--coin-in`` and the other meter options start the meters where
an earlier run of the machine left them (a machine's meters live in its NVRAM, across power cycles), and
``--handpay-level L --handpay-cents C`` starts it locked on the hand pay of a progressive hit left unpaid
(also kept across power cycles), until the remote hand-pay reset; ``--disabled`` starts it disabled by the
host (the shutdown kept across a power cycle), until a startup. With stdin closed (its parent gone) the
machine stops.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import select
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from machines import sas
from machines.sasbridge.line import FramedLine, make_pty

LINK_TIMEOUT = 5.0  # Aristocrat ProgressiveConstants.LevelTimeout: 5000 ms before exception 0x53
# No host message for this long: the simulator takes the line as down, which NACKs the exception in flight
# (it goes out again). A real machine's link-down time is longer; 1 s keeps the tests short.
LINK_DOWN = 1.0
MAX_QUEUE = 32
BETS = (1, 2, 3, 5, 10)
# (multiplier, weight out of 1000): ~90 % return.
PAYTABLE = ((1, 150), (2, 100), (5, 40), (10, 10), (20, 5), (50, 1))


@dataclass
class Egm:
    address: int
    denom_cents: int
    group: int = 1
    seed: int = 0
    credits_start: int = 500
    coin_in: int = 0
    coin_out: int = 0
    jackpot_cents: int = 0
    games_played: int = 0
    games_won: int = 0
    credits: int = 0
    real_time: bool = False
    queue: collections.deque[sas.RealTimeEvent] = field(default_factory=collections.deque)
    levels: dict[int, int] = field(default_factory=dict)
    last_broadcast: float | None = None
    link_locked: bool = False
    disabled: bool = False  # the host's lock-out (LP 0x01), until its startup (LP 0x02)
    handpay: sas.HandpayInfo | None = None
    last_win: sas.ProgressiveWin | None = None
    plays_left: int = 0
    every: float = 0.05
    next_game_at: float = 0.0
    game_open: int | None = None  # the open game's bet (credits)
    game_end_at: float = 0.0
    hit_level: int | None = None
    hit_twice: bool = False
    hit_probability: float = 0.0  # per game, its own progressive hit (when it knows its levels)
    corrupt: int = 0
    truncate: int = 0
    mute: bool = False
    backwards: bool = False
    stats: collections.Counter[str] = field(default_factory=collections.Counter)
    unacked: sas.RealTimeEvent | None = None  # the exception sent, waiting for its implied ACK
    last_heard: float = 0.0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.credits = self.credits_start

    # --- the machine ---

    def push(self, code: int, **data: int) -> None:
        if len(self.queue) >= MAX_QUEUE:
            self.stats["queue_overflow"] += 1
            return
        self.queue.append(sas.RealTimeEvent(self.address, sas.classify_exception(code), **data))

    @property
    def locked(self) -> bool:
        return self.link_locked or self.disabled or self.handpay is not None

    def tick(self, now: float) -> None:
        silent = self.last_broadcast is not None and now - self.last_broadcast > LINK_TIMEOUT
        if silent and not self.link_locked:
            self.link_locked = True
            self.stats["link_locks"] += 1
            self.push(sas.EXCEPTION_NO_PROGRESSIVE_INFO)
        if self.game_open is not None and now >= self.game_end_at:
            self._end_game()
        if (
            self.game_open is None
            and self.plays_left > 0
            and not self.locked
            and self.levels
            and len(self.queue) <= MAX_QUEUE - 8  # room for the game's events and a hit's
            and now >= self.next_game_at
        ):
            self._start_game(now)

    def _start_game(self, now: float) -> None:
        bet = self.rng.choice(BETS)
        if self.credits < bet:
            self.credits += 100  # a bill
        self.credits -= bet
        self.coin_in += bet
        self.games_played += 1
        self.plays_left -= 1
        self.game_open = bet
        self.game_end_at = now + self.every / 2
        self.next_game_at = now + self.every
        self.push(
            sas.EXCEPTION_GAME_STARTED,
            credits_wagered=bet,
            coin_in_credits=self.coin_in,
            progressive_group=self.group,
        )

    def _end_game(self) -> None:
        bet = self.game_open or 0
        self.game_open = None
        roll = self.rng.randrange(1000)
        win = 0
        for mult, weight in PAYTABLE:
            if roll < weight:
                win = bet * mult
                break
            roll -= weight
        self.credits += win
        self.coin_out += win
        self.games_won += 1 if win else 0
        self.stats["bets"] += bet
        self.stats["wins"] += win
        self.push(sas.EXCEPTION_GAME_ENDED, win_credits=win)
        if self.hit_level is None and self.levels and self.rng.random() < self.hit_probability:
            self.hit_level = self._choose_level()
        if self.hit_level is not None:
            level = self.hit_level
            self.hit_level = None
            amount = self.levels.get(level, 0)
            self.last_win = sas.ProgressiveWin(self.address, self.group, level, amount)
            self.push(sas.EXCEPTION_SAS_PROGRESSIVE_LEVEL_HIT)
            if self.hit_twice:
                self.push(sas.EXCEPTION_SAS_PROGRESSIVE_LEVEL_HIT)
                self.hit_twice = False
            self.handpay = sas.HandpayInfo(self.address, self.group, level, amount)
            self.push(sas.EXCEPTION_HANDPAY_PENDING)
            self.stats["hits"] += 1

    def _choose_level(self) -> int:
        """A level to hit, rarer the bigger its amount (weight 1/amount)."""
        levels = sorted(self.levels)
        weights = [1 / max(self.levels[level], 100) for level in levels]
        return self.rng.choices(levels, weights=weights)[0]

    def wait(self, now: float) -> float:
        """How long the loop may sleep before the machine has something of its own to do (a game to start
        or end, the link watch), at most 50 ms."""
        due = now + 0.05
        if self.game_open is not None:
            due = min(due, self.game_end_at)
        elif self.plays_left > 0 and self.next_game_at > now:  # a game due but held: a host message wakes it
            due = min(due, self.next_game_at)
        return max(0.001, due - now)

    # --- the line ---

    def _implied(self, message: bytes, now: float) -> bool:
        """SAS's implied ACK/NACK of the exception last sent (SAS 6 section 3.1): the same general poll
        again is a NACK (it goes out again); any long poll, a global poll or a general poll to another
        address is the ACK; a link down (no message for LINK_DOWN) is a NACK. True: resend it now."""
        gap, self.last_heard = now - self.last_heard, now
        if self.unacked is None:
            return False
        if gap > LINK_DOWN:
            self.queue.appendleft(self.unacked)
            self.unacked = None
            self.stats["implied_nack_link_down"] += 1
            return False
        if message[0] == sas.GENERAL_POLL_BIT | self.address:
            self.stats["implied_nack"] += 1
            return True
        self.unacked = None
        return False

    def answer(self, message: bytes, now: float) -> bytes | None:
        """The machine's answer to one host message (None: it stays silent)."""
        if self.mute:
            return None
        resend = self._implied(message, now)
        first = message[0]
        if first & sas.GENERAL_POLL_BIT:
            if first & sas.MAX_ADDRESS != self.address:
                return None
            self.stats["general_polls"] += 1
            if resend and self.unacked is not None:
                event = self.unacked
            elif not self.queue:
                return bytes([sas.EXCEPTION_NO_ACTIVITY])
            else:
                event = self.queue.popleft()
                self.unacked = event
            if self.real_time:
                return sas.encode_real_time_event(event)
            return bytes([event.exception.code])
        address, command = message[0], message[1]
        if address not in (self.address, sas.BROADCAST_ADDRESS):
            return None
        if command in sas.TYPE_R_POLLS:
            return self._long(self._type_r(command))
        if not sas.check_crc(message):
            self.stats["bad_crc_in"] += 1
            return None  # SAS: a message with a bad CRC is ignored
        if command in (sas.LP_SINGLE_LEVEL_BROADCAST, sas.LP_MULTI_LEVEL_BROADCAST):
            self._broadcast(message, now)
            return None if address == sas.BROADCAST_ADDRESS else bytes([self.address])
        if address == sas.BROADCAST_ADDRESS:
            return None
        if command in (sas.LP_SHUTDOWN, sas.LP_STARTUP):
            _, enable = sas.decode_play_control(message)
            self._play_control(enable, now)
            return bytes([self.address])
        if command == sas.LP_ENABLE_REAL_TIME_EVENTS:
            _, self.real_time = sas.decode_enable_real_time_events(message)
            return bytes([self.address])
        if command == sas.LP_SEND_SELECTED_METERS:
            _, _game, codes = sas.decode_selected_meters_request(message)
            values = self.meters()
            if self.backwards:
                self.backwards = False
                values[sas.METER_TOTAL_COIN_IN] = 0  # as after a RAM clear
            return self._long(
                sas.encode_selected_meters_response(self.address, [(c, values[c]) for c in codes])
            )
        if command == sas.LP_REMOTE_HANDPAY_RESET:
            return self._long(sas.encode_remote_handpay_reset_response(self.address, self._reset_handpay()))
        return None  # a long poll this machine does not support: no answer

    def _type_r(self, command: int) -> bytes:
        if command in (sas.LP_SEND_SAS_PROGRESSIVE_WIN, sas.LP_SEND_PROGRESSIVE_WIN):
            if self.last_win is None:
                return bytes([self.address | sas.NACK_BIT])
            return sas.encode_progressive_win_response(self.last_win, command)
        if command == sas.LP_SEND_HANDPAY_INFO:
            info = self.handpay or sas.HandpayInfo(self.address, 0, 0, 0)
            return sas.encode_handpay_info_response(info)
        if command == sas.LP_SEND_METERS:
            meters = sas.GamingMachineMeters(
                self.address,
                self.coin_in * self.denom_cents,
                self.coin_out * self.denom_cents,
                0,
                self.jackpot_cents // self.denom_cents * self.denom_cents,
                self.games_played,
                self.games_won,
                0,
                0,
            )
            return sas.encode_send_meters_response(meters, accounting_denom_cents=self.denom_cents)
        return bytes([self.address | sas.NACK_BIT])

    def _long(self, response: bytes) -> bytes:
        if len(response) > 1 and self.corrupt > 0:
            self.corrupt -= 1
            self.stats["corrupted"] += 1
            return response[:-1] + bytes([response[-1] ^ 0x5A])
        if len(response) > 1 and self.truncate > 0:
            self.truncate -= 1
            self.stats["truncated"] += 1
            return response[:-1]
        return response

    def _broadcast(self, message: bytes, now: float) -> None:
        if message[1] == sas.LP_SINGLE_LEVEL_BROADCAST:
            single = sas.decode_single_level_broadcast(message)
            group = single.group
            levels: tuple[tuple[int, int], ...] = ((single.level, single.amount_cents),)
        else:
            multi = sas.decode_multi_level_broadcast(message)
            group, levels = multi.group, multi.levels
        if group != self.group:
            return
        self.levels.update(levels)
        self.last_broadcast = now
        self.stats["broadcasts"] += 1
        if self.link_locked:
            self.link_locked = False
            self.stats["link_unlocks"] += 1
            self.next_game_at = max(self.next_game_at, now)

    def _play_control(self, enable: bool, now: float) -> None:
        """The host's shutdown or startup; the same one again changes nothing (it is ACKed all the same)."""
        if enable == (not self.disabled):
            self.stats["startups_again" if enable else "shutdowns_again"] += 1
            return
        self.disabled = not enable
        self.stats["startups" if enable else "shutdowns"] += 1
        if enable:
            self.next_game_at = max(self.next_game_at, now)

    def _reset_handpay(self) -> int:
        if self.handpay is None:
            return sas.HANDPAY_RESET_NOT_IN_HANDPAY
        self.jackpot_cents += self.handpay.amount_cents
        self.handpay = None
        self.stats["handpay_resets"] += 1
        self.push(sas.EXCEPTION_HANDPAY_RESET)
        return sas.HANDPAY_RESET_DONE

    def meters(self) -> dict[int, int]:
        return {
            sas.METER_TOTAL_COIN_IN: self.coin_in,
            sas.METER_TOTAL_COIN_OUT: self.coin_out,
            sas.METER_TOTAL_JACKPOT: self.jackpot_cents // self.denom_cents,
            sas.METER_TOTAL_HANDPAID_CANCELLED: 0,
            sas.METER_TOTAL_CANCELLED: 0,
            sas.METER_GAMES_PLAYED: self.games_played,
            sas.METER_GAMES_WON: self.games_won,
            sas.METER_CURRENT_CREDITS: self.credits,
        }

    def status(self) -> dict[str, Any]:
        return {
            "coin_in": self.coin_in,
            "coin_out": self.coin_out,
            "jackpot_cents": self.jackpot_cents,
            "games_played": self.games_played,
            "credits": self.credits,
            "plays_left": self.plays_left,
            "game_open": self.game_open is not None,
            "link_locked": self.link_locked,
            "disabled": self.disabled,
            "handpay": None if self.handpay is None else self.handpay.amount_cents,
            "real_time": self.real_time,
            "levels": {str(k): v for k, v in self.levels.items()},
            "queue": len(self.queue),
            "stats": dict(self.stats),
        }

    def command(self, cmd: dict[str, Any], now: float, line: FramedLine) -> dict[str, Any]:
        name = cmd.get("cmd")
        if name == "play":
            self.plays_left += int(cmd.get("count", 1))
            self.every = float(cmd.get("every", self.every))
            self.next_game_at = max(self.next_game_at, now)
        elif name == "hit":
            self.hit_level = int(cmd.get("level", 1))
            self.hit_twice = bool(cmd.get("twice", False))
        elif name == "door":
            self.push(sas.EXCEPTION_SLOT_DOOR_OPENED)
            self.push(sas.EXCEPTION_SLOT_DOOR_CLOSED)
        elif name == "tilt":
            self.push(sas.EXCEPTION_GENERAL_TILT)
        elif name == "corrupt":
            self.corrupt += int(cmd.get("count", 1))
        elif name == "truncate":
            self.truncate += int(cmd.get("count", 1))
        elif name == "mute":
            self.mute = bool(cmd.get("on", True))
        elif name == "backwards":
            self.backwards = True
        elif name == "unsolicited":
            line.send(sas.frame(self.address, 0x1C, b"\x00"), wakeup=False)
        elif name not in ("status", "quit"):
            return {"error": f"unknown command {name!r}"}
        return self.status()


def serve(egm: Egm, line: FramedLine, control_fd: int | None) -> None:
    """The machine's loop: host messages, its own games and link watch, commands on `control_fd`."""
    message = bytearray()
    control = bytearray()
    out = sys.stdout
    while True:
        now = time.monotonic()
        egm.tick(now)
        timeout = egm.wait(now)
        fds = [line.fileno()] + ([control_fd] if control_fd is not None else [])
        ready, _, _ = select.select(fds, [], [], timeout) if not line.buffer else (fds[:1], [], [])
        if control_fd is not None and control_fd in ready:
            chunk = os.read(control_fd, 65536)
            if not chunk:
                return
            control += chunk
            while b"\n" in control:
                raw, _, rest = bytes(control).partition(b"\n")
                control = bytearray(rest)
                if not raw.strip():
                    continue
                cmd = json.loads(raw)
                reply = egm.command(cmd, time.monotonic(), line)
                out.write(json.dumps(reply) + "\n")
                out.flush()
                if cmd.get("cmd") == "quit":
                    return
        if line.fileno() not in ready:
            continue
        while (char := line.read(0.0 if not message else 0.05)) is not None:
            byte, wakeup = char
            if wakeup:
                message = bytearray([byte])
            elif not message:
                egm.stats["stray_chars"] += 1
                continue
            else:
                message.append(byte)
            try:
                need = sas.host_message_length(message)
            except sas.SasError:
                egm.stats["unknown_polls"] += 1
                message = bytearray()
                continue
            if need is not None and len(message) >= need:
                now = time.monotonic()
                try:
                    answer = egm.answer(bytes(message), now)
                except sas.SasError:
                    egm.stats["bad_host_frames"] += 1
                    answer = None
                message = bytearray()
                if answer is not None:
                    line.send(answer, wakeup=False)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", type=int, default=1)
    parser.add_argument("--denom-cents", type=int, default=20)
    parser.add_argument("--group", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--line", default="", help="an existing line (fd:N, framed:PATH); default: a new pty")
    parser.add_argument("--no-control", action="store_true", help="ignore stdin (a benchmark's machine)")
    parser.add_argument("--play", type=int, default=0, help="games to play from the start")
    parser.add_argument("--every", type=float, default=3.0, help="seconds per game")
    parser.add_argument(
        "--hit-probability", type=float, default=0.0, help="its own progressive hit, per game"
    )
    parser.add_argument("--coin-in", type=int, default=0, help="the coin-in meter at start (credits)")
    parser.add_argument("--coin-out", type=int, default=0, help="the coin-out meter at start (credits)")
    parser.add_argument("--jackpot-cents", type=int, default=0, help="hand-paid progressive wins at start")
    parser.add_argument("--games-played", type=int, default=0)
    parser.add_argument("--games-won", type=int, default=0)
    parser.add_argument("--credits", type=int, default=None, help="the credit meter at start (credits)")
    parser.add_argument("--handpay-level", type=int, default=0, help="a hit's hand pay pending at start")
    parser.add_argument("--handpay-cents", type=int, default=0)
    parser.add_argument("--disabled", action="store_true", help="start disabled by the host (LP 0x01)")
    args = parser.parse_args(argv)
    if args.line:
        kind, _, where = args.line.partition(":")
        line = FramedLine(int(where)) if kind == "fd" else FramedLine.open(where)
    else:
        master, path = make_pty()
        line = FramedLine(master)
        sys.stdout.write(json.dumps({"pty": path}) + "\n")
        sys.stdout.flush()
    egm = Egm(address=args.address, denom_cents=args.denom_cents, group=args.group, seed=args.seed)
    egm.plays_left, egm.every, egm.hit_probability = args.play, args.every, args.hit_probability
    egm.coin_in, egm.coin_out, egm.jackpot_cents = args.coin_in, args.coin_out, args.jackpot_cents
    egm.games_played, egm.games_won = args.games_played, args.games_won
    if args.credits is not None:
        egm.credits = args.credits
    egm.disabled = args.disabled
    if args.handpay_level and args.handpay_cents > 0:
        egm.last_win = sas.ProgressiveWin(egm.address, egm.group, args.handpay_level, args.handpay_cents)
        egm.handpay = sas.HandpayInfo(egm.address, egm.group, args.handpay_level, args.handpay_cents)
    serve(egm, line, None if args.no_control else sys.stdin.fileno())


if __name__ == "__main__":
    main()
