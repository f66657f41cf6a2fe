"""The wide-area pools' counters on ``/metrics`` (halls.metrics' registry): each refusal counted once, where
it was decided (a message refused is recorded in the inbox with its answer and never applied again)."""

from __future__ import annotations

from prometheus_client import Counter

REFUSED = Counter(
    "hall_widearea_refused_total",
    "Wide-area pool input refused, by side (central, venue) and reason.",
    ["side", "reason"],
)
BATCHES = Counter("hall_widearea_batches_total", "Contribution batches applied at the central.", [])
HITS = Counter("hall_widearea_hits_total", "Wide-area hits decided at the central, by outcome.", ["outcome"])
DIFFERENCES = Counter(
    "hall_widearea_differences_total",
    "Meter differences found when a venue's and the central's meters were reconciled.",
    [],
)
RECONCILIATIONS = Counter(
    "hall_widearea_reconciliations_total",
    "A venue's meters reconciled (recorded once per meters message), by side and state (agreed, differs).",
    ["side", "state"],
)
RECONCILE_DIFFERENCES = Counter(
    "hall_widearea_reconcile_differences_total",
    "Differences found reconciling a venue's meters, by side and the check that found them (received: the "
    "venue's totals against the central's record; batches: against the batches accepted; ledger: the "
    "batches accepted against the pool's ledger rows attributed to the venue).",
    ["side", "check"],
)
OFFLINE = Counter(
    "hall_widearea_offline_total",
    "A venue's wide-area levels withdrawn because the central was silent past the pool's window.",
    ["action"],
)


def refused(side: str, reason: str) -> None:
    REFUSED.labels(side=side, reason=reason).inc()
