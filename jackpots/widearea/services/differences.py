"""A reconciliation's differences written as rows: the same at the central and at a venue."""

from __future__ import annotations

from jackpots.widearea import core
from jackpots.widearea.models import WideAreaDifference, WideAreaReconciliation


def record_differences(row: WideAreaReconciliation, found: list[core.Finding]) -> None:
    """The reconciliation's differences as rows, with its side, pool, venue and time (either side)."""
    WideAreaDifference.objects.bulk_create(
        [
            WideAreaDifference(
                side=row.side,
                pool_code=row.pool_code,
                venue_id=row.venue_id,
                reconciliation=row,
                kind=f.check.value,
                level=f.difference.level,
                field=f.difference.field,
                venue_value=f.difference.venue,
                central_value=f.difference.central,
                found_at=row.reconciled_at,
            )
            for f in found
        ]
    )
