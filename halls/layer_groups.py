"""Many groups joined at once on the channel layer (issue 30, a reconnect storm).

channels-redis' pub/sub layer subscribes each group on its own: a SUBSCRIBE per group, one after the other
under its shard's lock, each waiting for a turn of the event loop. A web process taking 1,000 terminals at
once (each terminal has a stream of its own) spent 5.7 s doing 1,000 of them on a quiet loop, 28 s on a
loop busy with 500 other tasks: the terminals' connects waited for it, and the screens' behind them at the
admission gate. Here the groups of a moment go to Redis in one SUBSCRIBE per shard.

It reaches into channels-redis' layer (its group map, its shards' lock, pub/sub connection and subscribed
set: channels-redis 4.3, requirements.txt); any other layer, or a layer without those, is given one
`group_add` per group as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any


def _pubsub_layer(layer: Any) -> Any:
    """The running loop's layer behind channels-redis' pub/sub proxy, or None (another layer)."""
    from channels_redis.pubsub import RedisPubSubChannelLayer

    if not isinstance(layer, RedisPubSubChannelLayer):
        return None
    inner = layer._get_layer()
    needed = ("groups", "channels", "_get_group_channel_name", "_get_shard")
    return inner if all(hasattr(inner, name) for name in needed) else None


async def group_add_many(layer: Any, groups: Iterable[str], channel: str) -> list[BaseException | None]:
    """Add `channel` to every group of `groups`; for each group, None or the exception that failed it."""
    names = list(groups)
    inner = _pubsub_layer(layer)
    if inner is None or channel not in inner.channels:
        done = await asyncio.gather(*(layer.group_add(g, channel) for g in names), return_exceptions=True)
        return [outcome if isinstance(outcome, BaseException) else None for outcome in done]
    by_shard: dict[int, tuple[Any, list[str]]] = {}
    wanted: list[str] = []
    for group in names:
        group_channel = inner._get_group_channel_name(group)
        wanted.append(group_channel)
        inner.groups.setdefault(group_channel, set()).add(channel)
        shard = inner._get_shard(group_channel)
        by_shard.setdefault(id(shard), (shard, []))[1].append(group_channel)
    failed: dict[str, BaseException] = {}
    for shard, group_channels in by_shard.values():
        try:
            await _subscribe_all(shard, group_channels)
        except Exception as exc:  # the shard's groups fail; the caller retries them with their sockets
            for group_channel in group_channels:
                failed[group_channel] = exc
    return [failed.get(group_channel) for group_channel in wanted]


async def _subscribe_all(shard: Any, group_channels: list[str]) -> None:
    if not all(hasattr(shard, name) for name in ("_lock", "_subscribed_to", "_ensure_redis", "_pubsub")):
        for group_channel in group_channels:
            await shard.subscribe(group_channel)
        return
    async with shard._lock:
        new = [g for g in dict.fromkeys(group_channels) if g not in shard._subscribed_to]
        if not new:
            return
        shard._ensure_redis()
        shard._ensure_receiver()
        await shard._pubsub.subscribe(*new)
        shard._subscribed_to.update(new)
