"""Simulated player terminals of electronic bingo (issue 13), playing against a running hall over its real
doors: the terminal device API (HTTP, ``/api/electronic/terminal/...``) and the terminal WebSocket
(``ws/electronic/terminal/``).

Two parts, as ``machines.simulator``:

- ``TerminalBrain``: the pure decisions of one terminal with a player card inserted, driven by the caller's
  clock (``now``, any monotonic origin) and the wall clock where a delay is measured. It says hello, inserts
  its card, loads its snapshot, buys cards once for every game it hears of while that game sells (at a
  jittered moment of the sales window, a count from the speciality's purchase sizes), retries a purchase
  left unanswered with the same key (a retry is a no-op on the server), watches the per-stream sequence
  numbers of the room stream and its own stream and reloads the snapshot on a gap (a lost message) or a
  head ahead of it, and keeps the statistics: purchases answered (latency), balls received (delay from the
  event's time), messages lost and recovered, its prizes seen against its card's balance, and every message
  of its own stream that changed nothing of it. No network, no Django: the tests drive it with a fake clock.
- ``run_simulation``: asyncio, per terminal one WebSocket (``websockets``) and one keep-alive HTTP/1.1
  connection (``HttpConnection``, a few dozen lines: no HTTP client library in the requirements), feeding
  each brain what arrives and sending what it decides. ``manage.py terminal_simulator``, the demo and
  ``bench/terminal_simulator.py`` run it. Its scaffolding (reconnection backoff, the ramp and run of many
  devices, statistics helpers) is halls.simulation, shared with machines.simulator.

Determinism: a terminal's choices come from ``random.Random(seed + index)``; the hall's draws use ``secrets``
(this is a test device, never a draw).
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
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import quote, urlsplit

from halls import simulation
from halls.eventtypes import EventType
from halls.simulation import Clock, percentile

# The device API (the "sales" helper's doors) and the socket (the "terminal" helper's), relative to the base.
API = "/api/electronic/terminal/"
PATHS: dict[str, str] = {
    "hello": API + "hello/",
    "card": API + "card/",
    "purchase": API + "purchase/",
    "snapshot": API + "snapshot/",
    "reality": API + "reality/ack/",
}
WS_PATH = "/ws/electronic/terminal/"
SOFTWARE_VERSION = "SIM-T-1.0"

# Event types (halls.eventtypes imports nothing of Django).
SALES_OPENED = EventType.EGAME_SALES_OPENED
SALES_CLOSED = EventType.EGAME_SALES_CLOSED
BALL = EventType.EGAME_BALL
PRIZE = EventType.EGAME_PRIZE
CLOSED = EventType.EGAME_CLOSED
METERS = EventType.EGAME_METERS
T_CARDS = EventType.TERMINAL_CARDS
T_PRIZE = EventType.TERMINAL_PRIZE
T_BALANCE = EventType.TERMINAL_BALANCE
T_STATE = EventType.TERMINAL_STATE
HEAD = "stream.head"
# A purchase over the socket and its answer (bingo.electronic.purchase_frames: the same body as the HTTP
# door's purchase, answered by key).
PURCHASE_FRAME = "purchase"
PURCHASE_ANSWER = "purchase.answer"

# Refusals after which buying for that game stops (the answer will not change with a retry).
FINAL_REFUSALS = frozenset(
    {"sales_closed", "insufficient_balance", "card_blocked", "unknown_card", "too_many_cards", "bad_count"}
)
# A purchase refused while the card's session waits for its reality check (halls.cashier.services.limits):
# the simulated player acknowledges it, as a player does on the page, and buys for the next game.
REALITY_CHECK_DUE = "reality_check_due"
# Refusals that mean "not now": the same purchase (same key) goes again a little later.
TRANSIENT_STATUSES = frozenset({0, 429, 500, 502, 503, 504})


def money(value: Any) -> Decimal | None:
    """A JSON amount ("12.50", 12.5, None) as a Decimal, None when absent or unreadable."""
    if value is None or isinstance(value, bool):
        return None
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return amount if amount.is_finite() else None


def wall_of(at: Any) -> float | None:
    """An event's time (ISO 8601 text, or epoch seconds / milliseconds) as epoch seconds."""
    if isinstance(at, int | float) and not isinstance(at, bool):
        return at / 1000 if at > 1e11 else float(at)
    if isinstance(at, str):
        try:
            return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- configuration -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TerminalProfile:
    """Who a simulated terminal is: its device (id and token, as the URL fragment ``#id:token`` carries
    them) and the player card inserted in it. ``index`` seeds its RNG and staggers it."""

    index: int
    device_id: int
    token: str
    card_number: str
    software_version: str = SOFTWARE_VERSION

    @property
    def authorization(self) -> str:
        return f"CashDevice {self.device_id}:{self.token}"


@dataclass(frozen=True)
class SimConfig:
    """Behaviour shared by every terminal of a run."""

    seed: int = 0
    # Cards per purchase: one of these, filtered by the speciality's purchase sizes when the server tells
    # them (the snapshot's or sales-opened event's); a purchase per game.
    sizes: tuple[int, ...] = (1, 2, 3, 4, 6)
    buy_probability: float = 0.9  # a game the terminal sits out otherwise
    # The purchase goes at a uniform moment of the first `buy_spread` of the sales window (seconds),
    # never later than `buy_margin` seconds before the window closes.
    buy_spread: float = 10.0
    buy_margin: float = 1.0
    purchase_timeout: float = 10.0  # unanswered after this long: the same purchase again (same key)
    retry_after: float = 1.0  # a transient refusal (busy, 5xx): again after this long
    snapshot_timeout: float = 10.0
    head_grace: float = 1.0  # a head ahead of the last event: the snapshot if still ahead this much later
    # How long a missing seq may stay missing before it counts as lost (frames of two streams interleave
    # on one socket, in order per stream: a gap is a gap at once; this only bounds a late frame).
    measure_from: float = -math.inf  # statistics count from this clock value on (a warm-up)
    # Where a purchase goes: "socket" (a purchase frame on the terminal's WebSocket while it is open, as the
    # page buys; HTTP while it is not) or "http" (the device API's purchase, always).
    purchase_door: str = "socket"


