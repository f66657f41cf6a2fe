"""The link's core in one database playing both roles: the venue's outbox, the central's inbox (exactly
once, in order, refusals recorded), and the central's numbered streams applied in order by a venue."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halls.errors import Conflict
from halls.link import registry
from halls.link.kinds import LinkKind
from halls.link.models import InboxMessage, OutboxMessage, StreamEntry, VenueLink
from halls.link.services import inbox, loopback, outbox, streams
from halls.link.services.inbox import OutOfOrder
from halls.models import Room, Venue

pytestmark = pytest.mark.django_db


@pytest.fixture
def applied(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, dict[str, Any]]]:
    """The central's HELLO handler replaced by one that writes a room (a fact of its own) and remembers
    what it applied; a payload with "refuse" is refused after the room is written."""
    seen: list[tuple[int, int, dict[str, Any]]] = []

    def handle(message: registry.VenueMessage) -> dict[str, Any]:
        Room.objects.create(venue_id=message.venue_id, name=f"from {message.sequence}")
        if message.payload.get("refuse"):
            raise Conflict("This network game is closed.", code="network_game_closed")
        seen.append((message.venue_id, message.sequence, message.payload))
        return {"n": message.payload.get("n")}

    monkeypatch.setitem(registry._venue_handlers, LinkKind.HELLO, handle)
    return seen


def _say(venue: Venue, n: int, **more: Any) -> OutboxMessage:
    with transaction.atomic():
        return outbox.enqueue(venue_id=venue.pk, kind=LinkKind.HELLO, payload={"n": n, **more})


@pytest.mark.django_db(transaction=True)
def test_the_outbox_is_written_only_inside_the_facts_transaction(venue: Venue) -> None:
    with pytest.raises(RuntimeError, match="inside the transaction"):
        outbox.enqueue(venue_id=venue.pk, kind=LinkKind.HELLO, payload={})

    def fact_that_fails() -> None:
        with transaction.atomic():
            outbox.enqueue(venue_id=venue.pk, kind=LinkKind.HELLO, payload={"n": 1})
            raise ZeroDivisionError  # the fact fails: its message goes with it

    with pytest.raises(ZeroDivisionError):
        fact_that_fails()
    assert not OutboxMessage.objects.exists()


def test_each_venue_numbers_its_own_messages(venue: Venue, other_venue: Venue) -> None:
    assert [_say(venue, n).sequence for n in range(3)] == [1, 2, 3]
    assert _say(other_venue, 0).sequence == 1
    assert outbox.backlog(venue_id=venue.pk) == 3


def test_delivered_once_in_order_and_a_resend_is_a_no_op(venue: Venue, applied: list[Any]) -> None:
    for n in range(3):
        _say(venue, n)
    answers = loopback.deliver(venue_id=venue.pk)
    assert [(a.sequence, a.status, a.answer) for a in answers] == [
        (1, "applied", {"n": 0}),
        (2, "applied", {"n": 1}),
        (3, "applied", {"n": 2}),
    ]
    assert outbox.backlog(venue_id=venue.pk) == 0
    # The acknowledgement was lost: the venue sends message 2 again. Nothing is applied twice.
    again = inbox.accept(venue_id=venue.pk, sequence=2, kind="link.hello", payload={"n": 1})
    assert (again.status, again.answer) == ("duplicate", {"n": 1})
    assert [s for _v, s, _p in applied] == [1, 2, 3]
    assert Room.objects.filter(venue=venue, name__startswith="from").count() == 3
    assert VenueLink.objects.get(venue=venue).applied_sequence == 3


def test_a_message_ahead_of_its_turn_is_refused_and_changes_nothing(venue: Venue, applied: list[Any]) -> None:
    inbox.accept(venue_id=venue.pk, sequence=1, kind="link.hello", payload={"n": 1})
    with pytest.raises(OutOfOrder) as refused:
        inbox.accept(venue_id=venue.pk, sequence=3, kind="link.hello", payload={"n": 3})
    assert refused.value.details == {"expected": 2, "got": 3}
    assert InboxMessage.objects.filter(venue=venue).count() == 1
    assert VenueLink.objects.get(venue=venue).applied_sequence == 1
    assert len(applied) == 1


def test_a_refused_message_is_recorded_undone_and_the_next_one_follows(
    venue: Venue, applied: list[Any]
) -> None:
    _say(venue, 1, refuse=True)
    _say(venue, 2)
    first, second = loopback.deliver(venue_id=venue.pk)
    assert first.status == "refused"
    assert first.answer["refused"]["code"] == "network_game_closed"
    assert second.status == "applied"
    assert not Room.objects.filter(name="from 1").exists()  # the refused handler's write was undone
    assert Room.objects.filter(name="from 2").exists()
    assert InboxMessage.objects.get(venue=venue, sequence=1).answer == first.answer
    again = inbox.accept(venue_id=venue.pk, sequence=1, kind="link.hello", payload={"n": 1, "refuse": True})
    assert (again.status, again.answer) == ("duplicate", first.answer)


def test_unknown_kinds_are_refused(venue: Venue) -> None:
    with pytest.raises(Exception, match="Unknown message kind"):
        inbox.accept(venue_id=venue.pk, sequence=1, kind="bingo.nonsense", payload={})
    assert not VenueLink.objects.exists()


def test_streams_are_applied_in_order_once_and_stop_at_a_gap(
    monkeypatch: pytest.MonkeyPatch, db: None
) -> None:
    got: list[int] = []
    monkeypatch.setitem(
        registry._central_handlers, LinkKind.NOTICE, lambda entry: got.append(entry.payload["n"])
    )
    with transaction.atomic():
        made = [streams.append(stream="network.N1", kind=LinkKind.NOTICE, payload={"n": n}) for n in range(5)]
        streams.append(stream="network.N2", kind=LinkKind.NOTICE, payload={"n": 99})
    assert [e.sequence for e in made] == [1, 2, 3, 4, 5]
    entries = [registry.CentralEntry(e.stream, e.sequence, LinkKind.NOTICE, e.payload) for e in made]
    # Entries 1, 2 and 4 arrive (3 was missed): 1 and 2 applied, then the gap.
    first = streams.apply(stream="network.N1", entries=[entries[0], entries[1], entries[3]])
    assert (first.position, first.applied, first.gap) == (2, 2, True)
    # The catch-up from the central's log, with 1 and 2 again: each applied once.
    caught = loopback.follow(stream="network.N1", after=0)
    assert (caught.position, caught.applied, caught.gap) == (5, 3, False)
    assert got == [0, 1, 2, 3, 4]
    assert StreamEntry.objects.filter(stream="network.N2").get().sequence == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n=st.integers(min_value=1, max_value=8),
    arrivals=st.lists(st.integers(min_value=1, max_value=10), min_size=1, max_size=30),
)
def test_any_arrival_order_applies_each_message_once_in_order(
    venue: Venue, applied: list[Any], n: int, arrivals: list[int]
) -> None:
    """Whatever the network does (resends, reorders, sequences never sent), each of the n messages is
    applied exactly once, in sequence order, after the sender's in-order resend."""
    fresh = Venue.objects.create(name=f"V{len(applied)}-{n}", licence_number=f"L-{Venue.objects.count()}")
    start = len(applied)
    for s in arrivals:
        with contextlib.suppress(OutOfOrder):
            inbox.accept(venue_id=fresh.pk, sequence=s, kind="link.hello", payload={"n": s})
    # The sender resends everything not acknowledged, in order.
    for s in range(1, n + 1):
        inbox.accept(venue_id=fresh.pk, sequence=s, kind="link.hello", payload={"n": s})
    mine = [seq for v, seq, _p in applied[start:] if v == fresh.pk]
    top = VenueLink.objects.get(venue=fresh).applied_sequence
    assert mine == list(range(1, top + 1))
    assert top >= n


