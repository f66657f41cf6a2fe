"""machines.sasbridge.hall: the hall's word on play as the gateway says it (machines.consumers' frames), told
to the play gate (machines.sasbridge.gate) the SAS side reads for LP 0x01/0x02. The frames go through the hall
link's own reply handling, with a real journal; the socket is a recorder of what the bridge sends back. No
Django (the whole bridge against the live server: tests/e2e/test_sas_lock.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from machines.sasbridge.counters import Counters
from machines.sasbridge.gate import HALL_LOST, PlayGate, Wanted
from machines.sasbridge.hall import HallLink
from machines.sasbridge.host import SasHost
from machines.sasbridge.journal import Journal


class Socket:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, text: str) -> None:
        self.sent.append(json.loads(text))


class Line:
    framing_errors = 0

    def send(self, data: bytes, *, wakeup: bool) -> None:
        pass

    def read(self, timeout: float) -> None:
        return None

    def discard(self) -> int:
        return 0

    def fileno(self) -> int:
        return -1

    def close(self) -> None:
        pass


def hall(tmp_path: Path, gate: PlayGate) -> tuple[HallLink, Socket]:
    journal = Journal(str(tmp_path / "journal.sqlite3"))
    host = SasHost(
        Line(),
        address=1,
        denom_cents=20,
        group=1,
        asset="M-1",
        emit=lambda message, once=None: journal.append(message, once),
        remember=journal.add_once,
        counters=Counters(),
        gate=gate,
    )
    return HallLink("ws://127.0.0.1:1/", journal, host, Counters(), software_version="T"), Socket()


def test_the_gateways_frames_decide_whether_the_machine_plays(tmp_path: Path) -> None:
    gate = PlayGate(5.0, 0.0)
    link, ws = hall(tmp_path, gate)

    def say(**frame: Any) -> Wanted:
        link._reply(ws, json.dumps(frame), {}, {})  # type: ignore[arg-type]
        return gate.wanted(1.0)

    assert gate.wanted(1.0) == Wanted(None, "")  # nothing said yet: the machine left as it is
    gate.lost(0.0)
    assert say(type="welcome", last_seq=0) == Wanted(None, "")  # a welcome without a state: back, no word
    assert gate.wanted(60.0) == Wanted(None, "")
    welcome = {"type": "welcome", "last_seq": 0}
    assert say(**welcome, state="locked", lock_reason="operator") == Wanted(False, "operator")
    assert say(type="unlock") == Wanted(True, "in_service")
    # A hit taken: its ack says the machine is locked for its hand pay.
    assert say(type="ack", seq=1, status="accepted", lock="hand_pay") == Wanted(False, "hand_pay")
    assert say(type="unlock") == Wanted(True, "in_service")
    # The same hit sent again after a cut: the duplicate's lock is the hit's as first taken, paid since.
    assert say(type="ack", seq=1, status="duplicate", lock="hand_pay") == Wanted(True, "in_service")
    # The link watch lost us though we hear it: locked, a new hello, and its welcome in service.
    assert say(type="lock", reason="link_lost") == Wanted(False, "link_lost")
    assert ws.sent[-1]["type"] == "hello"
    assert say(**welcome, state="in_service", lock_reason="") == Wanted(True, "in_service")
    # Any other reason the gateway may send locks too (kept short for the technician's log).
    assert say(type="lock", reason="r" * 60) == Wanted(False, "r" * 40)
    assert say(**welcome, state="in_service", lock_reason="") == Wanted(True, "in_service")
    # The connection ends: the last word holds for the window, then play is disabled until a welcome.
    gate.lost(10.0)
    assert gate.wanted(15.0) == Wanted(True, "in_service")
    assert gate.wanted(15.1) == Wanted(False, HALL_LOST)
    assert say(**welcome, state="in_service", lock_reason="") == Wanted(True, "in_service")
