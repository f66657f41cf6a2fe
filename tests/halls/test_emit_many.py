"""events.emit_many numbers each stream's events after its cursor: streams that had events go on from
theirs, streams whose first events these are start at 1 (their cursors made in one statement)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction

from halls import events
from halls.eventtypes import EventType, TerminalBalance
from halls.models import StreamCursor

pytestmark = pytest.mark.django_db


def _balance(terminal: int) -> tuple[str, EventType, Any]:
    return (
        f"terminal.{terminal}",
        EventType.TERMINAL_BALANCE,
        TerminalBalance(terminal=terminal, balance=Decimal(1)),
    )


def test_first_and_later_events_of_many_streams_are_numbered_in_order() -> None:
    with transaction.atomic():
        events.emit(*_balance(1))
        events.emit(*_balance(1))
    with transaction.atomic():
        made = events.emit_many([_balance(2), _balance(1), _balance(3), _balance(2)])
    assert [(e.stream, e.seq) for e in made] == [
        ("terminal.2", 1),
        ("terminal.1", 3),
        ("terminal.3", 1),
        ("terminal.2", 2),
    ]
    cursors = dict(StreamCursor.objects.filter(stream__startswith="terminal.").values_list("stream", "seq"))
    assert cursors == {"terminal.1": 3, "terminal.2": 2, "terminal.3": 1}
