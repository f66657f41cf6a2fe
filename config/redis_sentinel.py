"""Redis behind Sentinel: the settings' pieces for the broker, the channel layer and the cache, from
``REDIS_SENTINELS`` ("host:port,host:port") and ``REDIS_SENTINEL_MASTER`` (the monitored master's name).

With Sentinel, ``REDIS_URL`` keeps giving the database number and the password (its host is not used: the
master is whichever server the Sentinels name). Pure: no Django, so the settings and the tests read it alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

DEFAULT_SENTINEL_PORT = 26379


@dataclass(frozen=True)
class SentinelConfig:
    sentinels: tuple[tuple[str, int], ...]
    master: str
    db: int = 0
    password: str | None = field(default=None, repr=False)  # never in a printed settings dump
    username: str | None = None

    def redis_kwargs(self) -> dict[str, Any]:
        """redis-py's connection arguments for the master (not for the Sentinels themselves)."""
        kwargs: dict[str, Any] = {"db": self.db}
        if self.password is not None:
            kwargs["password"] = self.password
        if self.username is not None:
            kwargs["username"] = self.username
        return kwargs

    def broker_url(self) -> str:
        """kombu's Sentinel URL: each Sentinel a ``sentinel://`` URL, joined by ``;`` (the master's name goes
        in the transport options); the database and password ride on each URL as kombu reads them."""
        auth = f":{quote(self.password, safe='')}@" if self.password is not None else ""
        return ";".join(f"sentinel://{auth}{host}:{port}/{self.db}" for host, port in self.sentinels)

    def broker_transport_options(self) -> dict[str, Any]:
        return {"master_name": self.master}

    def redbeat_url(self) -> str:
        """celery-redbeat's Sentinel marker (it reads only the scheme; the Sentinels are in the options)."""
        return f"redis-sentinel://sentinel/{self.db}"

    def redbeat_options(self, timeout: float) -> dict[str, Any]:
        """celery-redbeat's ``redbeat_redis_options`` for the master the Sentinels name (its Sentinel branch:
        ``Sentinel(sentinels, ...).master_for(service_name)``), each command bounded by `timeout`."""
        return {
            "sentinels": list(self.sentinels),
            "service_name": self.master,
            "socket_timeout": timeout,
            "sentinel_kwargs": {"socket_timeout": timeout, "socket_connect_timeout": timeout},
            **self.redis_kwargs(),
        }

    def channel_layer_host(self, **extra: Any) -> dict[str, Any]:
        """A channels-redis host entry (its create_pool builds a SentinelConnectionPool from it)."""
        return {
            "sentinels": [list(s) for s in self.sentinels],
            "master_name": self.master,
            **self.redis_kwargs(),
            **extra,
        }


def parse_sentinels(value: str) -> tuple[tuple[str, int], ...]:
    """``"a:26379, b:26380,[::1]:26381, c"`` → ((a, 26379), (b, 26380), (::1, 26381), (c, 26379))."""
    found: list[tuple[str, int]] = []
    for raw in value.split(","):
        item = raw.strip()
        if not item:
            continue
        if item.startswith("["):  # an IPv6 address
            host, _, rest = item[1:].partition("]")
            port_text = rest.removeprefix(":")
        elif item.count(":") == 1:
            host, port_text = item.split(":")
        else:
            host, port_text = item, ""
        if not host:
            raise ValueError(f"REDIS_SENTINELS: no host in {item!r}")
        try:
            port = int(port_text) if port_text else DEFAULT_SENTINEL_PORT
        except ValueError:
            raise ValueError(f"REDIS_SENTINELS: bad port in {item!r}") from None
        if not 0 < port < 65536:
            raise ValueError(f"REDIS_SENTINELS: port out of range in {item!r}")
        found.append((host, port))
    if not found:
        raise ValueError("REDIS_SENTINELS names no Sentinel")
    return tuple(found)


def sentinel_config(
    sentinels: str | None, master: str | None, redis_url: str | None
) -> SentinelConfig | None:
    """None when ``REDIS_SENTINELS`` is unset or empty (the plain ``REDIS_URL`` path)."""
    if not sentinels or not sentinels.strip():
        return None
    if not master:
        raise ValueError("REDIS_SENTINELS is set but REDIS_SENTINEL_MASTER (the master's name) is not")
    db, password, username = 0, None, None
    if redis_url:
        parts = urlsplit(redis_url)
        path = parts.path.strip("/")
        db = int(path) if path else 0
        password = unquote(parts.password) if parts.password is not None else None
        username = unquote(parts.username) if parts.username else None
    return SentinelConfig(parse_sentinels(sentinels), master, db, password, username)
