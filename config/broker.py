"""The Redis broker transport: kombu's, with two fixes so a worker outlives a Redis outage (kombu 5.7 /
celery 5.7). Selected by ``CELERY_BROKER_TRANSPORT`` (config.settings).
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError


# A Redis that stops answering without closing its connections (paused, a host lost): an ack that timed out
# stayed, for good, in the channel's count of messages delivered and not acknowledged, and with a prefetch of
# one the channel never took another message (the worker ran on but drew no ball, in 3 of 9 paused outages).
# Here a failed ack or reject still frees its place; the message stays in Redis's unacked set, redelivered
# after the visibility timeout (every task is idempotent, a draw step of a done ordinal a no-op).
class QoS(kombu_redis.QoS):
    def ack(self, delivery_tag: Any) -> None:
        try:
            super().ack(delivery_tag)
        except self.channel.connection_errors:  # type: ignore[attr-defined]
            self._quick_ack(delivery_tag)  # type: ignore[attr-defined]  # the base class's, once Redis answered
            raise

    def reject(self, delivery_tag: Any, requeue: bool = False) -> None:
        try:
            super().reject(delivery_tag, requeue=requeue)
        except self.channel.connection_errors:  # type: ignore[attr-defined]
            self._quick_ack(delivery_tag)  # type: ignore[attr-defined]
            raise


class _Detached:
    """The _connparams guard below, for the plain and the Sentinel channel alike."""

    connection: Any  # the channel's transport (kombu's Channel sets it)

    # Redis gone under a channel waiting on BRPOP: the consumer's ``collect()`` detaches the transport from
    # its client without closing the channel; the ``close()`` that follows restores the unacked messages
    # through a new pool built from the ``None`` client, and its AttributeError (no connection error) made
    # Celery exit the worker (3 of 4 outages here). A detached transport now says so with a connection
    # error: the restore fails like any with the broker gone, the consumer reconnects with the retry
    # settings, and the held messages stay in Redis's unacked set (the reaper re-enqueues a stalled draw).
    def _connparams(self, asynchronous: bool = False) -> Any:
        transport = self.connection
        if transport is None or transport.client is None:
            raise RedisConnectionError("the broker connection is closed (its transport was collected)")
        return super()._connparams(asynchronous=asynchronous)  # type: ignore[misc]  # not in the stubs


class Channel(_Detached, kombu_redis.Channel):
    QoS = QoS


class Transport(kombu_redis.Transport):
    Channel = Channel


# Redis behind Sentinel (REDIS_SENTINELS; config.redis_sentinel): kombu's Sentinel channel asks the Sentinels
# for the master at each new connection, so after a failover the reconnecting worker finds the promoted
# replica; the same two fixes hold there.
class SentinelChannel(_Detached, kombu_redis.SentinelChannel):
    QoS = QoS


class SentinelTransport(kombu_redis.SentinelTransport):
    Channel = SentinelChannel
