"""The feed to the gaming authority as real processes (issue 29): two venue installations and a network's
central feed one regulator's node, each on its own PostgreSQL database (tests/e2e/link_support.py).

- The node: uvicorn serving config.asgi with HALL_ROLE=regulator; the three installations registered there
  with `manage.py regulator_register` (their id and public key from `manage.py feed_identity`), with a short
  silence window. Its silence sweep runs on the node's own beat (every second here), as in production.
- Each installation: `manage.py run_link` with only HALL_REGULATOR_URL (a venue of no network; the central
  sends its own feed), its own anchor key; its facts are audited and anchored (the anchor's feed message),
  and its sender sends heartbeats when idle.

Venue A's line is cut mid-session: its facts queue in its outbox, the node shows it silent (an alarm); the
line returns: the outbox drains, the alarm clears, and the node holds every message of every installation
once and in order, each anchor's lines verifying with the registered key. A tampered message (its payload
changed under its signature) and a replayed one (another body signed for a sequence already accepted) are
refused, recorded and alarmed, and change nothing.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from halls import anchor_lines
from halls.feed import envelope
from tests.e2e import link_support as ls

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]  # the first run migrates the template

NODE_DB = f"{ls.base_name()}_feed_node"
INSTALLATIONS = {  # name: (database, licence, kind)
    "venue_a": (f"{ls.base_name()}_feed_venue_a", "ML-B-0101", "venue"),
    "venue_b": (f"{ls.base_name()}_feed_venue_b", "ML-B-0102", "venue"),
    "central": (f"{ls.base_name()}_feed_central", "ML-B-0103", "central"),
}
SILENCE_SECONDS = 4
AT = "2026-12-06T22:00:00+00:00"
PORTS = range(8810, 8850)  # this engineer's


def port() -> int:
    """A free port of this engineer's range."""
    for candidate in PORTS:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", candidate))
            except OSError:
                continue
            return candidate
    raise AssertionError("no free port in 8810-8849")


@pytest.fixture
def databases() -> Iterator[None]:
    names = [NODE_DB, *(db for db, _l, _k in INSTALLATIONS.values())]
    ls.create_databases(*names)
    yield
    ls.drop_databases_later(*names)


