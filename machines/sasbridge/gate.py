"""Whether the machine may play, as the hall says it: the bridge's side of the SAS shutdown/startup (LP 0x01
and 0x02, sent by machines.sasbridge.host).

The hall's word comes from its gateway (machines.sasbridge.hall): a ``welcome`` with the machine's state, a
``lock`` with its reason (``link_lost``, ``operator``, ``hand_pay``, or any other the hall sends), an
``unlock``, an ``ack`` that says the machine is now locked (a hit: ``hand_pay``). In service: play enabled;
locked for any reason: play disabled, so the machine takes no play the hall would refuse
(``machine_locked``). And when the bridge has lost the hall (no connection welcomed) for longer than
``lost_after`` seconds, play is disabled whatever the hall last said, until the hall is back and says the
machine is in service. Before the hall said anything (the bridge just started) the machine is left as it is,
unless the hall stays out of reach past the same window.

The hand pay is not decided here: a machine with a hand pay pending holds itself until the remote hand-pay
reset (machines.sasbridge.host, LP 0x94), whatever play control says, and the two locks are lifted each by
its own long poll.

Pure and thread-safe: the hall thread tells it, the SAS thread asks it; times are the callers' monotonic
seconds.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

IN_SERVICE = "in_service"
HALL_LOST = "hall_lost"


@dataclass(frozen=True)
class Wanted:
    """What the machine should be: ``enable`` (None: leave it as it is) and why, for the technician's log."""

    enable: bool | None
    reason: str


class PlayGate:
    def __init__(self, lost_after: float, now: float) -> None:
        self.lock = threading.Lock()
        self.lost_after = lost_after
        self.state: str | None = None  # what the hall last said: in_service, or locked (its reason below)
        self.reason = ""
        self.connected = False  # a connection to the hall, welcomed
        self.since = now  # when the hall was lost (or the bridge started)

    def welcomed(self, state: str, reason: str) -> None:
        """A welcome: the hall is back; its state (in_service, locked, ...) when it gave one."""
        with self.lock:
            self.connected = True
            if state:
                self.state, self.reason = state, reason

    def locked(self, reason: str) -> None:
        with self.lock:
            self.state, self.reason = "locked", reason

    def unlocked(self) -> None:
        with self.lock:
            self.state, self.reason = IN_SERVICE, ""

    def lost(self, now: float) -> None:
        """The connection to the hall ended (or never came to a welcome)."""
        with self.lock:
            if self.connected:
                self.connected = False
                self.since = now

    def hall_lost(self, now: float) -> bool:
        with self.lock:
            return not self.connected and now - self.since > self.lost_after

    def wanted(self, now: float) -> Wanted:
        with self.lock:
            if not self.connected and now - self.since > self.lost_after:
                return Wanted(False, HALL_LOST)
            if self.state is None:
                return Wanted(None, "")
            if self.state == IN_SERVICE:
                return Wanted(True, IN_SERVICE)
            return Wanted(False, self.reason or self.state)
