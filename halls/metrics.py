"""The hall's own Prometheus metrics (beside django-prometheus' request and database metrics), served at
``/metrics`` for the scraper only (deploy/nginx keeps it internal).

Figures read from the database when scraped (the feed's backlog and lag: halls.link, halls.regulator) are
collectors the apps register here (`register_collector`), served by the web process's ``/metrics``
(`page`) beside every process's values.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
    start_http_server,
)
from prometheus_client.registry import Collector

# Seconds: from a few milliseconds to the seconds a backed-up host shows.
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

DRAW_STEP = Histogram(
    "hall_draw_step_seconds",
    "One RNG draw step (draw, detect, record, publish), in the worker.",
    buckets=_BUCKETS,
)
GATEWAY_BATCH = Histogram(
    "hall_gateway_batch_seconds",
    "One group-committed batch of machine frames (the database call).",
    buckets=_BUCKETS,
)
# What the gateway answered each stored machine message (issue 31: a bridge's retries show as "duplicate",
# never as a second play or hit; refusals by their code).
GATEWAY_ACKS = Counter(
    "hall_gateway_acks",
    "Machine messages answered by the gateway, by status and code (a refusal's; after_lock for the game "
    "a lock found in progress).",
    ["status", "code"],
)


def count_gateway_ack(reply: dict[str, Any]) -> None:
    """A stored machine message's answer (an ``ack`` with its seq) counted, when the caller sends it."""
    if reply.get("type") == "ack" and reply.get("seq") is not None:
        GATEWAY_ACKS.labels(str(reply.get("status", "")), str(reply.get("code", ""))).inc()


GATEWAY_BATCH_FRAMES = Histogram(
    "hall_gateway_batch_frames", "Machine frames per gateway batch.", buckets=(1, 2, 5, 10, 25, 50, 100, 250)
)
FOLD_LAG = Histogram(
    "hall_pool_fold_lag_seconds",
    "Age of the oldest unfolded pool contribution when a fold tick starts.",
    buckets=_BUCKETS,
)
METER_PUBLISH_LAG = Histogram(
    "hall_meter_publish_lag_seconds",
    "Seconds since the previous meter publication when changed meters are published (at least 0.25).",
    buckets=_BUCKETS,
)
FEED_RECEIPT_LAG = Histogram(
    "hall_regulator_feed_receipt_lag_seconds",
    "The regulator's node: from a feed message's fact time (the installation's clock) to its acceptance.",
    buckets=(*_BUCKETS, 60.0, 300.0, 3600.0),
)
DB_RETRIES = Counter(
    "hall_db_retries_total",
    "Service transactions run again after a deadlock or serialization failure (halls.db_retry).",
    ["service", "reason"],
)
DB_RETRIES_EXHAUSTED = Counter(
    "hall_db_retries_exhausted_total",
    "Service transactions still failing with a deadlock or serialization failure after every retry.",
    ["service", "reason"],
)
OPEN_SOCKETS = Gauge(
    "hall_open_sockets",
    "Open WebSockets by kind (screen, machine, console).",
    ["kind"],
    multiprocess_mode="livesum",
)


@contextmanager
def timed(histogram: Histogram) -> Iterator[None]:
    """Observe the block's wall time (also when it raises)."""
    started = time.perf_counter()
    try:
        yield
    finally:
        histogram.observe(time.perf_counter() - started)


def registry() -> Any:
    """What to expose: every process's values in multiprocess mode, else this process's."""
    # deploy/ sets a directory per service (process ids of two containers would collide in one), emptied
    # at its start: each gunicorn worker or Celery pool child writes its values there, and this adds them
    # up (the socket gauges over the live processes; config/gunicorn.py forgets an exited worker's).
    # Embedded, one process: its own values.
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        collected = CollectorRegistry()
        multiprocess.MultiProcessCollector(collected)  # type: ignore[no-untyped-call]
        return collected
    return REGISTRY


def serve(port: int, address: str = "127.0.0.1") -> Any:
    """An HTTP server (a daemon thread) answering Prometheus with `registry()`, for a process with no
    web server of its own (the Celery worker); returns the server (`shutdown()` stops it)."""
    server, _thread = start_http_server(port, addr=address, registry=registry())
    return server


_collectors = CollectorRegistry(auto_describe=True)
_collector_kinds: set[str] = set()


def register_collector(collector: Collector) -> None:
    """A collector of figures read when scraped (it describes itself without reading: `describe`); one of
    each class (an app's ready() run twice registers it once)."""
    kind = type(collector).__qualname__
    if kind not in _collector_kinds:
        _collectors.register(collector)
        _collector_kinds.add(kind)


def page(request: HttpRequest) -> HttpResponse:
    """``/metrics``: `registry()` (every process's values, or this one's) and the registered collectors."""
    text = generate_latest(registry()) + generate_latest(_collectors)
    return HttpResponse(text, content_type=CONTENT_TYPE_LATEST)
