"""The filed return on the feed to the gaming authority (issue 29's "tax.return" message).

A tiny adapter: the feed's ``halls.feed.services.emit.emit`` (the branch "feedwire") writes the message to
the outbox owed to the regulator, in the filing's transaction. Until that module is in the tree, the payload
is still checked against its schema (halls/feed/schemas/v1/tax.return.json) and nothing is sent.
"""

from __future__ import annotations

import importlib
from datetime import datetime
from typing import Any

from halls.feed import schema
from halls.feed.kinds import FeedKind

EMIT_MODULE = "halls.feed.services.emit"


def send_return(payload: dict[str, Any], *, venue_id: int, at: datetime) -> None:
    try:
        module = importlib.import_module(EMIT_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name is None or not EMIT_MODULE.startswith(exc.name):
            raise
        schema.validate_payload(FeedKind.TAX_RETURN.value, payload)  # a bug here is raised, as emit would
        return
    module.emit(FeedKind.TAX_RETURN, payload, venue_id=venue_id, at=at)
