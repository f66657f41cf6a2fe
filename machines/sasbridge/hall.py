"""The hall side of the bridge: the machine's WebSocket to the gateway (machines.consumers), in the product's
own protocol (machines.protocol), fed from the journal.

On each connection: ``hello`` (the last seq the journal gave), then every message the journal still holds,
oldest first, with its own seq (a retry after a cut: the gateway answers ``duplicate`` for what it already
had), then new ones as the host reads them, at most ``window`` unanswered at a time. Replies: an ack marks
its message done in the journal (accepted, duplicate, or refused for good); ``busy``/``server_error`` mean
"again later"; the ``welcome`` gives the levels and the machine's state; ``progressive`` broadcasts give the
levels to the SAS side; ``unlock`` (the cashier paid the hand pay, machines.services.handpay) asks the SAS
side for the remote hand-pay reset; ``lock link_lost`` (the hall lost us) is answered by a new hello.
Heartbeats keep the machine online when it has nothing to say. A lost connection is retried with a
jittered, doubling delay (0.5 s to 8 s).
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from decimal import Decimal, InvalidOperation
from typing import Any

from websockets.exceptions import WebSocketException
from websockets.sync.client import ClientConnection, connect

from machines.sasbridge.counters import Counters
from machines.sasbridge.host import SasHost
from machines.sasbridge.journal import Journal

log = logging.getLogger("sasbridge.hall")

SEQ_CONSUMED = frozenset({"seq_reused", "gap_reconciled", "bad_seq"})
TRANSIENT = frozenset({"busy", "server_error"})


def level_cents(levels: Any) -> list[tuple[str, int]] | None:
    """The broadcast's levels as (name, cents), in order; None when they are not readable."""
    if not isinstance(levels, list):
        return None
    out = []
    try:
        for level in levels:
            amount = Decimal(str(level["amount"]))
            out.append((str(level["level"]), int((amount * 100).to_integral_value())))
    except (KeyError, TypeError, InvalidOperation, ValueError):
        return None
    return out