def node_rows(sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with ls.connect(NODE_DB) as conn:
        return list(conn.execute(sql, args).fetchall())


def accepted(uid: str) -> int:
    rows = node_rows("SELECT accepted_sequence FROM regulator_installation WHERE uid = %s", uid)
    return int(rows[0][0]) if rows else 0


def held(uid: str) -> list[int]:
    return [
        int(r[0])
        for r in node_rows(
            "SELECT m.sequence FROM regulator_feedmessage m JOIN regulator_installation i"
            " ON i.id = m.installation_id WHERE i.uid = %s ORDER BY m.id",
            uid,
        )
    ]


def heard(uid: str, sequence: int) -> bool:
    """The node has accepted the installation's messages up to `sequence`."""
    return accepted(uid) >= sequence


def drained(shell: ls.Driver) -> bool:
    """Nothing of the installation's feed waits for the node."""
    return bool(shell.call("feed_state", "tests.e2e.feed_actions")["backlog"] == 0)


def open_alarms(kind: str) -> list[str]:
    """The uids of the installations with an open alarm of `kind`."""
    return [
        str(r[0])
        for r in node_rows(
            "SELECT i.uid FROM regulator_alarm a JOIN regulator_installation i ON i.id = a.installation_id"
            " WHERE a.kind = %s AND a.cleared_at IS NULL",
            kind,
        )
    ]


def test_two_venues_and_a_central_feed_the_node_through_a_cut_line_once_and_in_order(
    databases: None, tmp_path: Path
) -> None:
    env_of: dict[str, dict[str, str]] = {}
    identity: dict[str, dict[str, Any]] = {}
    for name, (db, licence, kind) in INSTALLATIONS.items():
        env_of[name] = {
            "HALL_ROLE": kind,
            "HALL_ANCHOR_SIGNING_KEY_FILE": str(tmp_path / f"{name}.pem"),
            "HALL_AUDIT_ANCHOR_DIR": str(tmp_path / f"anchors-{name}"),
            "HALL_FEED_ENABLED": "true",
        }
        ls.run_in(
            db,
            f"from tests.e2e.feed_actions import setup; setup({licence!r}, {name!r})",
            **env_of[name],
        )
        printed = subprocess.run(
            [sys.executable, "manage.py", "feed_identity"],
            cwd=ls.ROOT,
            env=ls.base_env(DATABASE_URL=ls.database_url(db), **env_of[name]),
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        identity[name] = json.loads(printed.stdout.strip().splitlines()[-1])
        assert identity[name]["role"] == kind
        subprocess.run(
            [
                *(sys.executable, "manage.py", "regulator_register"),
                *(identity[name]["installation"], f"Sala {name}", kind, "ML", identity[name]["key"]),
                *("--licence", licence if kind == "venue" else ""),
                *("--silence-seconds", str(SILENCE_SECONDS)),
            ],
            cwd=ls.ROOT,
            env=ls.base_env(DATABASE_URL=ls.database_url(NODE_DB), HALL_ROLE="regulator"),
            check=True,
            timeout=120,
        )
    uid = {name: identity[name]["installation"] for name in INSTALLATIONS}
    node_port = port()
    processes: list[ls.Process | ls.Driver] = []
    proxy: ls.CuttableProxy | None = None

    def logs() -> str:
        return "\n".join(p.log() for p in processes)

    try:
        processes.append(
            ls.Process(
                "node",
                [
                    *(sys.executable, "-m", "uvicorn", "config.asgi:application"),
                    *("--host", "127.0.0.1", "--port", str(node_port), "--log-level", "warning"),
                ],
                ls.base_env(
                    DATABASE_URL=ls.database_url(NODE_DB),
                    HALL_ROLE="regulator",
                    CHANNEL_PREFIX=f"e2e-feed-{node_port}",
                    HALL_CACHE_PREFIX=f"e2e-feed-{node_port}",
                ),
                tmp_path,
            )
        )
        # The node's own worker with its beat: its silence sweep runs as in production, every second here.
        processes.append(
            ls.Process(
                "node-worker",
                [
                    *(sys.executable, "-m", "celery", "-A", "config", "worker", "-B", "-Q", "celery"),
                    *("--pool=solo", "-c", "1", "-l", "info", "-s", str(tmp_path / "node-beat-schedule")),
                    *("-n", f"node-{node_port}@%h", "--without-mingle", "--without-gossip"),
                ],
                ls.base_env(
                    DATABASE_URL=ls.database_url(NODE_DB),
                    HALL_ROLE="regulator",
                    HALL_REGULATOR_SWEEP_SECONDS="1",
                    CHANNEL_PREFIX=f"e2e-feed-{node_port}",
                    HALL_CACHE_PREFIX=f"e2e-feed-{node_port}",
                ),
                tmp_path,
            )
        )
        node_shell = ls.Driver("node-shell", NODE_DB, tmp_path, HALL_ROLE="regulator")
        processes.append(node_shell)
        proxy = ls.CuttableProxy(node_port)
        link: dict[str, ls.Process] = {}
        shell: dict[str, ls.Driver] = {}
        for name, (db, _licence, _kind) in INSTALLATIONS.items():
            url = f"http://127.0.0.1:{proxy.port if name == 'venue_a' else node_port}"
            link[name] = ls.Process(
                f"link-{name}",
                [sys.executable, "manage.py", "run_link"],
                ls.base_env(
                    DATABASE_URL=ls.database_url(db),
                    HALL_REGULATOR_URL=url,
                    HALL_CENTRAL_URL="",
                    HALL_AUTHORITY_URL="",
                    HALL_FEED_HEARTBEAT_SECONDS="1",
                    HALL_LINK_BACKOFF_MAX_SECONDS="1",
                    HALL_LOG_LEVEL="INFO",
                    **env_of[name],
                ),
                tmp_path,
            )
            processes.append(link[name])
            shell[name] = ls.Driver(f"shell-{name}", db, tmp_path, **env_of[name])
            processes.append(shell[name])

        # --- every installation heard (its first heartbeat), then its facts ------------------------------
        for name in INSTALLATIONS:
            ls.wait_for(partial(heard, uid[name], 1), 90, f"{name}'s first message", logs)
        for name, (_db, licence, _kind) in INSTALLATIONS.items():
            assert shell[name].call("fact", "tests.e2e.feed_actions", licence=licence, count=3)["lines"] >= 1
        for name in INSTALLATIONS:
            ls.wait_for(
                partial(drained, shell[name]),
                30,
                f"{name}'s outbox to drain",
                logs,
            )
        time.sleep(2.0)  # the node's beat sweeps every second: nobody is silent
        assert open_alarms("silent") == []

        # --- venue A's line cut mid-session: its facts queue, the node shows it silent -----------------
        proxy.cut()
        before_cut = accepted(uid["venue_a"])
        licence_a = INSTALLATIONS["venue_a"][1]
        for _ in range(3):
            shell["venue_a"].call("fact", "tests.e2e.feed_actions", licence=licence_a, count=2)
        ls.wait_for(lambda: open_alarms("silent"), SILENCE_SECONDS + 15, "the node's sweep to see it", logs)
        assert open_alarms("silent") == [uid["venue_a"]]  # the others' heartbeats kept them heard
        queued = shell["venue_a"].call("feed_state", "tests.e2e.feed_actions")
        assert queued["backlog"] >= 3, queued  # queued behind the cut
        assert accepted(uid["venue_a"]) <= before_cut + 1  # at most one in flight at the cut
        assert link["venue_a"].proc.poll() is None, logs()

        # --- the line back: the outbox drains, the alarm clears --------------------------------------
        proxy.restore()
        restored = time.monotonic()
        ls.wait_for(
            partial(drained, shell["venue_a"]),
            60,
            "venue A's outbox to drain",
            logs,
        )
        print(
            f"\nvenue A's {queued['backlog']} queued messages through in {time.monotonic() - restored:.2f} s"
        )
        ls.wait_for(lambda: open_alarms("silent") == [], 10, "the silence alarm to clear", logs)

        # --- the node holds every message once, in order; every anchor verifies -----------------------
        for name in INSTALLATIONS:
            state = shell[name].call("feed_state", "tests.e2e.feed_actions")
            ls.wait_for(partial(heard, uid[name], state["last"]), 30, f"{name} caught up", logs)
            sequences = held(uid[name])
            assert sequences == list(range(1, len(sequences) + 1)), name  # each once, none missing, in order
            assert len(sequences) >= state["last"]
            kinds = [
                r[0]
                for r in node_rows(
                    "SELECT m.kind FROM regulator_feedmessage m JOIN regulator_installation i"
                    " ON i.id = m.installation_id WHERE i.uid = %s ORDER BY m.sequence",
                    uid[name],
                )
            ]
            assert kinds[: state["last"]] == state["kinds"], name
            public = anchor_lines.public_key(identity[name]["key"])
            lines = [
                line
                for (payload,) in node_rows(
                    "SELECT m.payload FROM regulator_feedmessage m JOIN regulator_installation i"
                    " ON i.id = m.installation_id WHERE i.uid = %s AND m.kind = 'anchor'",
                    uid[name],
                )
                for line in payload["lines"]
            ]
            assert len(lines) >= (4 if name == "venue_a" else 1)
            assert all(anchor_lines.check_line(line, public, uid[name]) == "" for line in lines)
        assert node_rows("SELECT count(*) FROM regulator_feedrefusal WHERE reason <> 'out_of_order'") == [
            (0,)
        ]

        # --- a tampered and a replayed message: refused, recorded, alarmed, nothing changed ------------
        key = load_pem_private_key((tmp_path / "venue_a.pem").read_bytes(), password=None)
        assert isinstance(key, Ed25519PrivateKey)
        (stored,) = node_rows(
            "SELECT m.sequence, m.kind, m.at, m.payload, m.signature FROM regulator_feedmessage m"
            " JOIN regulator_installation i ON i.id = m.installation_id"
            " WHERE i.uid = %s AND m.kind = 'anchor' ORDER BY m.sequence LIMIT 1",
            uid["venue_a"],
        )
        sequence, kind, _at, payload, signature = stored
        wire = {
            "format": envelope.FORMAT,
            "installation": uid["venue_a"],
            "sequence": accepted(uid["venue_a"]) + 1,
            "kind": kind,
            "at": AT,
            "payload": {**payload, "chains": []},  # the heads dropped under another message's signature
            "signature": signature,
        }
        feed = f"http://127.0.0.1:{node_port}/api/regulator/feed/"
        tampered = httpx.post(feed, json={"messages": [wire]}, timeout=10)
        assert tampered.status_code == 403 and tampered.json()["error"]["code"] == "bad_signature"
        replay = envelope.to_json(
            envelope.sign(
                envelope.Envelope(uid["venue_a"], sequence, "heartbeat", AT, {"last_sequence": 0}),
                key,
            )
        )
        replayed = httpx.post(feed, json={"messages": [replay]}, timeout=10)
        assert replayed.status_code == 409 and replayed.json()["error"]["code"] == "replayed"
        assert open_alarms("bad_signature") == [uid["venue_a"]]
        assert open_alarms("replayed") == [uid["venue_a"]]
        reasons = node_rows(
            "SELECT reason, sequence FROM regulator_feedrefusal WHERE reason <> 'out_of_order'"
        )
        assert sorted(reasons) == sorted([("bad_signature", wire["sequence"]), ("replayed", sequence)])
        sequences = held(uid["venue_a"])
        assert sequences == list(range(1, len(sequences) + 1))
        assert node_rows(
            "SELECT m.kind, m.signature FROM regulator_feedmessage m JOIN regulator_installation i"
            " ON i.id = m.installation_id WHERE i.uid = %s AND m.sequence = %s",
            uid["venue_a"],
            sequence,
        ) == [(kind, signature)]

        # --- SIGTERM: every link process stops cleanly ---------------------------------------------------
        for name in INSTALLATIONS:
            assert link[name].stop() == 0, logs()
            assert "run_link: stopped" in link[name].log()
    finally:
        ls.stop_all(processes)
        if proxy is not None:
            proxy.close()
