"""deploy/'s hall on several hosts, in full, as private processes on this machine (issue 30), for
tests/e2e/test_multihost.py (the default suite) and bench/multihost.py (the long variant): a PostgreSQL
primary with WAL archived by pgBackRest and a streaming replica, Redis with a replica and three Sentinels,
two web processes (uvicorn on config.asgi), two workers and two beats (celery-redbeat), every one configured
through Sentinel (REDIS_SENTINELS). Then:

- the Redis master is killed mid-draw: the Sentinels promote the replica, the workers and beats find it,
  the game's balls go on (to the 90th, or as many as `Plan.balls_after_failover` asks and the draw paused)
  with none lost or repeated, both web processes answer /health/ (Redis, the channel layer, the beat's
  heartbeat: all through the new master), and a sale goes through after (a game in another room);
- the night's backup is restored: a full pgBackRest backup taken before the play, a restore point named
  after the first game, more play after it; pgBackRest restores to the point into an empty directory,
  PostgreSQL recovers and promotes on it, ``manage.py verify_audit`` passes there and the data are the
  data at the point (the first game's balls exactly, nothing of the play after it).

The primary's schema comes from `Plan.seed`: `migrate` (``manage.py migrate`` from nothing: minutes on the
shared host, the bench's) or `from_template` (a pg_dump of the test run's migrated template,
tests/migrated.py, loaded into it: seconds, the test's). Nothing here touches the machine's shared PostgreSQL
or Redis but that read of the template.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from tests.e2e.multihost_support import (
    HallProcesses,
    PgBackRest,
    Postgres,
    RedisGroup,
    Workspace,
    copy_database,
    start_replica,
    wait_until,
)


@dataclass(frozen=True)
class Ports:
    """The task's ports: PostgreSQL 15432-15439, Redis 6395-6399, Sentinels 26395-26399, web 18500-18599."""

    pg_primary: int = 15432
    pg_replica: int = 15433
    pg_restored: int = 15434
    redis_master: int = 6395
    redis_replica: int = 6396
    sentinels: tuple[int, ...] = (26395, 26396, 26397)
    web: tuple[int, ...] = (18500, 18501)


Seed = Callable[[Postgres, HallProcesses], None]
T = TypeVar("T")


def migrate(primary: Postgres, hall: HallProcesses) -> None:
    """The primary's schema by ``manage.py migrate`` from nothing (every migration: minutes when loaded)."""
    migrated = hall.manage("migrate", "--no-input", timeout=900)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr


def from_template(template_url: str) -> Seed:
    """The primary's schema as a copy of a migrated template elsewhere (read once with pg_dump)."""

    def seed(primary: Postgres, hall: HallProcesses) -> None:
        # No migration is left to run: the template's name carries the hash of this checkout's migrations.
        copy_database(template_url, primary)

    return seed


@dataclass
class Plan:
    seed: Seed
    ports: Ports = field(default_factory=Ports)
    # The first game's pace (seconds a ball), its balls before the master is killed, and after the failover
    # (None: to the 90th; a number: that many more, then the draw paused).
    pace: str = "0.15"
    balls_before_kill: int = 10
    balls_after_failover: int | None = None
    # From the master's death to the next ball: Sentinel's down-after (1 s) and election, then the workers'
    # reconnect (every 1-2 s) and the reaper (every second).
    resume_within: float = 15.0
    # A process's start (Django, Celery) on the shared host under load: up to minutes.
    start_timeout: float = 300.0


@dataclass
class Result:
    figures: dict[str, float] = field(default_factory=dict)
    # Seconds of each step, in order (what a slow run spent its time on).
    steps: dict[str, float] = field(default_factory=dict)
    verify_audit: str = ""
    # Seconds from the hall's SIGTERM to each process's exit.
    exit_seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        clock = time.monotonic()
        try:
            yield
        finally:
            self.steps[name] = round(time.monotonic() - clock, 1)


