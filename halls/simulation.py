"""The scaffolding of the hall's device simulators: machines.simulator (slot machines' interface boards) and
bingo.electronic.simulator (electronic bingo's player terminals), and their commands (simulate_machines,
terminal_simulator). Each simulator keeps its own device brain; what running many of them takes is here,
once:

- the reconnection: `Backoff` (jittered pauses, doubling up to a most), `pause` (a sleep that a stop cuts
  short), `socket` (a WebSocket client as the simulators open it) and `frames` (its JSON object frames);
- the run: `Ramp` (connections opened at a rate, measuring from a warm-up after the last) and `run_devices`
  (one task per device, each waiting its turn, for a duration or until stopped), `run` (uvloop when
  installed) and `run_until_stopped` (a command's run, stopped by SIGINT or SIGTERM);
- the statistics: `percentile`, `add_counts` and `merged_counts` (the reports' counters and codes);
- the commands: `add_run_arguments` (the options both take), `bases` (the servers), `heading` (what a
  run says first), `devices_from`, `from_tokens` and `shard` (the devices registered, or every N-th of a
  tokens file), `read_json_lines`/`write_json_lines` (the tokens files, kept private), `ErrorLog` (the
  first connection errors printed, then counted) and `tell` (the report, printed and written). The texts
  a person reads come in the command's language: it hands in its `gettext`.

Pure: asyncio and the standard library (the simulators are in the pure-cores contract).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import signal
import time
from argparse import ArgumentParser, _ArgumentGroup
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
B = TypeVar("B")

Clock = Callable[[], float]

# A connection that failed or dropped is opened again after a jittered pause: a random share of the backoff
# ("full jitter", as the pages' halls/stream.js), which starts at BACKOFF_FIRST and doubles with every
# failure in a row up to BACKOFF_MAX (devices dropped together do not come back together: 1,000 terminals
# of a web process that died spread over the first second, not a quarter of it; issue 30).
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 5.0


# --- reconnection ------------------------------------------------------------------------------------


class Backoff:
    """The pauses between a device's connection attempts, drawn from the device's own `rng`."""

    def __init__(self, rng: random.Random, first: float = BACKOFF_FIRST, most: float = BACKOFF_MAX) -> None:
        self.rng, self.first, self.most = rng, first, most
        self.delay = first

    def reset(self) -> None:
        """A connection opened: the next failure pauses briefly again."""
        self.delay = self.first

    def next(self) -> float:
        """The pause before the next attempt (up to the backoff, at random); the backoff doubles."""
        pause = self.rng.uniform(0.0, self.delay)
        self.delay = min(self.delay * 2, self.most)
        return pause


async def pause(seconds: float, stop: asyncio.Event) -> None:
    """Wait `seconds`, or until `stop` is set if that comes first."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(max(0.0, seconds)):
            await stop.wait()


def socket(url: str, *, open_timeout: float, max_size: int, max_queue: int, origin: str | None = None) -> Any:
    """A WebSocket client connection as the simulators open one (``async with``): no compression (deflate
    costs both ends CPU on small JSON frames), no pings (the protocols have their own heartbeats), no
    proxy, a short close."""
    from websockets.asyncio.client import connect

    options: dict[str, Any] = {"origin": origin} if origin is not None else {}
    return connect(
        url,
        compression=None,
        ping_interval=None,
        proxy=None,
        open_timeout=open_timeout,
        close_timeout=2,
        max_size=max_size,
        max_queue=max_queue,
        **options,
    )


def connection_errors() -> tuple[type[BaseException], ...]:
    """What a failed or dropped connection raises (the reconnection's to catch)."""
    from websockets.exceptions import WebSocketException

    return (OSError, WebSocketException, TimeoutError)


async def frames(ws: Any) -> AsyncIterator[dict[str, Any]]:
    """The socket's frames that are JSON objects (anything else is passed over), until it closes."""
    async for text in ws:
        try:
            frame = json.loads(text)
        except ValueError:
            continue
        if isinstance(frame, dict):
            yield frame