def test_each_entry_is_applied_in_its_own_transaction(monkeypatch: pytest.MonkeyPatch, db: None) -> None:
    """A handler takes its locks in the house's order (a room, then an audit head): entries applied
    together in one transaction would take the second entry's room after the first's audit head."""
    from halls.locks import Rank, take

    def handle(entry: registry.CentralEntry) -> None:
        take(Rank.ROOM, entry.sequence)
        take(Rank.AUDIT_HEAD, entry.sequence)

    monkeypatch.setitem(registry._central_handlers, LinkKind.NOTICE, handle)
    with transaction.atomic():
        made = [streams.append(stream="network.N3", kind=LinkKind.NOTICE, payload={"n": n}) for n in range(3)]
    done = streams.apply(
        stream="network.N3",
        entries=[registry.CentralEntry(e.stream, e.sequence, LinkKind.NOTICE, e.payload) for e in made],
    )
    assert (done.position, done.applied, done.gap) == (3, 3, False)


def test_a_failing_handler_keeps_the_entries_before_it(monkeypatch: pytest.MonkeyPatch, db: None) -> None:
    def handle(entry: registry.CentralEntry) -> None:
        if entry.payload["n"] == 1:
            raise Conflict("The local game is gone.", code="gone")

    monkeypatch.setitem(registry._central_handlers, LinkKind.NOTICE, handle)
    with transaction.atomic():
        made = [streams.append(stream="network.N4", kind=LinkKind.NOTICE, payload={"n": n}) for n in range(3)]
    entries = [registry.CentralEntry(e.stream, e.sequence, LinkKind.NOTICE, e.payload) for e in made]
    with pytest.raises(Conflict):
        streams.apply(stream="network.N4", entries=entries)
    again = streams.apply(stream="network.N4", entries=entries[:1])  # already applied: nothing to do
    assert (again.position, again.applied, again.gap) == (1, 0, False)
