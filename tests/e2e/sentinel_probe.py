"""The Sentinel test's probe (tests/e2e/test_multihost.py): run as ``python -m tests.e2e.sentinel_probe`` with
REDIS_SENTINELS set, it answers each line "check" on stdin with one JSON line: did the hall's cache, channel
layer, Celery broker and direct Redis client each work just now (through the Sentinels), and which server is
the master. One process for the whole test, so its pools and connections live through the failover."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import Any

import django


def check(loop: asyncio.AbstractEventLoop, n: int) -> dict[str, Any]:
    from channels.layers import get_channel_layer
    from django.core.cache import cache

    from config.celery import app
    from halls.redis_clients import sync_client

    result: dict[str, Any] = {"errors": {}}

    def attempt(name: str, step: Any) -> None:
        try:
            result[name] = bool(step())
        except Exception as exc:  # a failed step is reported, the next check tries again
            result[name] = False
            result["errors"][name] = f"{type(exc).__name__}: {exc}"

    def cache_step() -> bool:
        cache.set("probe", n, timeout=60)
        return bool(cache.get("probe") == n)

    async def layer_roundtrip() -> bool:
        layer = get_channel_layer()
        assert layer is not None
        channel = await layer.new_channel()
        await layer.send(channel, {"type": "probe", "n": n})
        message = await asyncio.wait_for(layer.receive(channel), 5)
        return bool(message["n"] == n)

    def broker_step() -> bool:
        with app.connection_for_write() as conn:
            queue = conn.SimpleQueue(f"probe-{uuid.uuid4().hex[:8]}")
            try:
                queue.put({"n": n})
                message = queue.get(timeout=5)
                message.ack()
                return bool(message.payload["n"] == n)
            finally:
                queue.queue.delete()
                queue.close()

    def client_step() -> bool:
        client: Any = sync_client(socket_timeout=2, socket_connect_timeout=2)
        try:
            result["master_port"] = int(client.connection_pool.get_master_address()[1])
            return bool(client.ping())
        finally:
            client.close()

    attempt("cache", cache_step)
    attempt("layer", lambda: loop.run_until_complete(asyncio.wait_for(layer_roundtrip(), 10)))
    attempt("broker", broker_step)
    attempt("client", client_step)
    return result


def main() -> None:
    django.setup()
    loop = asyncio.new_event_loop()  # one loop: the channel layer's connections are kept across checks
    for n, line in enumerate(sys.stdin):
        if line.strip() != "check":
            break
        print(json.dumps(check(loop, n)), flush=True)


if __name__ == "__main__":
    main()
