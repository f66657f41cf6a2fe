"""The device simulators' shared scaffolding (halls.simulation), without a server: the reconnection's
backoff and pauses, the ramp and the run of many devices, the counters, and the commands' tokens files,
shards and error log."""

from __future__ import annotations

import asyncio
import math
import random
import stat
import time
from argparse import ArgumentParser
from pathlib import Path

import pytest

from halls import simulation


def test_the_backoff_is_jittered_doubles_up_to_its_most_and_resets() -> None:
    backoff = simulation.Backoff(random.Random(7), first=0.5, most=5.0)
    pauses = [backoff.next() for _ in range(7)]
    windows = [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]
    assert all(0 <= p <= w for p, w in zip(pauses, windows, strict=True))
    assert len(set(pauses)) == len(pauses)  # jittered: boards dropped together spread out
    backoff.reset()
    assert 0 <= backoff.next() <= 0.5
    # Full jitter: many devices dropped together spread over the whole first window, not its upper half.
    firsts = [simulation.Backoff(random.Random(seed), first=1.0).next() for seed in range(400)]
    assert min(firsts) < 0.1 and max(firsts) > 0.9
    assert 150 < sum(first < 0.5 for first in firsts) < 250
    # The same device's RNG gives the same pauses (a run is reproducible).
    again = simulation.Backoff(random.Random(7), first=0.5, most=5.0)
    assert [again.next() for _ in range(7)] == pauses


def test_a_pause_ends_when_stopped() -> None:
    async def main() -> tuple[float, float]:
        stop = asyncio.Event()
        began = time.monotonic()
        await simulation.pause(0.05, stop)
        waited = time.monotonic() - began
        asyncio.get_running_loop().call_later(0.02, stop.set)
        began = time.monotonic()
        await simulation.pause(30.0, stop)
        return waited, time.monotonic() - began

    waited, stopped = asyncio.run(main())
    assert waited >= 0.05
    assert stopped < 5.0


def test_the_ramp_spreads_connections_and_measures_after_the_warmup() -> None:
    ramp = simulation.Ramp(start=100.0, count=50, connect_rate=25.0, warmup=3.0)
    assert ramp.ramp == 2.0 and ramp.measure_from == 105.0
    assert [ramp.connects_at(i) for i in (0, 1, 49)] == [100.0, 100.04, 101.96]
    at_once = simulation.Ramp(start=100.0, count=50, connect_rate=0, warmup=1.0)
    assert at_once.connects_at(49) == 100.0 and at_once.measure_from == 101.0


def test_devices_run_in_their_turn_for_the_duration_then_all_end() -> None:
    async def main() -> tuple[dict[int, float], float, float, bool]:
        stop = asyncio.Event()
        started: dict[int, float] = {}
        ramp = simulation.Ramp(time.monotonic(), 4, connect_rate=40.0)

        async def drive(i: int, brain: str) -> None:
            started[i] = time.monotonic() - ramp.start
            await stop.wait()

        end = await simulation.run_devices(["a", "b", "c", "d"], drive, ramp=ramp, stop=stop, duration=0.1)
        return started, end - ramp.start, ramp.ramp, stop.is_set()

    started, ran, ramp, stopped = asyncio.run(main())
    assert sorted(started) == [0, 1, 2, 3]
    assert all(started[i] >= i / 40.0 - 0.001 for i in started)  # none before its turn
    assert ran >= ramp + 0.1 and stopped


def test_without_a_duration_the_run_lasts_until_stopped_and_late_devices_never_start() -> None:
    async def main() -> tuple[list[int], float]:
        stop = asyncio.Event()
        started: list[int] = []
        ramp = simulation.Ramp(time.monotonic(), 3, connect_rate=1.0)  # the third would start at 2 s

        async def drive(i: int, brain: int) -> None:
            started.append(i)
            await stop.wait()

        asyncio.get_running_loop().call_later(0.3, stop.set)
        end = await simulation.run_devices([0, 1, 2], drive, ramp=ramp, stop=stop, duration=None)
        return started, end - ramp.start

    started, ran = asyncio.run(main())
    assert started == [0]
    assert 0.3 <= ran < 1.0  # measured until the stop, not cut at the start


def test_frames_are_the_json_objects_of_a_socket() -> None:
    class Socket:
        def __init__(self, texts: list[str]) -> None:
            self.texts = texts

        def __aiter__(self) -> Socket:
            return self

        async def __anext__(self) -> str:
            if not self.texts:
                raise StopAsyncIteration
            return self.texts.pop(0)

    async def main() -> list[dict[str, object]]:
        return [f async for f in simulation.frames(Socket(['{"a": 1}', "not json", "[1, 2]", '{"b": 2}']))]

    assert asyncio.run(main()) == [{"a": 1}, {"b": 2}]


def test_percentiles_and_counts() -> None:
    ordered = [float(n) for n in range(1, 101)]
    assert simulation.percentile(ordered, 50) == 50.0
    assert simulation.percentile(ordered, 99) == 99.0
    assert simulation.percentile([3.0], 99) == 3.0
    assert math.isnan(simulation.percentile([], 50))
    codes = {"busy": 2}
    simulation.add_counts(codes, {"busy": 1, "seq_reused": 4})
    assert codes == {"busy": 3, "seq_reused": 4}
    merged = simulation.merged_counts(("a", "b", "c"), {"a": 1, "b": 2}, {"b": 3, "z": 9})
    assert merged == {"a": 1, "b": 5, "c": 0}


