"""The feed's figures on an installation's /metrics (a venue or a central; halls.metrics.page), read from
its outbox when scraped: how many messages wait for the regulator's node, and the age of the oldest (the
feed's lag: it grows while the line is down, and falls back as the outbox drains)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.conf import settings
from django.db import DatabaseError
from prometheus_client.core import GaugeMetricFamily, Metric

from halls.link.services import feed_outbox

log = logging.getLogger("hall.metrics")

BACKLOG = "hall_feed_backlog_messages"
LAG = "hall_feed_lag_seconds"


def _families() -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
    return (
        GaugeMetricFamily(BACKLOG, "Feed messages waiting for the regulator's node (this installation)."),
        GaugeMetricFamily(LAG, "Age of the oldest feed message not yet accepted by the node (0: none)."),
    )


class FeedBacklogCollector:
    def describe(self) -> Iterable[Metric]:
        return _families()

    def collect(self) -> Iterable[Metric]:
        if settings.HALL_ROLE not in ("venue", "central"):
            return []
        try:
            waiting, age = feed_outbox.backlog()
        except DatabaseError:
            log.warning("the feed's backlog could not be read for /metrics", exc_info=True)
            return []
        backlog, lag = _families()
        backlog.add_metric([], waiting)
        lag.add_metric([], age)
        return [backlog, lag]
