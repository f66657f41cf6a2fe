"""config.http_limit: at most `limit` HTTP requests inside the app at once, the others served in turn;
WebSockets pass untouched."""

from __future__ import annotations

import asyncio
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