# --- statistics ----------------------------------------------------------------------------------------


@dataclass
class TerminalStats:
    """What one terminal saw. Latencies and delays in seconds."""

    purchases_sent: int = 0  # distinct purchases (a retry is not a new one)
    purchases_ok: int = 0
    purchases_replayed: int = 0  # answered as a replay of an earlier try
    purchases_refused: int = 0
    purchase_retries: int = 0
    refused_codes: dict[str, int] = field(default_factory=dict)
    cards_bought: int = 0
    spent: Decimal = Decimal(0)
    purchase_latencies: list[float] = field(default_factory=list)
    balls: int = 0  # ball events received (measured)
    ball_delays: list[float] = field(default_factory=list)  # the event's time -> arrival
    balls_missed: int = 0  # ordinals of a game never received as an event (seen later in a snapshot)
    frames: int = 0
    lost: int = 0  # seqs never received on the socket (a gap)
    gaps: int = 0  # gaps found (each asks for a snapshot)
    snapshots: int = 0  # snapshots loaded
    recovered: int = 0  # snapshots loaded after a gap or a head ahead
    heads_ahead: int = 0  # a head told of an event this terminal never got
    own_messages: int = 0  # frames of the terminal's own stream
    idle_messages: int = 0  # own-stream frames that changed nothing of this terminal
    prizes: int = 0  # prizes seen on its own stream (one per card and prize)
    prize_amount: Decimal = Decimal(0)
    games_played: int = 0  # games it had cards in
    connects: int = 0
    disconnects: int = 0
    errors: int = 0  # HTTP errors that are not refusals (unreadable answers, 5xx)
    reality_checks: int = 0  # reality checks acknowledged (a purchase refused while one was due)


# --- actions -------------------------------------------------------------------------------------------


@dataclass
class Call:
    """An HTTP request the terminal wants made; its answer goes back to ``TerminalBrain.on_answer``."""

    kind: str  # hello | card | purchase | snapshot | reality (a reality check acknowledged)
    method: str
    path: str
    body: dict[str, Any] | None = None
    key: str = ""  # the purchase's key

    def encoded(self) -> bytes:
        return b"" if self.body is None else json.dumps(self.body, separators=(",", ":")).encode()


@dataclass
class _Purchase:
    key: str
    game: int
    count: int
    first_sent: float
    last_sent: float
    measured: bool
    in_flight: bool = True


@dataclass
class _Game:
    """What the terminal knows of one game."""

    number: int = 0
    state: str = ""
    sales_close_at: float | None = None  # wall clock
    card_price: Decimal | None = None
    buy_at: float | None = None  # clock: when it buys (None: not decided yet, or decided not to)
    decided: bool = False
    bought: int = 0  # cards it holds in the game
    done: bool = False  # bought, refused for good or sat out
    ordinals: set[int] = field(default_factory=set)  # balls received as events
    last_ordinal: int = 0  # the highest ordinal known (events or snapshot)


