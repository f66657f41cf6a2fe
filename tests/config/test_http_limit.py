"""config.http_limit: at most `limit` HTTP requests inside the app at once, the others served in turn;
WebSockets pass untouched."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from config.http_limit import BoundedHTTP


def test_requests_beyond_the_bound_wait_their_turn_and_all_are_served() -> None:
    inside = 0
    most: dict[str, int] = {}
    served: list[int] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        nonlocal inside
        inside += 1
        most[scope["type"]] = max(most.get(scope["type"], 0), inside)
        await asyncio.sleep(0.01)
        inside -= 1
        served.append(scope["n"])

    bounded = BoundedHTTP(app, 3)

    async def main() -> None:
        await asyncio.gather(*(bounded({"type": "http", "n": n}, None, None) for n in range(20)))
        await asyncio.gather(*(bounded({"type": "websocket", "n": 100 + n}, None, None) for n in range(5)))

    asyncio.run(main())
    assert most == {"http": 3, "websocket": 5}  # HTTP never more than 3 at once; websockets unbounded
    assert sorted(served) == [*range(20), *range(100, 105)]


def test_no_bound_when_the_limit_is_zero() -> None:
    calls: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        calls.append(scope["type"])

    asyncio.run(BoundedHTTP(app, 0)({"type": "http"}, None, None))
    assert calls == ["http"]


def test_the_requests_sync_code_runs_on_kept_threads_one_request_at_a_time_each() -> None:
    """No thread started per request: Django's ThreadSensitiveContext inside uses the bound's executors."""
    from asgiref.sync import ThreadSensitiveContext, sync_to_async

    threads: list[tuple[int, tuple[int, str]]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        async with ThreadSensitiveContext():  # what Django's ASGIHandler does
            for _ in range(2):  # one request's sync calls: the same thread
                name = await sync_to_async(lambda: (threading.get_ident(), threading.current_thread().name))()
                threads.append((scope["n"], name))
                await asyncio.sleep(0.001)

    bounded = BoundedHTTP(app, 3)

    async def main() -> None:
        await asyncio.gather(*(bounded({"type": "http", "n": n}, None, None) for n in range(20)))

    asyncio.run(main())
    names = {name for _, name in threads}
    assert len(names) == 3 and all(name.startswith("http") for _, name in names)
    for n in range(20):
        assert len({name for m, name in threads if m == n}) == 1
