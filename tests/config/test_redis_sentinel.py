"""Redis behind Sentinel in the settings (issue 30, config.redis_sentinel): REDIS_SENTINELS and
REDIS_SENTINEL_MASTER turn the broker, the channel layer and the cache to the master the Sentinels name;
unset, the plain REDIS_URL path is as before. The failover itself: tests/e2e/test_multihost.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.redis_sentinel import DEFAULT_SENTINEL_PORT, parse_sentinels, sentinel_config

ROOT = Path(__file__).resolve().parents[2]

hosts = st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,10}){0,3}", fullmatch=True)
ports = st.integers(min_value=1, max_value=65535)


@given(st.lists(st.tuples(hosts, ports), min_size=1, max_size=5))
def test_a_list_of_sentinels_reads_back_as_written(sentinels: list[tuple[str, int]]) -> None:
    text = ", ".join(f"{host}:{port}" for host, port in sentinels)
    assert parse_sentinels(text) == tuple(sentinels)


def test_a_sentinel_without_a_port_gets_sentinel_s_and_ipv6_is_bracketed() -> None:
    assert parse_sentinels("s1,[::1]:26380,") == (("s1", DEFAULT_SENTINEL_PORT), ("::1", 26380))


@pytest.mark.parametrize("bad", ["", " , ", ":26379", "s1:port", "s1:0", "s1:70000"])
def test_a_bad_sentinel_list_is_refused_naming_the_problem(bad: str) -> None:
    with pytest.raises(ValueError, match="REDIS_SENTINELS"):
        parse_sentinels(bad)


def test_unset_sentinels_mean_the_plain_redis_url() -> None:
    assert sentinel_config(None, "hall", "redis://r:6379/0") is None
    assert sentinel_config("  ", "hall", "redis://r:6379/0") is None


def test_sentinels_need_the_master_s_name() -> None:
    with pytest.raises(ValueError, match="REDIS_SENTINEL_MASTER"):
        sentinel_config("s1:26379", "", "redis://r/0")


def test_the_database_and_password_come_from_redis_url_and_stay_out_of_its_repr() -> None:
    config = sentinel_config("s1:26379,s2:26380", "hall", "redis://:p%40ss%2Fw@ignored:6379/4")
    assert config is not None
    assert (config.master, config.db, config.password) == ("hall", 4, "p@ss/w")
    assert "p@ss" not in repr(config)
    assert config.broker_url() == "sentinel://:p%40ss%2Fw@s1:26379/4;sentinel://:p%40ss%2Fw@s2:26380/4"
    assert config.broker_transport_options() == {"master_name": "hall"}
    assert config.redbeat_url() == "redis-sentinel://sentinel/4"
    assert config.redbeat_options(2.0) == {
        "sentinels": [("s1", 26379), ("s2", 26380)],
        "service_name": "hall",
        "socket_timeout": 2.0,
        "sentinel_kwargs": {"socket_timeout": 2.0, "socket_connect_timeout": 2.0},
        "db": 4,
        "password": "p@ss/w",
    }
    assert config.channel_layer_host(max_connections=5) == {
        "sentinels": [["s1", 26379], ["s2", 26380]],
        "master_name": "hall",
        "db": 4,
        "password": "p@ss/w",
        "max_connections": 5,
    }


SHOW = """
import json, django
django.setup()
from django.conf import settings as s
layer = s.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]
print(json.dumps({
    "broker": s.CELERY_BROKER_URL, "transport": s.CELERY_BROKER_TRANSPORT,
    "master": s.CELERY_BROKER_TRANSPORT_OPTIONS.get("master_name"),
    "cache": s.CACHES["default"]["BACKEND"], "layer": sorted(layer),
    "prefix": s.CACHES["default"]["KEY_PREFIX"],
    "beat": s.CELERY_REDBEAT_REDIS_URL, "beat_options": sorted(s.CELERY_REDBEAT_REDIS_OPTIONS),
}))
"""


def settings_with(**env: str) -> dict[str, object]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "PYTEST_XDIST", "HALL_TEST"))}
    result = subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    found: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


def test_the_settings_go_through_sentinel_when_asked_and_stay_plain_otherwise() -> None:
    plain = settings_with(REDIS_URL="redis://127.0.0.1:6379/2")
    assert plain == {
        "broker": "redis://127.0.0.1:6379/2",
        "transport": "config.broker:Transport",
        "master": None,
        "cache": "halls.cache.SharedRedisCache",
        "layer": ["address", "max_connections"],
        "prefix": "hall.db2.cache",
        "beat": "redis://127.0.0.1:6379/2",
        "beat_options": ["socket_connect_timeout", "socket_timeout"],
    }
    sentinel = settings_with(
        REDIS_URL="redis://sentinel/2", REDIS_SENTINELS="s1:26379,s2", REDIS_SENTINEL_MASTER="hall"
    )
    assert sentinel == {
        "broker": "sentinel://s1:26379/2;sentinel://s2:26379/2",
        "transport": "config.broker:SentinelTransport",
        "master": "hall",
        "cache": "halls.cache.SentinelRedisCache",
        "layer": ["db", "master_name", "max_connections", "sentinels"],
        "prefix": "hall.db2.cache",
        # The beats' lock and schedule on the Sentinels' master too (celery-redbeat's Sentinel branch).
        "beat": "redis-sentinel://sentinel/2",
        "beat_options": ["db", "sentinel_kwargs", "sentinels", "service_name", "socket_timeout"],
    }


def test_sentinels_without_a_master_name_stop_the_hall_from_starting() -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "PYTEST_XDIST", "HALL_TEST"))}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", "REDIS_SENTINELS": "s1:26379"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert "REDIS_SENTINEL_MASTER" in result.stderr