class TerminalBrain:
    """One simulated terminal's decisions. Feed it ``on_connect``/``on_disconnect``, every socket frame
    (``on_frame``), every HTTP answer (``on_answer``) and clock ticks (``tick``, at the latest by
    ``next_deadline()``); each returns the HTTP calls to make, in order."""

    def __init__(self, profile: TerminalProfile, config: SimConfig, *, now: float) -> None:
        self.profile = profile
        self.config = config
        self.rng = random.Random(config.seed + profile.index)
        self.stats = TerminalStats()
        self.seqs: dict[str, int] = {}  # stream -> last seq applied
        self.heads_due: dict[str, tuple[int, float]] = {}  # stream -> (head ahead, when to check it again)
        self.games: dict[int, _Game] = {}
        self.sizes: tuple[int, ...] = config.sizes
        self.max_cards: int | None = None
        self.balance: Decimal | None = None
        self.first_balance: Decimal | None = None
        self.purchases: dict[str, _Purchase] = {}  # unanswered (or to retry), by key
        self.purchase_seq = 0
        self.connected = False
        self.ready = False  # card inserted and first snapshot loaded
        self.snapshot_sent_at: float | None = None
        self.snapshot_wanted = False
        self.recovering = False  # the snapshot wanted is a recovery (a gap or a head ahead)
        self.hello_done = False
        self.card_done = False
        self.in_flight: set[str] = set()  # kinds of calls awaiting an answer (hello, card, snapshot)
        self.retry_at: float | None = None  # a transient failure: calls again from then
        self.wakeup = False
        self.stopping = False
        self.own_stream: str | None = None
        self.room_stream: str | None = None
        self.prizes_seen: dict[tuple[int, str, int], Decimal] = {}  # (game, prize code, card) -> amount

    # --- helpers -------------------------------------------------------------------------------------

    def _measured(self, now: float) -> bool:
        return now >= self.config.measure_from

    def _game(self, game_id: int) -> _Game:
        found = self.games.get(game_id)
        if found is None:
            found = self.games[game_id] = _Game()
        return found

    def _want_snapshot(self, *, recovery: bool) -> None:
        self.snapshot_wanted = True
        self.recovering = self.recovering or recovery
        self.wakeup = True

    def _calls_due(self, now: float) -> list[Call]:
        """The calls of the start (hello, card, snapshot) in order, one at a time."""
        if not self.connected or (self.retry_at is not None and now < self.retry_at):
            return []
        out: list[Call] = []
        if not self.hello_done:
            if "hello" not in self.in_flight:
                self.in_flight.add("hello")
                # A hello per connection, numbered by the wall clock in microseconds: a new run never reuses
                # an earlier run's seq (the server keeps each (terminal, seq) once).
                body = {
                    "seq": int(time.time() * 1_000_000),
                    "software_version": self.profile.software_version,
                    "clock": datetime.now(UTC).isoformat(),
                }
                out.append(Call("hello", "POST", PATHS["hello"], body))
            return out
        if not self.card_done:
            if "card" not in self.in_flight:
                self.in_flight.add("card")
                out.append(Call("card", "POST", PATHS["card"], {"card": self.profile.card_number}))
            return out
        if self.snapshot_wanted and "snapshot" not in self.in_flight:
            self.snapshot_wanted = False
            self.in_flight.add("snapshot")
            self.snapshot_sent_at = now
            out.append(Call("snapshot", "POST", PATHS["snapshot"], {"card": self.profile.card_number}))
        return out

    # --- the clock -----------------------------------------------------------------------------------

    def tick(self, now: float) -> list[Call]:
        for stream, (head, due) in list(self.heads_due.items()):
            if now >= due:
                del self.heads_due[stream]
                if head > self.seqs.get(stream, 0):
                    self.stats.heads_ahead += 1
                    self._want_snapshot(recovery=True)
        out = self._calls_due(now)
        if not self.ready or self.stopping:
            return out
        for game_id, game in sorted(self.games.items()):
            if game.done or game.state not in ("", "selling"):
                continue
            if not game.decided:
                self._decide(game, now)
            if game.buy_at is not None and now >= game.buy_at and not self._buying(game_id):
                out.append(self._purchase(game_id, game, now))
        for purchase in self.purchases.values():
            # Refused "not now" (again after retry_after) or unanswered (again after purchase_timeout).
            wait = self.config.purchase_timeout if purchase.in_flight else self.config.retry_after
            if now - purchase.last_sent >= wait:
                out.append(self._resend(purchase, now))
        return out

    def next_deadline(self, now: float) -> float:
        """The latest clock value by which ``tick`` must run again."""
        deadlines = [now + 1.0, *(due for _head, due in self.heads_due.values())]
        if self.retry_at is not None:
            deadlines.append(self.retry_at)
        for game in self.games.values():
            if not game.done and game.buy_at is not None:
                deadlines.append(game.buy_at)
        for purchase in self.purchases.values():
            wait = self.config.purchase_timeout if purchase.in_flight else self.config.retry_after
            deadlines.append(purchase.last_sent + wait)
        return max(now, min(deadlines))

    def take_wakeup(self) -> bool:
        woke, self.wakeup = self.wakeup, False
        return woke

    def stop(self) -> None:
        """Stop buying; answers still count."""
        self.stopping = True

    @property
    def idle(self) -> bool:
        """Nothing of its own awaits an answer."""
        return not self.purchases and not self.in_flight

    # --- buying --------------------------------------------------------------------------------------

    def _buying(self, game_id: int) -> bool:
        return any(p.game == game_id for p in self.purchases.values())

    def _decide(self, game: _Game, now: float) -> None:
        """Whether and when it buys for this game: once per game."""
        game.decided = True
        if self.rng.random() >= self.config.buy_probability:
            game.done = True
            return
        window = self.config.buy_spread
        if game.sales_close_at is not None:
            left = game.sales_close_at - time.time() - self.config.buy_margin
            window = max(0.0, min(window, left))
        game.buy_at = now + self.rng.uniform(0, window)
        self.wakeup = True

    def _count(self, game: _Game) -> int:
        sizes = sorted(self.sizes) or [1]
        count = self.rng.choice(sizes)
        if self.max_cards is not None:
            room = self.max_cards - game.bought
            fitting = [s for s in sizes if s <= room]
            count = min(count, fitting[-1]) if fitting else 0
        if self.balance is not None and game.card_price:
            affordable = [s for s in sizes if s * game.card_price <= self.balance]
            count = min(count, affordable[-1]) if affordable else 0
        return count

    def _purchase(self, game_id: int, game: _Game, now: float) -> Call:
        game.buy_at = None
        count = self._count(game)
        self.purchase_seq += 1
        key = f"sim-{self.profile.device_id}-{game_id}-{self.purchase_seq}"
        if count == 0:
            count = min(self.sizes or (1,))  # it cannot afford any: the server's refusal is counted
        measured = self._measured(now)
        self.purchases[key] = _Purchase(key, game_id, count, now, now, measured)
        if measured:
            self.stats.purchases_sent += 1
        return self._purchase_call(self.purchases[key])

    def _purchase_call(self, purchase: _Purchase) -> Call:
        body = {
            "card": self.profile.card_number,
            "cards": purchase.count,
            "key": purchase.key,
            "game": purchase.game,
        }
        return Call("purchase", "POST", PATHS["purchase"], body, key=purchase.key)

    def _resend(self, purchase: _Purchase, now: float) -> Call:
        purchase.in_flight = True
        purchase.last_sent = now
        self.stats.purchase_retries += 1
        return self._purchase_call(purchase)

    # --- the connection -------------------------------------------------------------------------------

    def on_connect(self, now: float) -> list[Call]:
        """The socket is open: (re)load the snapshot, so nothing published before is missed."""
        self.connected = True
        self.stats.connects += 1
        self.in_flight.clear()  # answers of the old connection's calls will not come
        for purchase in self.purchases.values():
            purchase.in_flight = False  # sent again at once below (same key)
            purchase.last_sent = now - self.config.retry_after
        self._want_snapshot(recovery=bool(self.seqs))
        return self.tick(now)

    def on_disconnect(self, now: float) -> None:
        if self.connected:
            self.stats.disconnects += 1
        self.connected = False

    # --- answers -------------------------------------------------------------------------------------

    def on_answer(self, call: Call, status: int, body: Any, now: float) -> list[Call]:
        """The answer to `call` (status 0: no answer, the connection failed)."""
        data = body if isinstance(body, dict) else {}
        if call.kind == "purchase":
            return self._on_purchase(call, status, data, now)
        self.in_flight.discard(call.kind)
        if status in TRANSIENT_STATUSES or not 200 <= status < 300:
            if status in TRANSIENT_STATUSES:
                self.stats.errors += 1
                self.retry_at = now + self.config.retry_after
            else:
                code = str(data.get("code") or status)
                self.stats.refused_codes[code] = self.stats.refused_codes.get(code, 0) + 1
                self.retry_at = now + 5 * self.config.retry_after  # refused (not verified, ...): later
            if call.kind == "snapshot":
                self.snapshot_wanted = True
            self.wakeup = True
            return []
        self.retry_at = None
        if call.kind == "hello":
            self.hello_done = True
        elif call.kind == "card":
            self.card_done = True
            self._set_balance(money(data.get("balance")), first=True)
        elif call.kind == "snapshot":
            self._on_snapshot(data, now)
        self.wakeup = True
        return self.tick(now)

    def _on_purchase(self, call: Call, status: int, data: dict[str, Any], now: float) -> list[Call]:
        purchase = self.purchases.get(call.key)
        if purchase is None:
            return []  # an answer to a try already answered
        stats = self.stats
        if status in TRANSIENT_STATUSES:
            purchase.in_flight = False  # again after retry_after, same key
            purchase.last_sent = now
            stats.errors += 1
            self.wakeup = True
            return []
        del self.purchases[call.key]
        game = self._game(purchase.game)
        if purchase.measured:
            stats.purchase_latencies.append(now - purchase.first_sent)
        if 200 <= status < 300:
            cards = data.get("cards")
            count = len(cards) if isinstance(cards, list) else purchase.count
            game.bought += count
            game.done = True
            if purchase.measured:
                stats.purchases_ok += 1
                if data.get("replayed"):
                    stats.purchases_replayed += 1
            stats.cards_bought += count
            amount = money(data.get("amount"))
            if amount is None and game.card_price is not None:
                amount = game.card_price * count
            stats.spent += amount or Decimal(0)
            self._set_balance(money(data.get("balance")))
        else:
            code = str(data.get("code") or status)
            if purchase.measured:
                stats.purchases_refused += 1
            stats.refused_codes[code] = stats.refused_codes.get(code, 0) + 1
            if code in FINAL_REFUSALS or 400 <= status < 500:
                game.done = True
            acknowledge = self._reality_ack(data)
            if acknowledge is not None:
                return [acknowledge, *self.tick(now)]
        return self.tick(now)

    def _reality_ack(self, data: dict[str, Any]) -> Call | None:
        """The acknowledgement of the reality check a refusal says is due (once at a time), or None."""
        error = data["error"] if isinstance(data.get("error"), dict) else data
        details = error.get("details")
        check = as_int(details.get("check")) if isinstance(details, dict) else None
        if error.get("code") != REALITY_CHECK_DUE or check is None or "reality" in self.in_flight:
            return None
        self.in_flight.add("reality")
        self.stats.reality_checks += 1
        return Call("reality", "POST", PATHS["reality"], {"card": self.profile.card_number, "check": check})

    def _set_balance(self, balance: Decimal | None, *, first: bool = False) -> None:
        if balance is None:
            return
        self.balance = balance
        if first and self.first_balance is None:
            self.first_balance = balance

    def _on_snapshot(self, data: dict[str, Any], now: float) -> None:
        """The terminal's snapshot (the device API's ``snapshot``): the speciality's rules, the selling and
        drawing games, the inserted card's balance and cards, and the seqs of its two streams where given."""
        stats = self.stats
        stats.snapshots += 1
        if self.recovering:
            stats.recovered += 1
            self.recovering = False
        seqs = data.get("seqs")
        if isinstance(seqs, dict):
            for stream, seq in seqs.items():
                if as_int(seq) is not None:
                    self.seqs[str(stream)] = max(self.seqs.get(str(stream), 0), int(seq))
                    self._name_stream(str(stream))
        for key in ("rules", "speciality"):
            rules = data.get(key)
            if isinstance(rules, dict) and "purchase_sizes" in rules:
                self._read_rules(rules)
        card = data.get("card") or data.get("player")
        card = card if isinstance(card, dict) else {}
        self._set_balance(money(card.get("balance")), first=True)
        held = _cards_by_game(card)
        for row in (data.get("selling"), data.get("drawing")):
            game_id = as_int(row.get("game")) if isinstance(row, dict) else None
            if not isinstance(row, dict) or game_id is None:
                continue
            state = str(row.get("state") or ("selling" if row is data.get("selling") else "drawing"))
            if state not in ("selling", "drawing"):
                continue  # the last game closed, kept on show: nothing more happens in it
            game = self._game(game_id)
            game.state = state
            game.number = as_int(row.get("number")) or game.number
            close = wall_of(row.get("sales_close_at"))
            if close is not None:
                game.sales_close_at = close
            price = money(row.get("card_price"))
            if price is not None:
                game.card_price = price
            mine = max(held.get(game_id, 0), as_int(row.get("mine")) or 0)
            if mine:
                if game.bought == 0:
                    stats.games_played += 1
                game.bought = max(game.bought, mine)
                game.done = True  # it bought for this game already (an earlier run, or a lost answer)
            balls = row.get("balls")
            if isinstance(balls, list):
                game.last_ordinal = max(game.last_ordinal, len(balls))
            if state != "selling":
                game.done = True
        self.ready = True

    def _read_rules(self, rules: dict[str, Any]) -> None:
        sizes = rules.get("purchase_sizes")
        if isinstance(sizes, list):
            allowed = tuple(s for s in sizes if as_int(s) and s > 0)
            wanted = tuple(s for s in self.config.sizes if s in allowed)
            self.sizes = wanted or allowed or self.sizes
        if as_int(rules.get("max_cards")):
            self.max_cards = int(rules["max_cards"])

    def _name_stream(self, stream: str) -> None:
        if stream.startswith("terminal."):
            self.own_stream = stream
        elif stream.startswith("room."):
            self.room_stream = stream

    # --- frames --------------------------------------------------------------------------------------

    def on_frame(self, frame: dict[str, Any], now: float, wall: float) -> list[Call]:
        """One frame of the socket: an event ``{stream, seq, type, at, data}`` or a head."""
        stats = self.stats
        kind = frame.get("type")
        stream = frame.get("stream")
        if not isinstance(stream, str):
            return []
        self._name_stream(stream)
        if kind == HEAD:
            head = as_int(frame.get("head"))
            if head is not None and self.ready and head > self.seqs.get(stream, 0):
                # The sweep reads the head once the event is committed, maybe before the event itself has
                # come through the layer: the snapshot only if the event is still missing a moment later.
                self.heads_due[stream] = (head, now + self.config.head_grace)
                self.wakeup = True
            return []
        seq = as_int(frame.get("seq"))
        if seq is None:
            return []
        measured = self._measured(now)
        if measured:
            stats.frames += 1
        last = self.seqs.get(stream)
        if last is not None and seq <= last:
            return []  # already in the snapshot (or a duplicate)
        if last is not None and seq > last + 1:
            if measured:
                stats.lost += seq - last - 1
                stats.gaps += 1
            self._want_snapshot(recovery=True)
        self.seqs[stream] = seq
        data = frame.get("data")
        if not isinstance(data, dict):
            data = {}
        if stream.startswith("terminal."):
            self._on_own(str(kind), data, measured)
        else:
            self._on_room(str(kind), data, frame, measured, wall)
        return self.tick(now)

    def _on_room(
        self, kind: str, data: dict[str, Any], frame: dict[str, Any], measured: bool, wall: float
    ) -> None:
        game_id = as_int(data.get("game"))
        if game_id is None:
            return
        game = self._game(game_id)
        game.number = as_int(data.get("number")) or game.number
        state = data.get("state")
        if isinstance(state, str):
            game.state = state
        if kind == SALES_OPENED:
            game.sales_close_at = wall_of(data.get("sales_close_at"))
            game.card_price = money(data.get("card_price")) or game.card_price
            self.wakeup = True
        elif kind == SALES_CLOSED:
            game.done = True
            game.buy_at = None
        elif kind == BALL:
            ordinal = as_int(data.get("ordinal"))
            if ordinal is not None:
                game.ordinals.add(ordinal)
                game.last_ordinal = max(game.last_ordinal, ordinal)
            if measured:
                self.stats.balls += 1
                at = wall_of(frame.get("at"))
                if at is not None:
                    self.stats.ball_delays.append(wall - at)
        elif kind == CLOSED:
            balls = as_int(data.get("balls"))
            if balls is not None:
                game.last_ordinal = max(game.last_ordinal, balls)
            if measured and game.ordinals:
                self.stats.balls_missed += sum(
                    1 for n in range(min(game.ordinals), game.last_ordinal + 1) if n not in game.ordinals
                )
            # Nothing more happens in it: forget it (a long run keeps no game for ever).
            self.games.pop(game_id, None)

    def _on_own(self, kind: str, data: dict[str, Any], measured: bool) -> None:
        stats = self.stats
        if measured:
            stats.own_messages += 1
        changed = False
        if kind == T_CARDS:
            game_id = as_int(data.get("game"))
            cards = data.get("cards")
            if game_id is not None and isinstance(cards, list):
                game = self._game(game_id)
                changed = bool(cards)
                if game.bought == 0 and cards:
                    stats.games_played += 1
        elif kind == T_PRIZE:
            game_id, card = as_int(data.get("game")), as_int(data.get("card"))
            amount = money(data.get("amount")) or Decimal(0)
            key = (game_id or 0, str(data.get("code")), card or 0)
            if key not in self.prizes_seen:
                self.prizes_seen[key] = amount
                stats.prizes += 1
                stats.prize_amount += amount
                changed = True
        elif kind == T_STATE:
            changed = True
        balance = money(data.get("balance"))
        if kind == T_BALANCE:
            changed = balance is not None and balance != self.balance  # the same balance told again: idle
        self._set_balance(balance)
        if measured and not changed:
            stats.idle_messages += 1