class HallLink:
    def __init__(
        self,
        url: str,
        journal: Journal,
        host: SasHost,
        counters: Counters,
        *,
        software_version: str,
        window: int = 16,
        heartbeat_every: float = 1.0,
        ack_timeout: float = 10.0,
    ) -> None:
        self.url = url
        self.journal = journal
        self.host = host
        self.counters = counters
        self.software_version = software_version
        self.window = window
        self.heartbeat_every = heartbeat_every
        self.ack_timeout = ack_timeout
        self.wake = threading.Event()
        self.stop = threading.Event()
        self.connected = False
        self.rng = random.Random()

    def notify(self) -> None:
        self.wake.set()

    def run(self) -> None:
        delay = 0.5
        while not self.stop.is_set():
            try:
                with connect(self.url, open_timeout=5, close_timeout=1, max_size=2**20) as ws:
                    self.connected = True
                    self.counters.set("hall_connected", 1)
                    self.counters.add("hall_connects")
                    log.info("connected to the hall")
                    delay = 0.5
                    self._session(ws)
            except (OSError, WebSocketException, TimeoutError) as exc:
                if self.connected:
                    log.warning("hall link lost: %s", exc)
                else:
                    log.debug("hall not reachable: %s", exc)
            finally:
                if self.connected:
                    self.counters.add("hall_disconnects")
                self.connected = False
                self.counters.set("hall_connected", 0)
            self.stop.wait(self.rng.uniform(0.5, 1.0) * delay)
            delay = min(delay * 2, 8.0)

    def _send(self, ws: ClientConnection, payload: dict[str, Any] | str) -> None:
        ws.send(payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":")))
        self.last_sent = time.monotonic()

    def _session(self, ws: ClientConnection) -> None:
        self.last_sent = 0.0
        inflight: dict[int, float] = {}  # seq -> when sent
        retry_at: dict[int, float] = {}
        high = 0  # the highest seq sent on this connection
        welcomed = False
        hello_at = time.monotonic()
        self._send(
            ws,
            {"type": "hello", "last_seq": self.journal.last_seq(), "software_version": self.software_version},
        )
        while not self.stop.is_set():
            now = time.monotonic()
            if welcomed:
                # Answers that never came (or "again later" ones) go again, same seq, same content.
                for seq, sent in list(inflight.items()):
                    if now - sent > self.ack_timeout:
                        inflight.pop(seq)
                        retry_at[seq] = now
                due = sorted(seq for seq, at in retry_at.items() if at <= now)
                for seq, body in self._bodies(due):
                    if len(inflight) >= self.window:
                        break
                    retry_at.pop(seq, None)
                    self._send(ws, body)
                    inflight[seq] = now
                    self.counters.add("resent")
                if len(inflight) < self.window:
                    for seq, body in self.journal.pending(after=high, limit=self.window - len(inflight)):
                        self._send(ws, body)
                        inflight[seq] = now
                        high = max(high, seq)
                        self.counters.add("sent")
                if now - self.last_sent >= self.heartbeat_every:
                    self._send(ws, {"type": "heartbeat"})
            elif now - hello_at > self.ack_timeout:
                raise TimeoutError("no welcome")
            self.counters.set("journal_pending", len(inflight) + len(retry_at))
            self.wake.clear()
            try:
                text = ws.recv(timeout=0.05 if inflight or not welcomed else 0.2)
            except TimeoutError:
                continue
            while True:
                welcomed |= self._reply(ws, text, inflight, retry_at)
                try:
                    text = ws.recv(timeout=0)
                except TimeoutError:
                    break

    def _bodies(self, seqs: list[int]) -> list[tuple[int, str]]:
        if not seqs:
            return []
        wanted = set(seqs)
        return [(s, b) for s, b in self.journal.pending(after=min(seqs) - 1, limit=10_000) if s in wanted]

    def _reply(
        self, ws: ClientConnection, text: str | bytes, inflight: dict[int, float], retry_at: dict[int, float]
    ) -> bool:
        try:
            message = json.loads(text)
        except ValueError:
            self.counters.add("hall_bad_frames")
            return False
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "progressive":
            levels = level_cents(message.get("levels"))
            if levels:
                self.host.set_levels(levels)
                self.counters.add("hall_broadcasts")
            return False
        if kind == "ack":
            self._ack(message, inflight, retry_at)
            return False
        if kind == "welcome":
            self.counters.add("welcomes")
            last = message.get("last_seq")
            if isinstance(last, int) and not isinstance(last, bool):
                self.journal.raise_floor(last)
            levels = level_cents(message.get("levels"))
            if levels:
                self.host.set_levels(levels)
            if (
                message.get("state") == "in_service"
                and self.host.handpay is not None
                and self.host.hit_reported_unpaid
            ):
                self.host.request_handpay_reset()  # paid while we were away
            return True
        if kind == "unlock":
            self.counters.add("hall_unlocks")
            if self.host.handpay is not None:
                log.info("the hall says the hand pay was paid: remote hand-pay reset")
                self.host.request_handpay_reset()
            return False
        if kind == "lock":
            reason = str(message.get("reason") or "")
            self.counters.add("hall_locks")
            log.info("the hall locks the machine (%s)", reason)
            if reason == "link_lost":
                self._send(
                    ws,
                    {
                        "type": "hello",
                        "last_seq": self.journal.last_seq(),
                        "software_version": self.software_version,
                    },
                )
            return False
        return False

    def _ack(self, message: dict[str, Any], inflight: dict[int, float], retry_at: dict[int, float]) -> None:
        seq = message.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool):
            return
        status, code = message.get("status"), str(message.get("code") or "")
        inflight.pop(seq, None)
        if status in ("accepted", "duplicate"):
            self.journal.done(seq, str(status))
            self.counters.add(f"acked_{status}")
            return
        if code in TRANSIENT:
            retry_at[seq] = time.monotonic() + 1.0
            self.counters.add("acked_busy")
            return
        self.journal.done(seq, f"rejected:{code}")
        self.counters.add("acked_rejected")
        log.error("the hall refused message %d: %s", seq, code)
