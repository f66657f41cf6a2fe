"""Many groups joined at once (halls.layer_groups, issue 30): on channels-redis' pub/sub layer, one SUBSCRIBE
for all of them (one each took 5.7 s for 1,000 terminals), and each group then hears its messages; any other
layer, one group_add per group."""

from __future__ import annotations

import os
import uuid
from unittest import mock

import pytest
from channels.layers import InMemoryChannelLayer
from redis.asyncio.client import PubSub

from halls import layer_groups

pytestmark = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="the Redis pub/sub layer")


async def test_the_groups_of_a_moment_are_one_subscribe_and_each_hears_its_messages() -> None:
    from channels_redis.pubsub import RedisPubSubChannelLayer

    layer = RedisPubSubChannelLayer(hosts=[{"address": os.environ["REDIS_URL"]}], prefix=uuid.uuid4().hex)
    channel = await layer.new_channel()
    subscribe = PubSub.subscribe
    with mock.patch.object(PubSub, "subscribe", autospec=True, side_effect=subscribe) as counted:
        found = await layer_groups.group_add_many(layer, [f"stream.{n}" for n in range(300)], channel)
        again = await layer_groups.group_add_many(layer, ["stream.7"], channel)  # followed already
    assert found == [None] * 300 and again == [None]
    assert counted.call_count == 1
    await layer.group_send("stream.217", {"type": "x", "n": 217})
    assert (await layer.receive(channel))["n"] == 217
    await layer.group_discard("stream.217", channel)  # the layer's own bookkeeping still holds
    await layer.group_send("stream.3", {"type": "x", "n": 3})
    assert (await layer.receive(channel))["n"] == 3
    await layer.flush()


async def test_another_layer_gets_one_group_add_per_group() -> None:
    layer = InMemoryChannelLayer()
    channel = await layer.new_channel()
    assert await layer_groups.group_add_many(layer, ["a", "b"], channel) == [None, None]
    await layer.group_send("b", {"type": "x"})
    assert (await layer.receive(channel))["type"] == "x"
