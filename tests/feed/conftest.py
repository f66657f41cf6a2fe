"""What the feed's fact tests share: the feed switched on (or left off), and the messages a service call
wrote, read once its transaction committed.

The messages are read back from the outbox owed to the regulator (halls.link's OutboxMessage, destination
"regulator"), in sequence order: those written since the fixture (or `clear`) began."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest
from django.db import transaction
from django.db.models import Max

from halls.feed.schema import validate_payload
from halls.feed.services import emit
from halls.link.models import Destination, OutboxMessage

T = TypeVar("T")


class _RolledBack(Exception):
    """Raised inside a service call's transaction to roll it back."""


def _last_pk() -> int:
    return OutboxMessage.objects.aggregate(m=Max("pk"))["m"] or 0


@dataclass
class Feed:
    capture: Any  # pytest-django's django_capture_on_commit_callbacks
    since: int = field(default_factory=_last_pk)  # the outbox's last row before the test's facts

    def written(self) -> list[OutboxMessage]:
        rows = OutboxMessage.objects.filter(destination=Destination.REGULATOR, pk__gt=self.since)
        return list(rows.order_by("sequence"))

    def run(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """One service call (or a scenario of several), then the feed's commit hooks of what committed run
        as after a real commit. Only the feed's: the others (a task enqueued, a screen told) stay unsent."""
        with self.capture(execute=False) as hooks:
            result = call(*args, **kwargs)
        for hook in hooks:
            if getattr(hook, "__module__", "") == emit.__name__:
                hook()
        return result

    def rolled_back(self, call: Callable[..., object], *args: Any, **kwargs: Any) -> None:
        """A service call whose transaction then rolls back (an error after the fact, in the same
        transaction): what was written before it (the fixtures' facts) is set aside first, so
        `messages()` then says what the rolled-back call left: nothing."""
        self.clear()

        def rolled_back() -> None:
            try:
                with transaction.atomic():
                    call(*args, **kwargs)
                    raise _RolledBack
            except _RolledBack:
                pass

        self.run(rolled_back)

    def messages(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The payloads written so far (of `kind`), in order; each checked against its kind's schema."""
        found = []
        for message in self.written():
            payload = message.payload["payload"]  # the outbox keeps the fact's time beside it
            validate_payload(message.kind, payload)
            if kind is None or message.kind == kind:
                found.append(payload)
        return found

    def kinds(self) -> list[str]:
        return [message.kind for message in self.written()]

    def text(self) -> str:
        """Every payload written, as one JSON text (what a search for a person's identity reads)."""
        return json.dumps([m.payload for m in self.written()], ensure_ascii=False)  # with the times

    def clear(self) -> None:
        self.since = _last_pk()


@pytest.fixture
def feed(settings: Any, django_capture_on_commit_callbacks: Any) -> Feed:
    """The feed on for every jurisdiction (and a central's own messages), nothing written yet."""
    settings.HALL_FEED_ENABLED = True
    return Feed(django_capture_on_commit_callbacks)


@pytest.fixture
def feed_off(settings: Any, django_capture_on_commit_callbacks: Any) -> Feed:
    """The feed left off (the default): nothing may be written."""
    settings.HALL_FEED_ENABLED = False
    settings.HALL_FEED_BY_JURISDICTION = {}
    return Feed(django_capture_on_commit_callbacks)
