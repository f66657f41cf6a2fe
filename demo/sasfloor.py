"""The demo's linked machines through SAS host bridges (issue 31): ``manage.py demo --sas-machines N`` (or
``HALL_DEMO_SAS_MACHINES=N``) runs the first N demo machines as simulated SAS machines
(machines.sasbridge.egm), each a process on a pty of its own playing by itself, with a real bridge process
(machines.sasbridge.bridge) on the other end of the pty polling it and speaking the machine protocol to the
demo server's gateway, as a board beside a cabinet would. The rest stay on the direct simulator
(machines.simulator). Their levels, plays, hits and hand pays go the same way: the hall's broadcasts reach
the machine as SAS progressive broadcasts, its hits come back as 0x56/0x51 exceptions, and the attendant's
payment at the cashier resets the hand pay on the machine (LP 0x94).

Each start resumes the machines where the hall's record leaves them (machines.provisioning.resume_profile):
the machine's meters from the last snapshot and the plays since (a machine's meters live in its NVRAM), and
the bridge's journal starts above the machine's last seq, a machine whose progressive hit the hall holds
unpaid starts locked on its hand pay, and one the hall holds locked starts with play disabled (the bridge's
LP 0x01, which a machine keeps), enabled by its bridge once the hall says in service. The journals and the
device tokens live in a temporary folder of the demo's own (mode 0700) removed at stop, each token in a file
readable by its owner only (0600), which the bridge reads (``--token-file``): no token on a command line,
where ``ps`` would show it to every user of the host. The bridges log warnings and errors to the demo's
output.

The processes are started from a thread that lives until the stop (Linux's PR_SET_PDEATHSIG is tied to the
thread that started a child): if the demo dies outright, the kernel stops them. A bridge that exits on its
own is started again (its journal kept, as a board's service restarts); a machine that exits is reported.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from django.conf import settings

from machines.sasbridge.journal import Journal
from machines.simulator import MIN_GAME_SECONDS, Credentials

log = logging.getLogger("hall.demo.sas")

STOP_TIMEOUT = 5.0
RESTART_DELAY = 2.0
# The bridges' pace: SAS hosts poll every 40-200 ms; the answer's first byte is awaited 200 ms (a pty on a
# loaded demo host answers late, a real machine within SAS's 20 ms), the levels go out every 0.25 s.
POLL_EVERY = 0.04
RESPONSE_TIMEOUT = 0.2
_PR_SET_PDEATHSIG = 1


def enabled_count(limit: int) -> int:
    """How many of the demo's machines run through bridges (HALL_DEMO_SAS_MACHINES, 0 by default)."""
    try:
        return max(0, min(limit, int(os.environ.get("HALL_DEMO_SAS_MACHINES", "0"))))
    except ValueError:
        return 0


def meters_every() -> float:
    """Seconds between the bridges' meter reads (HALL_DEMO_SAS_METERS_SECONDS, 30 by default)."""
    try:
        return max(1.0, float(os.environ.get("HALL_DEMO_SAS_METERS_SECONDS", "30")))
    except ValueError:
        return 30.0


@dataclass(frozen=True)
class SasMachine:
    """One bridged machine: who it is, its device token, and how its simulated machine plays."""

    credentials: Credentials
    seed: int
    hit_probability: float
    # A progressive hit the hall holds unpaid (its SAS level, 1 the first, and amount in cents): the machine
    # starts locked on its hand pay, as it stopped, until the cashier's payment resets it.
    hand_pay: tuple[int, int] | None = None
    # The hall had it locked when the demo stopped: the bridge had disabled play on it (LP 0x01), which the
    # machine keeps across a power cycle, until the bridge's startup (LP 0x02) once the hall says in service.
    disabled: bool = False

    @property
    def denom_cents(self) -> int:
        return int(self.credentials.profile.denomination * 100)

    def credits(self, amount: Decimal) -> int:
        """An amount of the hall's meters in the machine's credits (whole: every bet is whole credits)."""
        return int(amount / self.credentials.profile.denomination)

    def game_seconds(self) -> float:
        """Seconds per game: the type's minimum and some thinking time, fixed per machine."""
        profile = self.credentials.profile
        base = MIN_GAME_SECONDS.get(profile.machine_type, 3.0)
        return round(base * (1 + random.Random(self.seed).uniform(0.0, 0.25)), 3)

    def egm_command(self) -> list[str]:
        meters = self.credentials.profile.meters
        command = [
            sys.executable,
            "-m",
            "machines.sasbridge.egm",
            "--address",
            "1",
            "--denom-cents",
            str(self.denom_cents),
            "--group",
            "1",
            "--seed",
            str(self.seed),
            "--play",
            str(10**9),
            "--every",
            str(self.game_seconds()),
            "--hit-probability",
            repr(self.hit_probability),
            "--coin-in",
            str(self.credits(meters.coin_in)),
            "--coin-out",
            str(self.credits(meters.coin_out)),
            "--jackpot-cents",
            str(int(meters.jackpots_paid * 100)),
            "--games-played",
            str(meters.games_played),
            "--credits",
            str(self.credits(meters.credits)),
        ]
        if self.hand_pay is not None:
            command += ["--handpay-level", str(self.hand_pay[0]), "--handpay-cents", str(self.hand_pay[1])]
        if self.disabled:
            command.append("--disabled")
        return command

    def write_token(self, folder: Path) -> Path:
        """The device token in a new file of `folder` that only its owner may read (0600)."""
        path = folder / f"{self.credentials.profile.asset}.token"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(self.credentials.token + "\n")
        return path

    def bridge_command(self, pty: str, ws_base: str, journal: Path, token_file: Path) -> list[str]:
        profile = self.credentials.profile
        command = [
            sys.executable,
            "-m",
            "machines.sasbridge.bridge",
            "--line",
            f"framed:{pty}",
            "--address",
            "1",
            "--denom-cents",
            str(self.denom_cents),
            "--group",
            "1",
            "--hall",
            ws_base,
            "--asset",
            profile.asset,
            "--token-file",
            str(token_file),
            "--software-version",
            profile.software_version,
            "--journal",
            str(journal),
            "--poll-every",
            str(POLL_EVERY),
            "--response-timeout",
            str(RESPONSE_TIMEOUT),
            "--meters-every",
            str(meters_every()),
            "--log-level",
            "WARNING",
        ]
        if self.credentials.venue_id is not None:
            command += ["--venue", str(self.credentials.venue_id)]
        return command


