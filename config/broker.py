"""The Redis broker transport: kombu's, with one fix so a worker outlives a Redis outage.

When Redis goes away under a running worker (kombu 5.7 / celery 5.7), the consumer's connection-loss handler
first ``collect()``s the connection and then ``close()``s it. If the channel was waiting on BRPOP,
``collect`` fails to close it (reading the pending BRPOP reply raises a connection error, swallowed) but
still detaches the transport from its client. The ``close`` that follows closes the channel for real, which
restores the messages the worker held unacknowledged: that needs a new Redis pool, built from the
detached (``None``) client, and raised ``AttributeError: 'NoneType' object has no attribute 'hostname'``.
That is not a connection error, so Celery took it for an unrecoverable one and the worker exited (seen here
in 3 of 4 outages: whenever the outage began while the channel was in BRPOP and held a message, e.g. a
draw step waiting for its countdown).

Here a channel whose transport is already detached says so with a connection error: the restore fails like
any restore with the broker gone (kombu ignores it), the consumer reconnects with the broker retry settings,
and the held messages stay in Redis's unacked set, redelivered after the visibility timeout (the draw
reaper re-enqueues a stalled draw long before).

A second fix, for a Redis that stops answering without closing its connections (paused, a host lost): an
acknowledgement that times out is logged by Celery ("Couldn't ack") and left in the channel's count of
messages delivered and not acknowledged, for good. With a prefetch of one (one worker process) the
channel then never takes another message: the worker ran on but drew no ball, in 3 of 9 paused outages.
Here a failed ack or reject still frees its place; the message stays in Redis's unacked set, redelivered
after the visibility timeout (every task is idempotent, and a draw step of a done ordinal a no-op).

Selected by ``CELERY_BROKER_TRANSPORT`` (config.settings).
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError


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


class Channel(kombu_redis.Channel):
    QoS = QoS

    def _connparams(self, asynchronous: bool = False) -> Any:
        transport = self.connection
        if transport is None or transport.client is None:
            raise RedisConnectionError("the broker connection is closed (its transport was collected)")
        return super()._connparams(asynchronous=asynchronous)  # type: ignore[misc]  # not in the stubs


class Transport(kombu_redis.Transport):
    Channel = Channel
