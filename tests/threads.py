"""Work started at once on several threads, each with a database connection of its own (closed after)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from django.db import connection


def in_threads(workers: Sequence[Callable[[], Any]], timeout: float = 120.0) -> list[BaseException]:
    """Run the workers at once (a barrier), each on its own thread; returns what they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(len(workers))

    def wrap(fn: Callable[[], Any]) -> None:
        try:
            start.wait()
            fn()
        except BaseException as exc:  # reported to the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=wrap, args=(fn,)) for fn in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    return errors