def test_a_tokens_file_is_private_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "tokens.jsonl"
    rows = [{"device": 1, "token": "t1"}, {"device": 2, "token": "t2"}]
    simulation.write_json_lines(path, rows)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text(path.read_text() + "\n\n", encoding="utf-8")  # blank lines are passed over
    assert simulation.read_json_lines(path) == rows


def test_a_shard_takes_every_nth_from_the_ith_and_a_bad_one_says_why() -> None:
    rows = list(range(10))
    assert simulation.shard("0/1", rows) == rows
    assert simulation.shard("1/3", rows) == [1, 4, 7]
    with pytest.raises(ValueError, match="I/N"):
        simulation.shard("half", rows)
    with pytest.raises(ValueError, match="0 <= I < N"):
        simulation.shard("3/3", rows)
    with pytest.raises(ValueError, match="EN ESPAÑOL"):
        simulation.shard("2/0", rows, lambda text: "EN ESPAÑOL " + text)


def test_the_error_log_writes_the_first_and_counts_the_rest() -> None:
    written: list[str] = []
    errors = simulation.ErrorLog(2, written.append)
    for n in range(5):
        errors(f"error {n}")
    assert written == ["error 0", "error 1"] and errors.count == 5 and errors.more
    quiet = simulation.ErrorLog(2, written.append)
    quiet("one")
    assert not quiet.more


def test_both_commands_options_are_one_set() -> None:
    parser = ArgumentParser()
    group = simulation.add_run_arguments(parser, devices="terminals", scheme="http", seed_help="seed")
    group.add_argument("--register", action="store_true")
    options = parser.parse_args(["--tokens", "t.jsonl", "--shard", "1/2", "--duration", "5"])
    assert options.url == "http://127.0.0.1:8000" and options.tokens == Path("t.jsonl")
    assert (options.shard, options.duration, options.connect_rate, options.errors) == ("1/2", 5.0, 200.0, 5)
    assert not options.register
    assert simulation.bases(" ws://a:1, ws://b:2 ,") == ["ws://a:1", "ws://b:2"]


def test_a_tokens_file_gives_its_shard_and_at_most_the_devices_asked(tmp_path: Path) -> None:
    path = tmp_path / "tokens.jsonl"
    simulation.write_json_lines(path, [{"n": n} for n in range(10)])

    def numbers(p: Path) -> list[int]:
        return [int(row["n"]) for row in simulation.read_json_lines(p)]

    assert simulation.from_tokens(path, "0/2", None, numbers) == [0, 2, 4, 6, 8]
    assert simulation.from_tokens(path, "1/2", 2, numbers) == [1, 3]
    assert simulation.from_tokens(path, "0/1", 0, numbers) == list(range(10))  # 0: all of them


def test_a_run_says_what_it_runs_and_tells_its_report(tmp_path: Path) -> None:
    assert simulation.heading(3, "machines", ["ws://a", "ws://b"], 7, 60.0, ", pace × 0.5") == (
        "3 machines → ws://a, ws://b, seed 7, pace × 0.5, 60 s"
    )
    assert (
        simulation.heading(1, "terminals", ["http://a"], 0, None)
        == "1 terminals → http://a, seed 0, until Ctrl-C"
    )

    class Report:
        def lines(self) -> list[str]:
            return ["plays: 4", "rate: 2/s"]

        def to_json(self) -> dict[str, object]:
            return {"plays": 4}

    out: list[str] = []
    shown: list[str] = []
    errors = simulation.ErrorLog(1, shown.append)
    for n in range(3):
        errors(f"refused {n}")
    path = tmp_path / "report.json"
    simulation.tell(Report(), errors=errors, write=out.append, path=path, gettext=lambda t: "ES " + t)
    assert out == ["plays: 4", "rate: 2/s"]
    assert shown == ["refused 0", "ES (3 connection errors in all)"]
    assert path.read_text(encoding="utf-8") == '{"plays": 4}'
    quiet = simulation.ErrorLog(5, shown.append)
    simulation.tell(Report(), errors=quiet, write=out.append, path=None)
    assert len(shown) == 2  # nothing more to count


def test_a_commands_devices_come_from_its_tokens_or_its_registration_never_both(tmp_path: Path) -> None:
    path = tmp_path / "tokens.jsonl"
    simulation.write_json_lines(path, [{"n": n} for n in range(4)])

    def numbers(p: Path) -> list[int]:
        return [int(row["n"]) for row in simulation.read_json_lines(p)]

    def options(**given: object) -> dict[str, object]:
        return {"tokens": None, "register": False, "shard": "0/1", "machines": None, **given}

    def devices(**given: object) -> list[int]:
        return simulation.devices_from(
            options(**given), count="machines", read=numbers, register=lambda: [99], nowhere="say where"
        )

    assert devices(tokens=path, shard="1/2") == [1, 3]
    assert devices(tokens=path, machines=3) == [0, 1, 2]
    assert devices(register=True) == [99]
    with pytest.raises(ValueError, match="not both"):
        devices(tokens=path, register=True)
    with pytest.raises(ValueError, match="say where"):
        devices()
