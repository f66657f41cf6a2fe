"""What the feed's fact tests share: the feed switched on (or left off), and the messages a service call
wrote, read once its transaction committed.

The messages are read from halls.feed.services.emit's stand-in (`written`, in this process's memory, numbered
as they commit). With the transport's own emit (feedwire's outbox) this fixture is the one place that reads
them back: `Feed.messages` then reads that outbox."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from django.db import transaction

from halls.feed.schema import validate_payload
from halls.feed.services import emit

T = TypeVar("T")


class _RolledBack(Exception):
    """Raised inside a service call's transaction to roll it back."""


@dataclass
class Feed:
    capture: Any  # pytest-django's django_capture_on_commit_callbacks

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
        transaction): the commit hooks that survive are run."""

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
        for message in emit.written():
            validate_payload(message.kind, message.payload)
            if kind is None or message.kind == kind:
                found.append(message.payload)
        return found

    def kinds(self) -> list[str]:
        return [message.kind for message in emit.written()]

    def text(self) -> str:
        """Every payload written, as one JSON text (what a search for a person's identity reads)."""
        return json.dumps([m.payload for m in emit.written()], ensure_ascii=False)

    def clear(self) -> None:
        emit.clear()


@pytest.fixture
def feed(settings: Any, django_capture_on_commit_callbacks: Any) -> Iterator[Feed]:
    """The feed on for every jurisdiction (and a central's own messages), nothing written yet."""
    settings.HALL_FEED_ENABLED = True
    emit.clear()
    yield Feed(django_capture_on_commit_callbacks)
    emit.clear()


@pytest.fixture
def feed_off(settings: Any, django_capture_on_commit_callbacks: Any) -> Iterator[Feed]:
    """The feed left off (the default): nothing may be written."""
    settings.HALL_FEED_ENABLED = False
    settings.HALL_FEED_BY_JURISDICTION = {}
    emit.clear()
    yield Feed(django_capture_on_commit_callbacks)
    emit.clear()