def _before_exec() -> None:
    """In the child, before exec: the kernel sends it SIGTERM when the thread that started it ends."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class _Pair:
    """A simulated machine and its bridge, joined by the machine's pty."""

    def __init__(self, machine: SasMachine, ws_base: str, folder: Path) -> None:
        self.machine = machine
        self.asset = machine.credentials.profile.asset
        self.egm = subprocess.Popen(  # noqa: S603 (the project's own module)
            machine.egm_command(),
            cwd=settings.BASE_DIR,
            stdin=subprocess.PIPE,  # its control input: at its end (the demo gone) the machine stops
            stdout=subprocess.PIPE,
            preexec_fn=_before_exec,
        )
        assert self.egm.stdout is not None
        first = self.egm.stdout.readline()
        if not first:
            raise RuntimeError(f"the simulated machine {self.asset} did not start")
        self.pty = str(json.loads(first)["pty"])
        # The board's journal starts above the hall's last seq of the machine (its first hello says so).
        self.journal = folder / f"{self.asset}.journal.sqlite3"
        journal = Journal(str(self.journal))
        journal.raise_floor(machine.credentials.profile.next_seq - 1)
        journal.close()
        self.command = machine.bridge_command(self.pty, ws_base, self.journal, machine.write_token(folder))
        self.bridge = self._start_bridge()
        self.egm_reported = False

    def _start_bridge(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(  # noqa: S603 (the project's own module)
            self.command, cwd=settings.BASE_DIR, stdin=subprocess.DEVNULL, preexec_fn=_before_exec
        )

    def watch(self) -> None:
        if self.egm.poll() is not None and not self.egm_reported:
            self.egm_reported = True
            log.error("the simulated SAS machine %s exited (%s)", self.asset, self.egm.returncode)
        if self.bridge.poll() is not None:
            log.warning("the SAS bridge of %s exited (%s): started again", self.asset, self.bridge.returncode)
            self.bridge = self._start_bridge()

    def close_pipes(self) -> None:
        for pipe in (self.egm.stdin, self.egm.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def _stop_all(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each, then wait for them together (a bridge takes up to 3 s to end its hall link)."""
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(STOP_TIMEOUT)


def start_sas_floor(machines: Sequence[SasMachine], ws_base: str) -> Callable[[], None]:
    """Start a simulated machine and a bridge per machine to the gateway at ``ws_base`` (``ws://host:port``),
    in a thread that watches them until the stop; returns the stop."""
    if not machines:
        return lambda: None
    stop = threading.Event()

    def run() -> None:
        folder = Path(tempfile.mkdtemp(prefix="hall-demo-sas-"))
        pairs: list[_Pair] = []
        try:
            for machine in machines:
                if stop.is_set():
                    break
                pairs.append(_Pair(machine, ws_base, folder))
            log.info("%d demo machine(s) through SAS bridges", len(pairs))
            while not stop.wait(RESTART_DELAY):
                for pair in pairs:
                    pair.watch()
        except Exception:
            log.exception("the demo's SAS machines stopped")
        finally:
            # The bridges first (their hall link ends with them), then the machines.
            _stop_all([pair.bridge for pair in pairs])
            _stop_all([pair.egm for pair in pairs])
            for pair in pairs:
                pair.close_pipes()
            shutil.rmtree(folder, ignore_errors=True)

    thread = threading.Thread(target=run, name="demo-sas", daemon=True)
    thread.start()

    def stop_all() -> None:
        stop.set()
        thread.join(STOP_TIMEOUT * 3)

    return stop_all