def timed(result: Result, name: str, action: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`action` as a step of `result` (in a thread of its own: its steps overlap the main thread's)."""
    with result.step(name):
        return action(*args, **kwargs)


def balls(pg: Postgres, game_id: int) -> list[tuple[int, int]]:
    """A game's balls (ordinal, number): SQL on bingo.traditional's Ball table."""
    rows = pg.query("SELECT ordinal, number FROM bingo_ball WHERE game_id = %s ORDER BY ordinal", game_id)
    return [(int(o), int(n)) for o, n in rows]


def health(port: int) -> tuple[int, dict[str, Any]] | None:
    """/health/'s status and JSON (each check's name -> "OK" or its error), None when nothing answers."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/health/?format=json", headers={"Accept": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310  # http://127.0.0.1 only
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as failed:  # 500: the checks that fail are named in the body
        try:
            return failed.code, json.loads(failed.read())
        except ValueError:
            return failed.code, {}
    except (OSError, ValueError):
        return None


def healthy(port: int) -> bool:
    """Every check of the web process passes (200; each check "OK")."""
    answer = health(port)
    return answer is not None and answer[0] == 200 and all(v == "OK" for v in answer[1].values())


def assert_no_ball_lost_or_repeated(drawn: list[tuple[int, int]]) -> None:
    assert [o for o, _ in drawn] == list(range(1, len(drawn) + 1)), drawn
    assert len({n for _, n in drawn}) == len(drawn), drawn


def run(work: Workspace, plan: Plan, result: Result) -> None:
    ports = plan.ports
    figures, step = result.figures, result.step
    primary = Postgres(work, "primary", ports.pg_primary)
    backrest = PgBackRest(work, primary.data, ports.pg_primary)
    redis_group = RedisGroup(work, ports.redis_master, ports.redis_replica, list(ports.sentinels))
    servers: list[Postgres] = [primary]
    hall: HallProcesses | None = None
    driver = None
    try:
        # --- PostgreSQL: the primary archiving to pgBackRest, its schema; Redis behind its Sentinels (the
        # two made at once: each mostly waits) ------------------------------------------------------------
        with ThreadPoolExecutor(max_workers=2) as pool:
            redis_started = pool.submit(timed, result, "redis_sentinels", redis_group.start)
            with step("primary"):
                primary.initdb(backrest.archive_command)
                primary.start()
                primary.query("CREATE DATABASE hall", database="postgres")
                backrest.run("stanza-create")
            hall = HallProcesses(work, primary.url(), redis_group.sentinels, redis_group.master_name)
            with step("seed"):
                plan.seed(primary, hall)
            redis_started.result()

        # --- the hall: two web processes, two workers, two beats, all through Sentinel. While they start,
        # the venue is set up, the streaming replica made and the night's backup (full) taken, before the
        # play ---------------------------------------------------------------------------------------------
        with step("start_hall"):
            for n, port in enumerate(ports.web, 1):
                hall.start_web(f"web{n}", port)
            for n in (1, 2):
                hall.start_worker(f"worker{n}")
                hall.start_beat(f"beat{n}")
            driver = hall.driver_session()
        with ThreadPoolExecutor(max_workers=2) as pool:
            replica_started = pool.submit(
                timed, result, "replica", start_replica, work, primary, "replica", ports.pg_replica
            )
            backed_up = pool.submit(
                timed, result, "backup", backrest.run, "backup", "--type=full", timeout=300
            )
            with step("setup"):
                ids = driver("setup")
            replica = replica_started.result()
            servers.append(replica)
            backed_up.result()
        figures["backup_s"] = result.steps["backup"]
        with step("replica_streams"):
            # The replica streams: what the primary committed shows there, and the primary counts its sender.
            wait_until(
                lambda: replica.query("SELECT count(*) FROM halls_venue WHERE id = %s", ids["venue"])[0][0],
                30,
                "the venue on the replica",
                replica.log,
            )
            assert primary.query("SELECT state FROM pg_stat_replication") == [("streaming",)]
            assert replica.query("SELECT pg_is_in_recovery()") == [(True,)]
        with step("hall_ready"):
            wait_until(
                lambda: all(" ready." in hall.log(f"worker{n}") for n in (1, 2)),
                plan.start_timeout,
                "workers ready",
                hall.logs,
            )
            for port in ports.web:
                wait_until(
                    partial(healthy, port),
                    plan.start_timeout,
                    f"web :{port} healthy",
                    partial(health_and_logs, port, hall),
                )

        # --- a game drawing; the Redis master killed mid-draw ---------------------------------------------
        with step("game_to_kill"):
            first = driver("game", str(ids["room"]), plan.pace, "6")["game"]
            wait_until(
                lambda: len(balls(primary, first)) >= plan.balls_before_kill,
                60,
                f"{plan.balls_before_kill} balls",
                hall.logs,
            )
        with step("failover"):
            redis_group.kill_master()
            killed_at = time.monotonic()
            before = len(balls(primary, first))
            wait_until(
                lambda: redis_group.master_port() == ports.redis_replica,
                30,
                "Sentinel's promotion",
                redis_group.logs,
            )
            figures["promoted_s"] = time.monotonic() - killed_at
            # The first ball drawn after the kill could have been enqueued before it: the second one
            # after it went through the new master.
            wait_until(
                lambda: len(balls(primary, first)) > before,
                plan.resume_within + 15,
                "a ball after the failover",
                hall.logs,
            )
            figures["failover_to_ball_s"] = time.monotonic() - killed_at
            wait_until(
                lambda: len(balls(primary, first)) > before + 1,
                plan.resume_within + 15,
                "balls after the failover",
                hall.logs,
            )
            figures["failover_to_second_ball_s"] = time.monotonic() - killed_at
        with step("balls_after"):
            if plan.balls_after_failover is None:  # the whole game
                wait_until(lambda: len(balls(primary, first)) == 90, 120, "all 90 balls", hall.logs)
            else:  # as many more as asked, then the draw paused: its balls stay as they are from there
                wanted = before + plan.balls_after_failover
                wait_until(lambda: len(balls(primary, first)) >= wanted, 60, f"{wanted} balls", hall.logs)
                driver("pause", str(first))
            drawn = balls(primary, first)
            assert_no_ball_lost_or_repeated(drawn)
            if plan.balls_after_failover is None:
                assert sorted(n for _, n in drawn) == list(range(1, 91))
            figures["balls_before_kill"] = before
            figures["balls_drawn"] = len(drawn)
            assert figures["failover_to_second_ball_s"] < plan.resume_within, (
                f"balls resumed {figures['failover_to_second_ball_s']:.1f} s after the master died"
            )
        with step("health_after"):
            # Every web process on the new master: Redis, channel layer, beat heartbeat, no stalled draw.
            for port in ports.web:
                wait_until(
                    partial(healthy, port),
                    60,
                    f"web :{port} healthy after the failover",
                    partial(health_and_logs, port, hall),
                )
            assert sorted(hall.running()) == sorted(hall.procs), hall.logs()

        # --- the restore point ("the night"), then play after it ------------------------------------------
        with step("point_and_sale_after"):
            (point_lsn,) = primary.query("SELECT pg_create_restore_point('night')")[0]
            primary.query("SELECT pg_switch_wal()")
            games_at_point = sorted(r[0] for r in primary.query("SELECT id FROM bingo_game"))
            # A sale after the failover (and after the point): a second game sold, drawn a few balls.
            second = driver("game", str(ids["room2"]), plan.pace, "9", "7")["game"]
            wait_until(lambda: len(balls(primary, second)) >= 3, 60, "the second game's balls", hall.logs)
            wait_until(
                lambda: primary.query(
                    "SELECT last_archived_wal >= pg_walfile_name(%s::pg_lsn) FROM pg_stat_archiver",
                    str(point_lsn),
                )[0][0],
                60,
                "the restore point's WAL archived",
                primary.log,
            )
        # The hall stops (gracefully, while the night is restored elsewhere: the restore needs nothing of
        # it; run() waits for it at the end).
        driver.stop()
        hall.terminate()

        # --- restore the night into an empty directory, recover to the point, verify --------------------
        restored = Postgres(work, "restored", ports.pg_restored)
        with step("restore"):
            work.postgres_dir("restored")
            assert not any(restored.data.iterdir())
            backrest.run(
                f"--pg1-path={restored.data}",
                "--type=name",
                "--target=night",
                "--target-action=promote",
                "restore",
                timeout=180,
            )
            restored.start("-c archive_mode=off")
            servers.append(restored)
            wait_until(
                lambda: restored.query("SELECT pg_is_in_recovery()") == [(False,)],
                60,
                "recovery done",
                restored.log,
            )
        figures["restore_and_recover_s"] = result.steps["restore"]
        assert sorted(r[0] for r in restored.query("SELECT id FROM bingo_game")) == games_at_point
        assert balls(restored, first) == drawn
        assert balls(restored, second) == []
        hall.env["DATABASE_URL"] = restored.url()
        with step("verify_audit"):
            verified = hall.manage("verify_audit")
        figures["verify_audit_s"] = result.steps["verify_audit"]
        result.verify_audit = verified.stdout
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "BAD" not in verified.stdout, verified.stdout
        assert "ok   venue" in verified.stdout, verified.stdout
    finally:
        if driver is not None:
            driver.stop()
        if hall is not None:
            hall.stop()
            result.exit_seconds = hall.exit_seconds
        redis_group.stop()
        for server in reversed(servers):
            server.stop()


def health_and_logs(port: int, hall: HallProcesses) -> str:
    return f"{health(port)}\n{hall.logs()}"
