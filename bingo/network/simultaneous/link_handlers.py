"""Simultaneous bingo on the link: the central's handlers of the halls' messages, the halls' handlers of the
central's stream entries (registered by bingo.network.simultaneous.apps)."""

from __future__ import annotations

from halls.link import registry
from halls.link.kinds import LinkKind


def register() -> None:
    from bingo.network.simultaneous.services import central, venue

    registry.on_venue_message(LinkKind.SB_SALE)(central.record_sale)
    registry.on_venue_messages(LinkKind.SB_SALE)(central.record_sales)  # a hall's run of them at once
    registry.on_venue_message(LinkKind.SB_CLAIM)(central.record_claim)
    registry.on_venue_message(LinkKind.SB_NO_MORE_CLAIMS)(central.record_no_more_claims)
    registry.on_venue_message(LinkKind.SB_RECONCILED)(central.record_reconciliation)
    for kind in (
        LinkKind.SB_ALLOCATED,
        LinkKind.SB_SALES_OPENED,
        LinkKind.SB_SALES_CLOSED,
        LinkKind.SB_BALL,
        LinkKind.SB_DECIDED,
        LinkKind.SB_GAME_CLOSED,
        LinkKind.SB_DRAW_REVEALED,
    ):
        registry.on_central_entry(kind)(venue.keep_entry)
