"""The wide-area reconciliations on the authority's feed (issue 31): each reconciliation of a venue's meters,
recorded on either side (the central's, the venue's check of the central's answer), told to the regulator's
node in its own transaction as `widearea.reconciled`, when the feed is on for the venue's jurisdiction
(another authority's venue: nothing). The payload is the read model's (services.reconciliations), so the
authority reads the same totals and differences the operator's page shows."""

from __future__ import annotations

from halls.feed.kinds import FeedKind
from halls.feed.services import facts
from halls.feed.services.emit import emit
from jackpots.widearea.models import WideAreaReconciliation
from jackpots.widearea.services import reconciliations


def reconciled(row: WideAreaReconciliation) -> None:
    """In the reconciliation's transaction, after its differences are written: its message owed."""
    if not facts.feed_on(row.venue_id):
        return
    payload = reconciliations.of(row).as_feed()
    emit(FeedKind.WIDE_AREA_RECONCILED, payload, venue_id=row.venue_id, at=row.reconciled_at)
