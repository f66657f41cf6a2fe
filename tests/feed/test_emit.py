"""Emitting on the feed (halls.feed.services.emit) into the outbox owed to the regulator's node
(halls.link.services.feed_outbox): inside the fact's transaction only, switched on per jurisdiction, the
payload validated first, numbered per installation in commit order; the anchors' own message. PostgreSQL
and SQLite."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from halls import anchor_lines
from halls.feed import envelope
from halls.feed.kinds import FeedKind
from halls.feed.schema import SchemaError, validate
from halls.feed.services.emit import emit, holding, venue_on
from halls.link.models import Destination, OutboxMessage
from halls.link.services import feed_outbox
from halls.models import Venue
from halls.services import anchor_key, anchors, audit, installation

pytestmark = pytest.mark.django_db
BEAT = {"last_sequence": 0}


def feed() -> list[tuple[int, int | None, str]]:
    return list(
        OutboxMessage.objects.filter(destination=Destination.REGULATOR)
        .order_by("sequence")
        .values_list("sequence", "venue_id", "kind")
    )


def emitted(kind: FeedKind, payload: dict[str, Any], venue_id: int | None) -> None:
    with transaction.atomic():
        emit(kind, payload, venue_id=venue_id)


@pytest.mark.django_db(transaction=True)
def test_emit_runs_inside_the_facts_transaction_only(settings: Any, venue: Venue) -> None:
    settings.HALL_FEED_ENABLED = True
    with pytest.raises(RuntimeError, match="inside the transaction"):
        emit(FeedKind.HEARTBEAT, BEAT, venue_id=venue.pk)
    assert feed() == []


@pytest.mark.django_db(transaction=True)
def test_a_message_commits_with_its_fact_or_not_at_all(settings: Any, venue: Venue) -> None:
    settings.HALL_FEED_ENABLED = True

    def failing_fact() -> None:
        with transaction.atomic():
            emit(FeedKind.HEARTBEAT, BEAT, venue_id=venue.pk)
            raise ZeroDivisionError  # the fact fails after its message was written

    with pytest.raises(ZeroDivisionError):
        failing_fact()
    assert feed() == []


def beat(n: int) -> dict[str, int]:
    return {"last_sequence": n}


def sent_beats() -> list[int]:
    rows = OutboxMessage.objects.filter(destination=Destination.REGULATOR).order_by("sequence")
    return [row.payload["payload"]["last_sequence"] for row in rows]


def test_held_messages_take_their_place_after_the_holder_s_own(settings: Any, venue: Venue) -> None:
    """A step's payment emits before the step tells its own facts: held, they follow the holder's messages
    written with first(); what is emitted after the release is written at once."""
    settings.HALL_FEED_ENABLED = True
    with transaction.atomic(), holding() as held:
        emit(FeedKind.HEARTBEAT, beat(2), venue_id=venue.pk)  # the payment's
        emit(FeedKind.HEARTBEAT, beat(3), venue_id=venue.pk)
        assert sent_beats() == []
        with held.first():
            emit(FeedKind.HEARTBEAT, beat(1), venue_id=venue.pk)  # the step's own
        held.release()
        emit(FeedKind.HEARTBEAT, beat(4), venue_id=venue.pk)  # after: at once
    assert sent_beats() == [1, 2, 3, 4]


@pytest.mark.django_db(transaction=True)
def test_messages_held_and_never_released_fail_their_fact(settings: Any, venue: Venue) -> None:
    settings.HALL_FEED_ENABLED = True
    with pytest.raises(RuntimeError, match="never released"), transaction.atomic(), holding():
        emit(FeedKind.HEARTBEAT, beat(1), venue_id=venue.pk)
    assert feed() == []  # the fact's transaction rolled back with its lost message


def test_a_held_step_reads_its_venue_once(
    settings: Any, venue: Venue, django_assert_num_queries: Any
) -> None:
    """A ball's step emits several messages (and asks whether its venue feeds): the venue is read once."""
    settings.HALL_FEED_ENABLED = True
    with transaction.atomic(), holding() as held:
        with django_assert_num_queries(1):
            assert venue_on(venue.pk) and venue_on(venue.pk)
            emit(FeedKind.HEARTBEAT, beat(2), venue_id=venue.pk)  # held: nothing written yet
        with held.first():
            emit(FeedKind.HEARTBEAT, beat(1), venue_id=venue.pk)  # the stream's cursor made at its first use
        with django_assert_num_queries(2):  # the cursor's next number and the message: no venue read
            held.release()
    assert sent_beats() == [1, 2]


def test_holding_is_not_nested(settings: Any, venue: Venue) -> None:
    with transaction.atomic(), holding(), pytest.raises(RuntimeError, match="already held"), holding():
        pass


def test_the_feed_is_switched_on_per_jurisdiction(settings: Any, venue: Venue, other_venue: Venue) -> None:
    settings.HALL_FEED_ENABLED = False
    emitted(FeedKind.HEARTBEAT, BEAT, venue.pk)
    assert feed() == []  # off by default
    settings.HALL_FEED_BY_JURISDICTION = {venue.jurisdiction: {"enabled": True}}
    emitted(FeedKind.HEARTBEAT, BEAT, venue.pk)
    emitted(FeedKind.HEARTBEAT, BEAT, other_venue.pk)  # another region: still off
    assert feed() == [(1, venue.pk, "heartbeat")]
    settings.HALL_FEED_ENABLED = True
    settings.HALL_FEED_BY_JURISDICTION = {venue.jurisdiction: {"enabled": False}}
    emitted(FeedKind.HEARTBEAT, BEAT, venue.pk)  # switched off for its region, on elsewhere
    emitted(FeedKind.HEARTBEAT, BEAT, other_venue.pk)
    assert feed() == [(1, venue.pk, "heartbeat"), (2, other_venue.pk, "heartbeat")]


