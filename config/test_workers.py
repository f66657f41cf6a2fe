"""The parallel test run (pytest-xdist, `make test`): what each worker gets of its own, from the environment.

pytest-django gives worker gwN a test database of its own (test_<name>_gwN, or the SQLite file with that
suffix). The rest of what a test touches would be shared, so it is split here, before the settings read the
environment: Redis database (REDIS_URL's) + N, so one worker's Celery queues, cache counters and channel
groups (which tests purge and clear) are never another's; and the winner-index directory (tests count its
files). Written to the environment, so the processes a test starts (Celery worker and beat, the demo) use the
same ones; done once per worker (a child inheriting PYTEST_XDIST_WORKER does not shift again).
Outside an xdist worker nothing changes.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

SPLIT_MARK = "HALL_TEST_WORKER_SPLIT"


def split_for_worker(var_dir: Path, environ: MutableMapping[str, str] = os.environ) -> None:
    worker = environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or environ.get(SPLIT_MARK):
        return
    number = int(worker.removeprefix("gw"))
    redis_url = environ.get("REDIS_URL")
    if redis_url:
        parts = urlsplit(redis_url)
        database = int(parts.path.strip("/") or "0") + number
        environ["REDIS_URL"] = urlunsplit(parts._replace(path=f"/{database}"))
    environ.setdefault("HALL_DETECTOR_DIR", str(var_dir / f"detector-{worker}"))
    environ[SPLIT_MARK] = worker
