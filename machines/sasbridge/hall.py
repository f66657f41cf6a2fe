"""The hall side of the bridge: the machine's WebSocket to the gateway (machines.consumers), in the product's
own protocol (machines.protocol), fed from the journal.

On each connection: ``hello`` (the last seq the journal gave), then every message the journal still holds,
oldest first, with its own seq (a retry after a cut: the gateway answers ``duplicate`` for what it already
had), then new ones as the host reads them, at most ``window`` unanswered at a time. Replies: an ack marks
its message done in the journal (accepted, duplicate, or refused for good); ``busy``/``server_error`` mean
"again later"; the ``welcome`` gives the levels and the machine's state; ``progressive`` broadcasts give the
levels to the SAS side; ``unlock`` (the cashier paid the hand pay, machines.services.handpay) asks the SAS
side for the remote hand-pay reset; ``lock link_lost`` (the hall lost us) is answered by a new hello.
Play control (machines.sasbridge.gate, the SAS side's LP 0x01/0x02) follows the hall's word: the welcome's
state, every ``lock`` (whatever its reason) and ``unlock``, and an accepted hit's ``lock`` (its hand pay);
a connection that ends tells the gate the hall is lost from then on.
Heartbeats keep the machine online when it has nothing to say. A lost connection is retried with a
jittered, doubling delay (0.5 s to 8 s).

A backlog (after a cut: everything the machine played meanwhile) goes through the gateway's HTTP batch door
(``POST /api/gateway/messages/``, ``Authorization: Device <asset>:<token>``, 200 messages a batch, the same
seqs and content) in a thread of its own, while the socket goes on with the broadcasts and the new
messages: one socket takes a message at a time, a batch takes 200 in one gateway call.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import urllib.error
import urllib.request
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


def word(value: Any) -> str:
    """A word the hall sent (a state, a lock reason), short, for the gate and the technician's log."""
    return str(value or "")[:40]


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
        batch_url: str = "",
        device_auth: str = "",
        batch_after: int = 50,
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
        self.batch_url = batch_url  # "" : no HTTP batches, the socket alone
        self.device_auth = device_auth
        self.batch_after = batch_after
        self.batching: threading.Thread | None = None
        self.batch_returned: list[int] = []  # seqs a batch could not place: the socket sends them
        self.batch_lock = threading.Lock()

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
                self.host.gate.lost(time.monotonic())
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
                waiting = self.batching is not None and self.batching.is_alive()
                due = [] if waiting else sorted(seq for seq, at in retry_at.items() if at <= now)
                for seq, body in self._bodies(due):
                    if len(inflight) >= self.window:
                        break
                    retry_at.pop(seq, None)
                    self._send(ws, body)
                    inflight[seq] = now
                    self.counters.add("resent")
                with self.batch_lock:
                    returned, self.batch_returned = self.batch_returned, []
                for seq in returned:
                    retry_at[seq] = now
                # The gateway takes a machine's seqs in order (a later one first makes a gap of the earlier):
                # a batch goes only when nothing is in flight on the socket, and the socket sends nothing
                # new while it is out.
                batching = self.batching is not None and self.batching.is_alive()
                if self.batch_url and not batching and not inflight and not retry_at:
                    backlog = self.journal.pending(after=high, limit=200)
                    if len(backlog) > self.batch_after:
                        high = backlog[-1][0]
                        self.batching = threading.Thread(
                            target=self._post_batch, args=(backlog,), daemon=True
                        )
                        self.batching.start()
                        batching = True
                if not batching and len(inflight) < self.window:
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

    def _post_batch(self, backlog: list[tuple[int, str]]) -> None:
        """One HTTP batch of the backlog; every reply handled as a socket's ack would be."""
        body = ('{"messages":[' + ",".join(text for _, text in backlog) + "]}").encode()
        request = urllib.request.Request(  # noqa: S310 (the hall's own URL, given by the operator)
            self.batch_url,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Authorization": self.device_auth},
        )
        returned = [seq for seq, _ in backlog]
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
                replies = json.loads(response.read())["replies"]
            self.counters.add("batches")
            returned = []
            for (seq, _), reply in zip(backlog, replies, strict=True):
                status, code = reply.get("status"), str(reply.get("code") or "")
                self._locked_by(reply)
                if status in ("accepted", "duplicate"):
                    self.journal.done(seq, str(status))
                    self.counters.add(f"acked_{status}")
                elif code in TRANSIENT:
                    returned.append(seq)
                else:
                    self.journal.done(seq, f"rejected:{code}")
                    self.counters.add("acked_rejected")
                    log.error("the hall refused message %d: %s", seq, code)
        except (OSError, ValueError, KeyError, TypeError, urllib.error.URLError) as exc:
            self.counters.add("batch_failures")
            log.warning("a batch of %d messages did not go through: %s", len(backlog), exc)
        with self.batch_lock:
            self.batch_returned += returned

    def _locked_by(self, reply: dict[str, Any]) -> None:
        """An accepted message that locked the machine (a hit: its hand pay) locks play too. A duplicate's
        ``lock`` is the hit's as first taken, perhaps paid since: not the machine's state now."""
        lock = reply.get("lock")
        if lock and reply.get("status") == "accepted":
            self.host.gate.locked(word(lock))
            log.info("the hall locked the machine with its answer (%s)", word(lock))

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
            state, reason = word(message.get("state")), word(message.get("lock_reason"))
            self.host.gate.welcomed(state, reason)
            log.info("welcomed by the hall: %s %s", state or "(no state)", reason)
            if (
                message.get("state") == "in_service"
                and self.host.handpay is not None
                and self.host.hit_reported_unpaid
            ):
                self.host.request_handpay_reset()  # paid while we were away
            return True
        if kind == "unlock":
            self.counters.add("hall_unlocks")
            self.host.gate.unlocked()
            log.info("the hall unlocks the machine")
            if self.host.handpay is not None:
                log.info("the hall says the hand pay was paid: remote hand-pay reset")
                self.host.request_handpay_reset()
            return False
        if kind == "lock":
            reason = word(message.get("reason"))
            self.counters.add("hall_locks")
            self.host.gate.locked(reason)
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
        self._locked_by(message)
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