def test_a_central_s_own_messages_follow_hall_feed_enabled(settings: Any, venue: Venue) -> None:
    settings.HALL_ROLE = "central"
    settings.HALL_FEED_BY_JURISDICTION = {venue.jurisdiction: {"enabled": True}}  # a member's region
    settings.HALL_FEED_ENABLED = False
    emitted(FeedKind.HEARTBEAT, BEAT, None)
    assert feed() == []
    settings.HALL_FEED_ENABLED = True
    emitted(FeedKind.HEARTBEAT, BEAT, None)
    assert feed() == [(1, None, "heartbeat")]


def test_a_venue_installation_s_own_messages_follow_its_venues_regions(settings: Any, venue: Venue) -> None:
    settings.HALL_ROLE, settings.HALL_FEED_ENABLED = "venue", False
    emitted(FeedKind.HEARTBEAT, BEAT, None)
    assert feed() == []
    settings.HALL_FEED_BY_JURISDICTION = {venue.jurisdiction: {"enabled": True}}
    emitted(FeedKind.HEARTBEAT, BEAT, None)
    assert feed() == [(1, None, "heartbeat")]


def test_a_payload_outside_its_schema_is_a_bug_raised_and_nothing_written(
    settings: Any, venue: Venue
) -> None:
    settings.HALL_FEED_ENABLED = True
    with pytest.raises(SchemaError, match="last_sequence"):
        emitted(FeedKind.HEARTBEAT, {"last_sequence": "x"}, venue.pk)
    with pytest.raises(SchemaError):
        emitted(FeedKind.HEARTBEAT, {"last_sequence": 1, "name": "a player"}, venue.pk)
    assert feed() == []


def test_one_sequence_per_installation_whatever_the_venue_and_other_destinations_apart(
    settings: Any, venue: Venue, other_venue: Venue
) -> None:
    settings.HALL_FEED_ENABLED = True
    for venue_id in (venue.pk, other_venue.pk, None, venue.pk):
        emitted(FeedKind.HEARTBEAT, BEAT, venue_id)
    assert [s for s, _v, _k in feed()] == [1, 2, 3, 4]
    assert [v for _s, v, _k in feed()] == [venue.pk, other_venue.pk, None, venue.pk]
    with transaction.atomic():  # the central's outbox of the venue keeps its own numbers
        central = OutboxMessage.objects.create(venue=venue, sequence=1, kind="link.hello", payload={})
    assert central.destination == Destination.CENTRAL


def test_only_the_regulator_s_messages_may_have_no_venue(venue: Venue) -> None:
    from django.db import IntegrityError

    with pytest.raises(IntegrityError), transaction.atomic():
        OutboxMessage.objects.create(
            venue=None, destination=Destination.CENTRAL, sequence=1, kind="x", payload={}
        )


def test_the_sender_signs_each_message_with_the_installation_s_key(settings: Any, venue: Venue) -> None:
    settings.HALL_FEED_ENABLED = True
    emitted(FeedKind.HEARTBEAT, BEAT, venue.pk)
    assert feed_outbox.heartbeat() == 2
    batch = feed_outbox.next_batch(limit=10)
    assert [m["sequence"] for m in batch] == [1, 2]
    assert batch[1]["payload"] == {"last_sequence": 1}  # a heartbeat says the one before it
    key = anchor_key.signing_key().public_key()
    for wire in batch:
        validate(wire)
        message = envelope.from_json(wire)
        assert message.installation == installation.identity()
        assert envelope.signature_holds(message, key)
    assert feed_outbox.next_batch(limit=10) == batch  # signed again the same: a resend is a duplicate
    assert feed_outbox.backlog()[0] == 2
    assert feed_outbox.acknowledge(up_to=1) == 1
    assert [m["sequence"] for m in feed_outbox.next_batch(limit=10)] == [2]
    assert feed_outbox.rewind(expected=1) == (0, 1)
    assert feed_outbox.backlog()[0] == 2


def test_no_heartbeat_when_the_feed_is_off(settings: Any, venue: Venue) -> None:
    settings.HALL_FEED_ENABLED = False
    assert feed_outbox.heartbeat() is None and feed() == []


def test_every_anchor_goes_on_the_feed_with_every_chain_s_head(settings: Any, venue: Venue) -> None:
    settings.HALL_FEED_ENABLED = True
    with transaction.atomic():
        audit.record(venue_id=venue.pk, actor="test", action="test.fact", obj=venue, data={"n": 1})
    lines = anchors.write()
    assert lines
    (row,) = OutboxMessage.objects.filter(destination=Destination.REGULATOR, kind="anchor")
    assert row.venue_id is None
    payload = row.payload["payload"]
    key = anchor_key.signing_key().public_key()
    assert payload["key_id"] == anchor_lines.key_id(key)
    assert payload["lines"] == lines
    for line in payload["lines"]:
        assert anchor_lines.check_line(line, key, installation.identity()) == ""
    chains = {c["chain"]: c for c in payload["chains"]}
    assert chains[f"venue-{venue.pk}"]["length"] >= 1
    assert anchors.write() == []  # nothing moved: no new anchor, no message
    assert OutboxMessage.objects.filter(destination=Destination.REGULATOR, kind="anchor").count() == 1


def test_anchors_write_no_message_when_the_feed_is_off(settings: Any, venue: Venue) -> None:
    settings.HALL_FEED_ENABLED = False
    with transaction.atomic():
        audit.record(venue_id=venue.pk, actor="test", action="test.fact", obj=venue, data={"n": 1})
    assert anchors.write()
    assert feed() == []
