"""The bridge's local journal: what it read from the machine, kept on disk until the hall acknowledges it.

A sqlite3 file (one writer, the bridge; WAL, synchronous=FULL: a message the journal took survives a power
cut of the board). Each message gets its seq here, in the order it was read, and keeps it: after a cut link
or a restart of the bridge it is sent again with the same seq and the same content, which the gateway
answers ``duplicate`` when it already had it. A message leaves the journal (is marked done) when the hall
acknowledged it: accepted, duplicate, or refused for good (its seq taken by something else: nothing to
resend). The journal also keeps small facts the bridge must not forget across restarts: the progressive
hits already reported (a hit is reported once), the last meters sent.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY,
    body TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (done, seq);
CREATE TABLE IF NOT EXISTS facts (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class Journal:
    def __init__(self, path: str) -> None:
        self.lock = threading.RLock()
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(_SCHEMA)

    def next_seq(self) -> int:
        with self.lock:
            row = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM outbox").fetchone()
            floor = int(self._fact("seq_floor") or 0)
        return max(int(row[0]), floor) + 1

    def append(self, message: dict[str, Any], once: str | None = None) -> int:
        """Give `message` the next seq and keep it; the seq. With `once` (an identity, e.g. a game's), the
        message is kept only if that identity was never kept before, in the same transaction (0: it was)."""
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                if once is not None:
                    cursor = self.db.execute(
                        "INSERT OR IGNORE INTO facts (key, value) VALUES (?, '1')", (once,)
                    )
                    if cursor.rowcount != 1:
                        self.db.execute("ROLLBACK")
                        return 0
                (top,) = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM outbox").fetchone()
                floor = self._fact("seq_floor")
                seq = max(int(top), int(floor or 0)) + 1
                body = json.dumps({**message, "seq": seq}, separators=(",", ":"))
                self.db.execute("INSERT INTO outbox (seq, body) VALUES (?, ?)", (seq, body))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        return seq

    def pending(self, after: int = 0, limit: int = 100) -> list[tuple[int, str]]:
        with self.lock:
            rows = self.db.execute(
                "SELECT seq, body FROM outbox WHERE done = 0 AND seq > ? ORDER BY seq LIMIT ?", (after, limit)
            ).fetchall()
        return [(int(seq), str(body)) for seq, body in rows]

    def done(self, seq: int, status: str) -> None:
        with self.lock:
            self.db.execute("UPDATE outbox SET done = 1, status = ? WHERE seq = ?", (status, seq))

    def counts(self) -> dict[str, int]:
        with self.lock:
            rows = self.db.execute("SELECT done, COUNT(*) FROM outbox GROUP BY done").fetchall()
        found = {int(done): int(n) for done, n in rows}
        return {"pending": found.get(0, 0), "done": found.get(1, 0)}

    def last_seq(self) -> int:
        return self.next_seq() - 1

    def raise_floor(self, seq: int) -> None:
        """The hall has seen seqs up to `seq` (its welcome): never give one of them again."""
        with self.lock:
            current = int(self._fact("seq_floor") or 0)
            if seq > current:
                self._set("seq_floor", str(seq))

    def fact(self, key: str) -> str | None:
        with self.lock:
            return self._fact(key)

    def set_fact(self, key: str, value: str) -> None:
        with self.lock:
            self._set(key, value)

    def add_once(self, key: str) -> bool:
        """Record `key` (e.g. a hit's identity); False if it was already there."""
        with self.lock:
            cursor = self.db.execute("INSERT OR IGNORE INTO facts (key, value) VALUES (?, '1')", (key,))
            return cursor.rowcount == 1

    def _fact(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM facts WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO facts (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def close(self) -> None:
        with self.lock:
            self.db.close()
