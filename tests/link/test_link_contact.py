"""A venue's plain contact (a stream read at the central) recorded on its link without waiting: at most once
every `presence.CONTACT_EVERY`, skipped while a transaction applying its messages holds the row (that one
records the contact). Run on PostgreSQL and on SQLite (tests/link is in SQLITE_SUITE), but for the
lock wait (SQLite has one writer: the contact waits for it there; SQLITE_DESELECT)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from halls.link.models import VenueLink
from halls.link.services import presence
from halls.link.services.locks import lock_venue_link
from halls.models import Venue

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _central(settings: Any) -> None:
    settings.HALL_ROLE = "central"


def _seen_at(venue: Venue) -> Any:
    return VenueLink.objects.get(venue=venue).last_seen_at


def test_a_first_contact_makes_the_link_and_a_later_one_moves_it_on(venue: Venue) -> None:
    assert not VenueLink.objects.filter(venue=venue).exists()
    presence.seen(venue_id=venue.pk)
    first = _seen_at(venue)
    assert first is not None
    long_ago = timezone.now() - timedelta(seconds=5)
    VenueLink.objects.filter(venue=venue).update(last_seen_at=long_ago)
    presence.seen(venue_id=venue.pk)
    assert _seen_at(venue) > long_ago


def test_contacts_closer_than_contact_every_write_once(venue: Venue) -> None:
    presence.seen(venue_id=venue.pk)
    first = _seen_at(venue)
    with CaptureQueriesContext(connection) as queries:
        for _ in range(5):
            presence.seen(venue_id=venue.pk)
    assert _seen_at(venue) == first  # within CONTACT_EVERY: nothing written
    assert len(queries) <= 10  # one statement each on PostgreSQL (two on SQLite)
    VenueLink.objects.filter(venue=venue).update(last_seen_at=first - presence.CONTACT_EVERY)
    presence.seen(venue_id=venue.pk)
    assert _seen_at(venue) > first - presence.CONTACT_EVERY


def test_a_contact_with_what_the_venue_reported_is_always_recorded(venue: Venue) -> None:
    presence.seen(venue_id=venue.pk)
    presence.seen(venue_id=venue.pk, reported=7)
    presence.seen(venue_id=venue.pk, reported=5)  # never backwards
    assert VenueLink.objects.get(venue=venue).reported_sequence == 7


@pytest.mark.django_db(transaction=True)
def test_a_contact_does_not_wait_for_the_venue_s_messages_being_applied(venue: Venue) -> None:
    presence.seen(venue_id=venue.pk)
    old = timezone.now() - timedelta(seconds=5)
    VenueLink.objects.filter(venue=venue).update(last_seen_at=old)
    locked, release = threading.Event(), threading.Event()

    def applying_messages() -> None:
        try:
            with transaction.atomic():
                lock_venue_link(venue.pk)
                locked.set()
                release.wait(10)
        finally:
            connections.close_all()

    holder = threading.Thread(target=applying_messages)
    holder.start()
    try:
        assert locked.wait(10)
        started = time.monotonic()
        presence.seen(venue_id=venue.pk)
        took = time.monotonic() - started
    finally:
        release.set()
        holder.join(10)
    assert took < 1.0  # it did not wait for the holder (which would have held it 10 s)
    assert _seen_at(venue) == old  # skipped: the holder records the contact
    presence.seen(venue_id=venue.pk)  # free again: recorded
    assert _seen_at(venue) > old
