"""A fake gaming authority, run as a real process by the door's tests (tests/door/authority_support.py).

    python tests/door/fake_authority.py --port 8301

It keeps, in memory, the documents its register lists and the notices venues sent it, and serves:

- ``POST /query`` {"kind", "number", "country"} -> 200 {"listed": bool} (the online register query);
- ``POST /notices`` {"venue", "sequence", "kind", "payload"} -> 200 {"accepted": sequence, "duplicate": bool}
  (a venue's self-exclusion notice; the same venue and sequence twice is a duplicate, kept once);
- ``POST /control`` to steer it: {"listed": [["DNI", "12345678Z", "ES"], ...]} replaces the list;
  {"mode": "ok" | "slow" | "trickle" | "down" | "broken"} (slow: sleeps ``delay`` seconds before
  answering; trickle: the answer a byte every 0.1 s; down: 503; broken: 200 with a body that is not
  JSON); {"refuse_notices": n}: the next n notices get a 503;
- ``GET /notices`` -> the notices received, in order; ``GET /queries`` -> how many queries it answered.

It prints "ready <port>" on stdout once it listens. A test stops it with SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.listed: set[str] = set()
        self.mode = "ok"
        self.delay = 2.0
        self.refuse_notices = 0
        self.notices: list[dict[str, Any]] = []
        self.seen: set[tuple[str, int]] = set()
        self.queries = 0


def key(kind: str, number: str, country: str) -> str:
    return f"{kind.upper()}:{country.upper()}:{number.upper()}"


STATE = State()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the tests read its answers, not its log

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw or b"{}")

    def _send(self, status: int, body: Any = None, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        with STATE.lock:
            if self.path == "/notices":
                self._send(200, STATE.notices)
            elif self.path == "/queries":
                self._send(200, {"queries": STATE.queries})
            else:
                self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        try:
            body = self._body()
        except ValueError:
            self._send(400, {"error": "not JSON"})
            return
        if self.path == "/control":
            with STATE.lock:
                if "listed" in body:
                    STATE.listed = {key(*entry) for entry in body["listed"]}
                STATE.mode = body.get("mode", STATE.mode)
                STATE.delay = float(body.get("delay", STATE.delay))
                STATE.refuse_notices = int(body.get("refuse_notices", STATE.refuse_notices))
            self._send(200, {"ok": True})
        elif self.path == "/query":
            self._query(body)
        elif self.path == "/notices":
            self._notice(body)
        else:
            self._send(404, {"error": "not found"})

    def _query(self, body: dict[str, Any]) -> None:
        with STATE.lock:
            mode, delay = STATE.mode, STATE.delay
            listed = key(body["kind"], body["number"], body.get("country", "")) in STATE.listed
            STATE.queries += 1
        if mode == "slow":
            time.sleep(delay)
        if mode == "trickle":  # the answer a byte at a time: each read is quick, the whole is slow
            data = json.dumps({"listed": listed}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            for byte in data:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.1)
        elif mode == "down":
            self._send(503, {"error": "maintenance"})
        elif mode == "broken":
            self._send(200, raw=b"<html>Service temporarily unavailable</html>")
        else:
            self._send(200, {"listed": listed})

    def _notice(self, body: dict[str, Any]) -> None:
        with STATE.lock:
            if STATE.refuse_notices > 0:
                STATE.refuse_notices -= 1
                self._send(503, {"error": "busy"})
                return
            seen = (str(body["venue"]), int(body["sequence"]))
            duplicate = seen in STATE.seen
            if not duplicate:
                STATE.seen.add(seen)
                STATE.notices.append(body)
            self._send(200, {"accepted": body["sequence"], "duplicate": duplicate})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"ready {args.port}", flush=True)
    server.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