def _cards_by_game(card: dict[str, Any]) -> dict[int, int]:
    """How many cards the inserted card holds per game: {"games": [{"game", "cards": [...]}]} (the device
    API) or {"cards": {"<game>": [...]}} (the terminal page's read model)."""
    out: dict[int, int] = {}
    games = card.get("games")
    if isinstance(games, list):
        for row in games:
            if (
                isinstance(row, dict)
                and as_int(row.get("game")) is not None
                and isinstance(row.get("cards"), list)
            ):
                out[int(row["game"])] = len(row["cards"])
    by_game = card.get("cards")
    if isinstance(by_game, dict):
        for game, cards in by_game.items():
            if str(game).isdigit() and isinstance(cards, list):
                out[int(game)] = len(cards)
    return out


# --- reports -------------------------------------------------------------------------------------------


@dataclass
class Report:
    """The statistics of a run (one process, or merged), JSON-able for a benchmark's processes."""

    terminals: int = 0
    seconds: float = 0.0
    counters: dict[str, int] = field(default_factory=dict)
    refused_codes: dict[str, int] = field(default_factory=dict)
    purchase_latencies: list[float] = field(default_factory=list)
    ball_delays: list[float] = field(default_factory=list)
    balls_per_terminal: list[int] = field(default_factory=list)
    spent: Decimal = Decimal(0)
    prize_amount: Decimal = Decimal(0)
    # Balance checks (a final card read per terminal): first + prizes seen - spent = final, or not.
    balance_checked: int = 0
    balance_mismatched: int = 0
    balance_unexplained: Decimal = Decimal(0)  # sum of |final - expected| over the terminals checked

    COUNTERS = (
        "purchases_sent",
        "purchases_ok",
        "purchases_replayed",
        "purchases_refused",
        "purchase_retries",
        "cards_bought",
        "balls",
        "balls_missed",
        "frames",
        "lost",
        "gaps",
        "snapshots",
        "recovered",
        "heads_ahead",
        "own_messages",
        "idle_messages",
        "prizes",
        "games_played",
        "connects",
        "disconnects",
        "errors",
        "reality_checks",
    )

    @classmethod
    def from_brains(cls, brains: Iterable[TerminalBrain], *, seconds: float) -> Report:
        report = cls(seconds=seconds, counters=dict.fromkeys(cls.COUNTERS, 0))
        for brain in brains:
            s = brain.stats
            report.terminals += 1
            for name in cls.COUNTERS:
                report.counters[name] += getattr(s, name)
            simulation.add_counts(report.refused_codes, s.refused_codes)
            report.purchase_latencies.extend(s.purchase_latencies)
            report.ball_delays.extend(s.ball_delays)
            report.balls_per_terminal.append(s.balls)
            report.spent += s.spent
            report.prize_amount += s.prize_amount
        return report

    def check_balances(self, brains: Iterable[TerminalBrain], finals: dict[int, Decimal]) -> None:
        """Compare each terminal's final balance (read from the server, by device id) with what it saw."""
        for brain in brains:
            final = finals.get(brain.profile.device_id)
            if final is None or brain.first_balance is None:
                continue
            expected = brain.first_balance - brain.stats.spent + brain.stats.prize_amount
            self.balance_checked += 1
            if final != expected:
                self.balance_mismatched += 1
                self.balance_unexplained += abs(final - expected)

    def merge(self, other: Report) -> Report:
        merged = Report(
            terminals=self.terminals + other.terminals,
            seconds=max(self.seconds, other.seconds),
            counters=simulation.merged_counts(self.COUNTERS, self.counters, other.counters),
            purchase_latencies=self.purchase_latencies + other.purchase_latencies,
            ball_delays=self.ball_delays + other.ball_delays,
            balls_per_terminal=self.balls_per_terminal + other.balls_per_terminal,
            spent=self.spent + other.spent,
            prize_amount=self.prize_amount + other.prize_amount,
            balance_checked=self.balance_checked + other.balance_checked,
            balance_mismatched=self.balance_mismatched + other.balance_mismatched,
            balance_unexplained=self.balance_unexplained + other.balance_unexplained,
        )
        for codes in (self.refused_codes, other.refused_codes):
            simulation.add_counts(merged.refused_codes, codes)
        return merged

    def to_json(self) -> dict[str, Any]:
        return {
            "terminals": self.terminals,
            "seconds": self.seconds,
            "counters": self.counters,
            "refused_codes": self.refused_codes,
            "purchase_latencies": [round(v, 5) for v in self.purchase_latencies],
            "ball_delays": [round(v, 5) for v in self.ball_delays],
            "balls_per_terminal": self.balls_per_terminal,
            "spent": str(self.spent),
            "prize_amount": str(self.prize_amount),
            "balance_checked": self.balance_checked,
            "balance_mismatched": self.balance_mismatched,
            "balance_unexplained": str(self.balance_unexplained),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        return cls(
            terminals=int(data["terminals"]),
            seconds=float(data["seconds"]),
            counters={str(k): int(v) for k, v in data["counters"].items()},
            refused_codes={str(k): int(v) for k, v in data["refused_codes"].items()},
            purchase_latencies=[float(v) for v in data["purchase_latencies"]],
            ball_delays=[float(v) for v in data["ball_delays"]],
            balls_per_terminal=[int(v) for v in data["balls_per_terminal"]],
            spent=Decimal(data["spent"]),
            prize_amount=Decimal(data["prize_amount"]),
            balance_checked=int(data["balance_checked"]),
            balance_mismatched=int(data["balance_mismatched"]),
            balance_unexplained=Decimal(data["balance_unexplained"]),
        )

    def lines(self) -> list[str]:
        """A human summary."""
        c = self.counters
        ms = 1000.0
        lat = sorted(self.purchase_latencies)
        delays = sorted(self.ball_delays)
        balls = sorted(self.balls_per_terminal)
        out = [
            f"terminals:   {self.terminals}, measured {self.seconds:.1f} s",
            f"purchases:   sent {c['purchases_sent']}, ok {c['purchases_ok']} "
            f"(replayed {c['purchases_replayed']}), refused {c['purchases_refused']}, "
            f"retries {c['purchase_retries']}; {c['cards_bought']} cards, spent {self.spent}",
            f"answered in: p50 {percentile(lat, 50) * ms:.1f} ms, p99 {percentile(lat, 99) * ms:.1f} ms, "
            f"max {(lat[-1] if lat else math.nan) * ms:.1f} ms",
            f"balls:       {c['balls']} received, per terminal min {balls[0] if balls else 0} "
            f"p50 {percentile(balls, 50) if balls else 0:.0f} max {balls[-1] if balls else 0}; "
            f"delay p50 {percentile(delays, 50) * ms:.1f} ms, p99 {percentile(delays, 99) * ms:.1f} ms, "
            f"max {(delays[-1] if delays else math.nan) * ms:.1f} ms; missed {c['balls_missed']}",
            f"messages:    {c['frames']} frames, lost {c['lost']} in {c['gaps']} gaps, heads ahead "
            f"{c['heads_ahead']}; snapshots {c['snapshots']} ({c['recovered']} recoveries)",
            f"own stream:  {c['own_messages']} messages, {c['idle_messages']} that told it nothing new",
            f"prizes:      {c['prizes']} seen, {self.prize_amount}; balances checked {self.balance_checked}, "
            f"mismatched {self.balance_mismatched} (unexplained {self.balance_unexplained})",
            f"connection:  connects {c['connects']}, disconnects {c['disconnects']}, errors {c['errors']}",
        ]
        if self.refused_codes:
            codes = ", ".join(f"{k} {v}" for k, v in sorted(self.refused_codes.items()))
            out.append(f"refusals:    {codes}")
        return out


# --- HTTP ------------------------------------------------------------------------------------------------


class HttpConnection:
    """One keep-alive HTTP/1.1 connection (a terminal's): a request at a time, JSON in and out. Reconnects
    once when the server closed an idle connection; any other failure answers status 0."""

    def __init__(self, base: str, authorization: str, *, timeout: float = 30.0) -> None:
        parts = urlsplit(base)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.tls = parts.scheme == "https"
        self.authorization = authorization
        self.timeout = timeout
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.lock = asyncio.Lock()

    async def close(self) -> None:
        writer, self.reader, self.writer = self.writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, Any]:
        async with self.lock:
            for attempt in range(2):
                fresh = self.writer is None
                try:
                    async with asyncio.timeout(self.timeout):
                        if self.writer is None:
                            self.reader, self.writer = await asyncio.open_connection(
                                self.host, self.port, ssl=self.tls or None
                            )
                        return await self._exchange(method, path, body)
                except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError):
                    await self.close()
                    if fresh or attempt:
                        return 0, None
            return 0, None

    async def _exchange(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        assert self.reader is not None
        assert self.writer is not None
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Authorization: {self.authorization}\r\nAccept: application/json\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise asyncio.IncompleteReadError(b"", None)
        status = int(status_line.split()[1])
        headers: dict[str, str] = {}
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            payload = bytearray()
            while True:
                size = int((await self.reader.readline()).split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                payload += chunk[:-2]
            raw = bytes(payload)
        else:
            raw = await self.reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            await self.close()
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, None


# --- the network driver ----------------------------------------------------------------------------------


def socket_url(base: str, profile: TerminalProfile) -> str:
    """``ws://host:port/ws/electronic/terminal/?device=<id>&token=<token>`` from ``http://host:port``."""
    parts = urlsplit(base)
    scheme = "wss" if parts.scheme in ("https", "wss") else "ws"
    return (
        f"{scheme}://{parts.netloc}{WS_PATH}?device={profile.device_id}&token={quote(profile.token, safe='')}"
    )


class _Caller:
    """A terminal's queue of calls, made in order by one task: over HTTP, but a purchase as a frame on the
    open socket (config.purchase_door "socket"), answered by a ``purchase.answer`` frame with its key."""

    def __init__(self, brain: TerminalBrain, http: HttpConnection, clock: Clock, wake: asyncio.Event) -> None:
        self.brain, self.http, self.clock, self.wake = brain, http, clock, wake
        self.queue: asyncio.Queue[Call] = asyncio.Queue()
        self.socket: Any = None  # the open socket, while purchases go over it
        self.pending: dict[str, Call] = {}  # purchase frames sent on it, by key
        self.task = asyncio.get_running_loop().create_task(self._run())

    def put(self, calls: list[Call]) -> None:
        for call in calls:
            self.queue.put_nowait(call)

    def opened(self, ws: Any) -> None:
        if self.brain.config.purchase_door == "socket":
            self.socket = ws

    def closed(self) -> None:
        """The answers of frames sent on the socket will not come (the brain sends them again on connect)."""
        self.socket = None
        self.pending.clear()

    def on_answer_frame(self, frame: dict[str, Any]) -> None:
        call = self.pending.pop(str(frame.get("key")), None)
        if call is None:
            return  # an answer to a try already answered (or of a closed socket)
        status = as_int(frame.get("status")) or 0
        body = frame.get("result") if 200 <= status < 300 else frame.get("error")
        self.put(self.brain.on_answer(call, status, body, self.clock()))
        self.wake.set()

    async def _run(self) -> None:
        while True:
            call = await self.queue.get()
            if call.kind == "purchase" and self.socket is not None and call.body is not None:
                self.pending[call.key] = call
                with contextlib.suppress(*simulation.connection_errors()):  # the brain resends on reconnect
                    await self.socket.send(json.dumps({"type": PURCHASE_FRAME, **call.body}))
                continue
            status, body = await self.http.request(call.method, call.path, call.encoded())
            self.put(self.brain.on_answer(call, status, body, self.clock()))
            self.wake.set()

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
        await self.http.close()


async def run_terminal(
    brain: TerminalBrain,
    base: str,
    *,
    stop: asyncio.Event,
    clock: Clock = time.monotonic,
    drain_seconds: float = 5.0,
    on_error: Callable[[str], None] | None = None,
) -> None:
    """Drive one brain until ``stop`` is set (then answers still pending get ``drain_seconds``); the socket
    reconnects with a backoff when it fails or drops."""
    wake = asyncio.Event()
    caller = _Caller(brain, HttpConnection(base, brain.profile.authorization), clock, wake)
    backoff = simulation.Backoff(brain.rng)
    try:
        while not stop.is_set():
            try:
                async with simulation.socket(
                    socket_url(base, brain.profile),
                    # A busy server accepts slowly (2,000 sockets took minutes here): a short timeout only
                    # turns a queue into a storm of retries.
                    open_timeout=120,
                    max_size=1 << 20,
                    max_queue=256,
                    origin=origin_of(base),  # the socket is a page's (halls.ws_security.browser_socket)
                ) as ws:
                    backoff.reset()
                    caller.opened(ws)
                    caller.put(brain.on_connect(clock()))
                    reader = asyncio.get_running_loop().create_task(_read(ws, brain, caller, clock, wake))
                    try:
                        while not reader.done() and not stop.is_set():
                            caller.put(brain.tick(clock()))
                            delay = max(0.001, brain.next_deadline(clock()) - clock())
                            wake.clear()
                            with contextlib.suppress(TimeoutError):
                                async with asyncio.timeout(delay):
                                    await wake.wait()
                    finally:
                        caller.closed()
                        reader.cancel()
                        with contextlib.suppress(asyncio.CancelledError, *simulation.connection_errors()):
                            await reader
            except simulation.connection_errors() as exc:
                brain.stats.errors += 1
                if on_error is not None:
                    on_error(f"terminal {brain.profile.device_id}: {exc!r}")
            brain.on_disconnect(clock())
            if stop.is_set():
                break
            await simulation.pause(backoff.next(), stop)
        brain.stop()
        deadline = clock() + drain_seconds
        while not brain.idle and clock() < deadline:
            caller.put(brain.tick(clock()))
            await asyncio.sleep(0.05)
    finally:
        await caller.close()


def origin_of(base: str) -> Any:
    """The Origin a terminal page at `base` sends (``http://host:port``)."""
    parts = urlsplit(base)
    scheme = "https" if parts.scheme in ("https", "wss") else "http"
    return f"{scheme}://{parts.netloc}"


async def _read(ws: Any, brain: TerminalBrain, caller: _Caller, clock: Clock, wake: asyncio.Event) -> None:
    try:
        async for frame in simulation.frames(ws):
            if frame.get("type") == PURCHASE_ANSWER:
                caller.on_answer_frame(frame)
            else:
                caller.put(brain.on_frame(frame, clock(), time.time()))
                if brain.take_wakeup():
                    wake.set()
    finally:
        wake.set()


async def final_balances(
    base: str, brains: Sequence[TerminalBrain], concurrency: int = 50
) -> dict[int, Decimal]:
    """Each terminal's card balance as the server has it now (a ``card`` call), by device id."""
    gate = asyncio.Semaphore(concurrency)
    out: dict[int, Decimal] = {}

    async def one(brain: TerminalBrain) -> None:
        async with gate:
            http = HttpConnection(base, brain.profile.authorization)
            try:
                body = json.dumps({"card": brain.profile.card_number}).encode()
                status, data = await http.request("POST", PATHS["card"], body)
            finally:
                await http.close()
        if 200 <= status < 300 and isinstance(data, dict):
            balance = money(data.get("balance"))
            if balance is not None:
                out[brain.profile.device_id] = balance

    await asyncio.gather(*(one(brain) for brain in brains))
    return out


async def run_simulation(
    terminals: Sequence[TerminalProfile],
    base_url: str | Sequence[str],
    config: SimConfig,
    *,
    duration: float | None = None,
    stop: asyncio.Event | None = None,
    warmup: float = 0.0,
    connect_rate: float = 200.0,
    drain_seconds: float = 5.0,
    settle_seconds: float = 0.0,
    check_balances: bool = True,
    on_error: Callable[[str], None] | None = None,
    brains_out: list[TerminalBrain] | None = None,
) -> Report:
    """Run every terminal until ``duration`` seconds have passed (or ``stop`` is set), then read every
    card's final balance (after ``settle_seconds``: prizes of a ball in flight) and report.

    Connections open at ``connect_rate`` per second; statistics count from ``warmup`` seconds after the
    last terminal connected. Several base URLs (servers) take the terminals in turn."""
    bases = [base_url] if isinstance(base_url, str) else list(base_url)
    clock = time.monotonic
    stop = stop or asyncio.Event()
    ramp = simulation.Ramp(clock(), len(terminals), connect_rate, warmup)
    measure_from = ramp.measure_from
    config = dataclasses.replace(config, measure_from=measure_from)
    brains = [TerminalBrain(t, config, now=ramp.start) for t in terminals]
    if brains_out is not None:
        brains_out.extend(brains)

    async def drive(i: int, brain: TerminalBrain) -> None:
        await run_terminal(
            brain,
            bases[i % len(bases)],
            stop=stop,
            clock=clock,
            drain_seconds=drain_seconds,
            on_error=on_error,
        )

    end = await simulation.run_devices(brains, drive, ramp=ramp, stop=stop, duration=duration, clock=clock)
    report = Report.from_brains(brains, seconds=max(0.0, end - measure_from))
    if check_balances:
        if settle_seconds > 0:
            await asyncio.sleep(settle_seconds)
        finals = await final_balances(bases[0], brains)
        report.check_balances(brains, finals)
    return report