# --- the run -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ramp:
    """`count` devices connecting at `connect_rate` a second from `start` (0: all at once); statistics count
    from `warmup` seconds after the last one connected."""

    start: float
    count: int
    connect_rate: float
    warmup: float = 0.0

    @property
    def ramp(self) -> float:
        return self.count / self.connect_rate if self.connect_rate > 0 else 0.0

    @property
    def measure_from(self) -> float:
        return self.start + self.ramp + self.warmup

    def connects_at(self, i: int) -> float:
        """When device `i` connects."""
        return self.start + (i / self.connect_rate if self.connect_rate > 0 else 0.0)


async def run_devices(
    brains: Sequence[B],
    drive: Callable[[int, B], Awaitable[None]],
    *,
    ramp: Ramp,
    stop: asyncio.Event,
    duration: float | None,
    clock: Clock = time.monotonic,
) -> float:
    """Drive every device (`drive(i, brain)`, each from its turn in the ramp) for `duration` seconds of
    measurement, or until `stop` is set from outside; then set `stop` and wait for every device to end (its
    drain). The clock when the measured time ended."""

    async def one(i: int, brain: B) -> None:
        if ramp.connect_rate > 0:
            await pause(ramp.connects_at(i) - clock(), stop)
        if not stop.is_set():
            await drive(i, brain)

    tasks = [asyncio.create_task(one(i, brain)) for i, brain in enumerate(brains)]
    if duration is not None:
        await pause(ramp.ramp + ramp.warmup + duration, stop)
        stop.set()
    else:
        await stop.wait()  # told to stop from outside (a signal): the measured time runs until then
    end = clock()
    await asyncio.gather(*tasks, return_exceptions=True)
    return end


def run(coro_factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine on uvloop when installed (thousands of sockets), else on asyncio's loop."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] installs it
        return asyncio.run(coro_factory())
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro_factory())


def run_until_stopped(simulate: Callable[[asyncio.Event], Coroutine[Any, Any, T]]) -> T:
    """A command's run (`run`): `simulate(stop)`, with SIGINT and SIGTERM setting `stop`."""

    async def main() -> T:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        return await simulate(stop)

    return run(main)


# --- statistics ----------------------------------------------------------------------------------------


