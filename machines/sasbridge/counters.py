"""The bridge's counters, shared by its threads, shown as Prometheus text on its /metrics (for the
technician's tools and the hall's scrape) and as JSON on /status."""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "hall_sas_bridge_"


class Counters:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.gauges: dict[str, float] = {}

    def add(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.counts[name] += n

    def set(self, name: str, value: float) -> None:
        with self.lock:
            self.gauges[name] = value

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"counters": dict(self.counts), "gauges": dict(self.gauges)}

    def prometheus(self) -> str:
        snap = self.snapshot()
        lines = []
        for name, value in sorted(snap["counters"].items()):
            lines += [f"# TYPE {PREFIX}{name}_total counter", f"{PREFIX}{name}_total {value}"]
        for name, value in sorted(snap["gauges"].items()):
            lines += [f"# TYPE {PREFIX}{name} gauge", f"{PREFIX}{name} {value}"]
        return "\n".join(lines) + "\n"


def serve_metrics(counters: Counters, port: int, extra: Any = None) -> ThreadingHTTPServer:
    """/metrics and /status on 127.0.0.1:`port`, in a daemon thread. `extra()` adds to /status."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/metrics":
                body, kind = counters.prometheus().encode(), "text/plain; version=0.0.4"
            elif self.path == "/status":
                data = counters.snapshot()
                if extra is not None:
                    data.update(extra())
                body, kind = json.dumps(data).encode(), "application/json"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server
