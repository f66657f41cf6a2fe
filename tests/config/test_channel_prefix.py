"""Redis pub/sub ignores database numbers: the channel layer's default prefix names the database, so two
halls (or test runs) on one Redis server never hear each other's groups."""

from __future__ import annotations

from config.settings import _default_channel_prefix


def test_the_default_prefix_names_the_redis_database():
    assert _default_channel_prefix(None) == "hall"
    assert _default_channel_prefix("redis://127.0.0.1:6379") == "hall"
    assert _default_channel_prefix("redis://127.0.0.1:6379/0") == "hall"
    assert _default_channel_prefix("redis://127.0.0.1:6379/6") == "hall.db6"
    assert _default_channel_prefix("redis://127.0.0.1:6379/7") != _default_channel_prefix("redis://h:6379/6")
