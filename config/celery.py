"""The Celery app. Draw tasks go to their own `draws` queue (DESIGN §5); workers keep their database
connections between tasks (below)."""

import os
from typing import Any

from celery import Celery, Task, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("hall")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The worker's draw leases (issue 30): its signal handlers connect on import.
from config import leases  # noqa: E402, F401


@signals.worker_init.connect
def keep_database_connections(**kwargs: Any) -> None:
    """Worker processes (and the pool children they fork) keep their connections between tasks: Celery's
    Django fixup closed them around each task, and a new one (~15 ms here) cost more than a draw step. The
    fixup still recycles it every ``CELERY_DB_REUSE_MAX`` tasks."""
    from django.conf import settings

    if settings.HALL_EMBEDDED:
        return  # the embedded worker is a thread of the web server: its settings are the server's
    for database in settings.DATABASES.values():
        # The connection objects share these dicts; the value is read each time a connection opens.
        database["CONN_MAX_AGE"] = settings.HALL_WORKER_CONN_MAX_AGE
        # A worker keeps its one connection: no pool (HALL_DB_POOL is the web processes'; Django refuses a
        # pool with a CONN_MAX_AGE).
        database.get("OPTIONS", {}).pop("pool", None)


@signals.task_prerun.connect
@signals.task_postrun.connect
def close_old_database_connections(sender: "Task[Any, Any] | None" = None, **kwargs: Any) -> None:
    """Around each task, as around each request: close connections that are broken, left outside autocommit
    or older than ``HALL_WORKER_CONN_MAX_AGE``; the next task checks the kept one (``CONN_HEALTH_CHECKS``)."""
    from django.db import close_old_connections, connection

    # An eager task runs inside its caller's transaction (a test's, a service's): leave it alone.
    if sender is not None and getattr(sender.request, "is_eager", False):
        return
    if connection.in_atomic_block:
        return
    close_old_connections()


@signals.worker_init.connect
def serve_worker_metrics(**kwargs: Any) -> None:
    """The worker's metrics (draw steps, fold lag, meter publish lag: halls.metrics) on
    ``127.0.0.1:HALL_WORKER_METRICS_PORT`` for Prometheus, when that is set. With
    ``PROMETHEUS_MULTIPROC_DIR`` (deploy/) the pool's child processes write there and this server, in the
    worker's main process, adds them up."""
    from django.conf import settings

    port = settings.HALL_WORKER_METRICS_PORT
    if port and not settings.HALL_EMBEDDED:
        from halls.metrics import serve

        serve(port, settings.HALL_WORKER_METRICS_ADDRESS)


@signals.worker_process_shutdown.connect
def forget_dead_child(pid: int | None = None, **kwargs: Any) -> None:
    """A pool child that exits takes its live gauges with it (prometheus_client multiprocess mode)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid or os.getpid())  # type: ignore[no-untyped-call]
