"""The node's figures on its /metrics (HALL_ROLE=regulator; halls.metrics.page), read when scraped: per
installation, the lag of its last accepted message (from its fact time to its receipt) and how long since
it was last heard. (Every message's receipt lag: the histogram hall_regulator_feed_receipt_lag_seconds.)"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.conf import settings
from django.db import DatabaseError
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from halls.regulator.models import FeedMessage, Installation

log = logging.getLogger("hall.metrics")

LAG = "hall_regulator_installation_lag_seconds"
SILENCE = "hall_regulator_installation_silence_seconds"


def _families() -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
    return (
        GaugeMetricFamily(
            LAG,
            "From the fact time of an installation's last accepted feed message to its receipt.",
            labels=["installation"],
        ),
        GaugeMetricFamily(
            SILENCE, "Seconds since an installation's last accepted feed message.", labels=["installation"]
        ),
    )


class NodeLagCollector:
    def describe(self) -> Iterable[Metric]:
        return _families()

    def collect(self) -> Iterable[Metric]:
        if settings.HALL_ROLE != "regulator":
            return []
        last = FeedMessage.objects.filter(
            installation=OuterRef("pk"), sequence=OuterRef("accepted_sequence")
        ).values("at")[:1]
        try:
            rows = list(
                Installation.objects.filter(last_message_at__isnull=False)
                .annotate(last_at=Subquery(last))
                .values_list("uid", "last_message_at", "last_at")
            )
        except DatabaseError:
            log.warning("the feed's lag could not be read for /metrics", exc_info=True)
            return []
        lag, silence = _families()
        now = timezone.now()
        for uid, received, fact in rows:
            if received is None:
                continue
            if fact is not None:
                lag.add_metric([uid], max(0.0, (received - fact).total_seconds()))
            silence.add_metric([uid], max(0.0, (now - received).total_seconds()))
        return [lag, silence]
