"""The fake authority (tests/door/fake_authority.py) as a real process, and how a test steers it."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.ports import free_port_in

SCRIPT = Path(__file__).with_name("fake_authority.py")
# The ports this area's processes may use (HALL_TEST_AUTHORITY_PORTS="8300-8399" by default).
PORTS = os.environ.get("HALL_TEST_AUTHORITY_PORTS", "8300-8399")


def free_port_in_range() -> int:
    return free_port_in(PORTS)


@dataclass
class FakeAuthority:
    port: int
    process: subprocess.Popen[str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def control(self, **what: Any) -> None:
        httpx.post(f"{self.url}/control", json=what, timeout=5).raise_for_status()

    def list_people(self, people: list[tuple[str, str, str]]) -> None:
        self.control(listed=[list(p) for p in people])

    def notices(self) -> list[dict[str, Any]]:
        answer = httpx.get(f"{self.url}/notices", timeout=5)
        answer.raise_for_status()
        return list(answer.json())

    def queries(self) -> int:
        return int(httpx.get(f"{self.url}/queries", timeout=5).json()["queries"])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_fake_authority() -> FakeAuthority:
    port = free_port_in_range()
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("ready"):
        process.kill()
        raise RuntimeError(f"the fake authority did not start: {line!r}")
    return FakeAuthority(port, process)