def percentile(ordered: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of a sorted sequence (nan when empty)."""
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def add_counts(into: dict[str, int], counts: Mapping[str, int]) -> None:
    """Add `counts` (by name: a refusal code, a counter) into `into`."""
    for name, n in counts.items():
        into[name] = into.get(name, 0) + n


def merged_counts(names: Sequence[str], *counts: Mapping[str, int]) -> dict[str, int]:
    """The sum of `counts` for each of `names` (0 where one has none)."""
    return {name: sum(c.get(name, 0) for c in counts) for name in names}


# --- the commands --------------------------------------------------------------------------------------


def add_run_arguments(parser: ArgumentParser, *, devices: str, scheme: str, seed_help: str) -> _ArgumentGroup:
    """The options every simulator command takes (`devices`: "machines", "terminals"; `scheme`: the
    server's, "ws", "http"); returns the group of options saying where the devices come from, for the
    command's own."""
    parser.add_argument(
        "--url",
        default=f"{scheme}://127.0.0.1:8000",
        help=f"the server, {scheme}://host:port; several comma-separated spread the {devices} over them",
    )
    parser.add_argument("--seed", type=int, default=0, help=seed_help)
    parser.add_argument("--duration", type=float, default=None, help="seconds (default: until Ctrl-C)")
    parser.add_argument("--warmup", type=float, default=0.0, help="seconds not measured after connecting")
    parser.add_argument("--connect-rate", type=float, default=200.0, help="new connections per second")
    parser.add_argument("--report", type=Path, help="also write the statistics as JSON to this file")
    parser.add_argument("--errors", type=int, default=5, help="connection errors to print (then count)")
    source = parser.add_argument_group(devices)
    source.add_argument("--tokens", type=Path, help=f"JSON lines of {devices} and tokens (no database)")
    source.add_argument(
        "--shard", default="0/1", help=f"I/N: every N-th of the {devices} of --tokens from the I-th"
    )
    source.add_argument("--tokens-out", type=Path, help="write the new tokens here (--register)")
    return source


def heading(
    count: int, devices: str, urls: Sequence[str], seed: int, duration: float | None, extra: str = ""
) -> str:
    """What a run says first: how many devices against which servers, its seed (and `extra`), for how long."""
    until = f", {duration:g} s" if duration else ", until Ctrl-C"
    return f"{count} {devices} → {', '.join(urls)}, seed {seed}{extra}{until}"


def bases(urls: str) -> list[str]:
    """The servers of a comma-separated --url."""
    return [u.strip() for u in urls.split(",") if u.strip()]


def shard(value: str, rows: Sequence[T], gettext: Callable[[str], str] = str) -> list[T]:
    """Every N-th of `rows` from the I-th (--shard I/N: several processes share one tokens file). A
    malformed value raises ValueError saying so (in the language `gettext` gives)."""
    try:
        i, n = (int(x) for x in value.split("/"))
    except ValueError:
        raise ValueError(gettext("--shard is I/N (e.g. 0/2), not %(value)r") % {"value": value}) from None
    if n < 1 or not 0 <= i < n:
        raise ValueError(gettext("--shard %(value)s: need 0 <= I < N") % {"value": value})
    return list(rows[i::n])


def from_tokens(
    path: Path,
    value: str,
    most: int | None,
    read: Callable[[Path], list[T]],
    gettext: Callable[[str], str] = str,
) -> list[T]:
    """The devices of a tokens file (`read`), the shard `value` of them, at most `most` (None or 0: all)."""
    rows = shard(value, read(path), gettext)
    return rows[:most] if most and most < len(rows) else rows


def devices_from(
    options: Mapping[str, Any],
    *,
    count: str,
    read: Callable[[Path], list[T]],
    register: Callable[[], list[T]],
    nowhere: str,
    gettext: Callable[[str], str] = str,
) -> list[T]:
    """A command's devices: from its --tokens file (its --shard, at most `options[count]`), or registered
    (--register: `register()`). Neither or both raise ValueError saying so (`nowhere`: where they may come
    from, in the command's words)."""
    if options["tokens"] and options["register"]:
        raise ValueError(gettext("Give --tokens or --register, not both."))
    if options["tokens"]:
        return from_tokens(options["tokens"], options["shard"], options[count], read, gettext)
    if not options["register"]:
        raise ValueError(nowhere)
    return register()


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    """A tokens file's rows (blank lines passed over)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_json_lines(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """A tokens file, readable by its owner only (it holds device tokens)."""
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    path.chmod(0o600)


class ErrorLog:
    """A run's connection errors: the first `shown` written out, the rest only counted."""

    def __init__(self, shown: int, write: Callable[[str], None]) -> None:
        self.shown, self.write = shown, write
        self.count = 0

    def __call__(self, text: str) -> None:
        self.count += 1
        if self.count <= self.shown:
            self.write(text)

    @property
    def more(self) -> bool:
        """More errors came than were written."""
        return self.count > self.shown


class Report(Protocol):
    """What a simulator's report offers a command."""

    def lines(self) -> list[str]: ...

    def to_json(self) -> dict[str, Any]: ...


def tell(
    report: Report,
    *,
    errors: ErrorLog,
    write: Callable[[str], None],
    path: Path | None,
    gettext: Callable[[str], str] = str,
) -> None:
    """The report's lines written out, the count of the connection errors not shown (to the error log's
    writer), and the report as JSON to `path` if given."""
    for line in report.lines():
        write(line)
    if errors.more:
        errors.write(gettext("(%(count)s connection errors in all)") % {"count": errors.count})
    if path is not None:
        path.write_text(json.dumps(report.to_json()), encoding="utf-8")
