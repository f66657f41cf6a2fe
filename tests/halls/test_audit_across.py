"""`audit.record_across`: one entry in each venue's chain (a network pool's or prize's change), written for
any number of venues in a few statements, and every chain as `record` one by one would leave it."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from halls.models import AuditChainHead, AuditEntry, HallCategory, Jurisdiction, Venue
from halls.services import audit
from halls.services.verify import verify_audit

pytestmark = pytest.mark.django_db

KEY = "test-audit-key-across"


@pytest.fixture(autouse=True)
def audit_key(settings: Any) -> None:
    settings.HALL_AUDIT_KEY = KEY


def venues(n: int) -> list[Venue]:
    return [
        Venue.objects.create(
            name=f"Bingo {i}",
            licence_number=f"ML-B-{i:04d}",
            jurisdiction=Jurisdiction.ML,
            hall_category=HallCategory.FIRST,
        )
        for i in range(1, n + 1)
    ]


def started(hall: list[Venue]) -> None:
    """Each venue's chain begun with an entry of its own."""
    for venue in hall:
        with transaction.atomic():
            audit.record(venue_id=venue.pk, actor="t", action="test.own", obj=venue, data={})


def across(hall: list[Venue], **data: Any) -> list[AuditEntry]:
    with transaction.atomic():
        return audit.record_across(
            venue_ids=[v.pk for v in reversed(hall)],
            actor="central",
            action="test.shared",
            obj=hall[0],
            data=data,
        )


def chain(venue: Venue) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(venue_id=venue.pk).order_by("pk"))


def test_one_entry_in_each_chain_linked_to_its_tip_and_every_chain_verifies() -> None:
    hall = venues(5)
    started(hall)
    tips = {v.pk: AuditChainHead.objects.get(venue_id=v.pk).last_hash for v in hall}
    with CaptureQueriesContext(connection) as queries:
        written = across(hall, pool=7)
    assert [e.venue_id for e in written] == sorted(v.pk for v in hall)  # venue id order
    for venue, entry in zip(sorted(hall, key=lambda v: v.pk), written, strict=True):
        mine = chain(venue)
        assert [e.action for e in mine] == ["test.own", "test.shared"]
        assert mine[-1].pk == entry.pk and mine[-1].hash == entry.hash
        assert mine[-1].prev_hash == tips[venue.pk] and mine[-1].data == {"pool": 7}
        head = AuditChainHead.objects.get(venue_id=venue.pk)
        assert (head.last_hash, head.length) == (entry.hash, 2)
    assert verify_audit(venue_ids=[v.pk for v in hall]).ok
    if connection.vendor == "postgresql":  # a count, the heads locked, the entries written: not 2 per venue
        assert len([q for q in queries.captured_queries if "audit" in q["sql"].lower()]) <= 4


def test_a_venue_without_a_chain_and_one_under_an_old_key_are_written_as_record_would(settings: Any) -> None:
    hall = venues(4)
    started(hall[:3])  # the fourth has no chain yet: its head is made
    settings.HALL_AUDIT_OLD_KEYS = [KEY]
    settings.HALL_AUDIT_KEY = "the-next-key"
    across(hall, n=1)  # falls back to one by one (the new chain); each old chain gets its key change first
    across(hall, n=2)  # every chain started, all under the new key: together
    for venue in hall[:3]:
        assert [e.action for e in chain(venue)] == [
            "test.own",
            audit.KEY_CHANGED,
            "test.shared",
            "test.shared",
        ]
    assert [e.action for e in chain(hall[3])] == ["test.shared", "test.shared"]
    assert verify_audit(venue_ids=[v.pk for v in hall]).ok


def test_old_chains_under_an_old_key_get_their_key_change_when_written_together(settings: Any) -> None:
    hall = venues(3)
    started(hall)
    settings.HALL_AUDIT_OLD_KEYS = [KEY]
    settings.HALL_AUDIT_KEY = "the-next-key"
    across(hall, n=1)
    for venue in hall:
        actions = [e.action for e in chain(venue)]
        assert actions == ["test.own", audit.KEY_CHANGED, "test.shared"]
    assert verify_audit(venue_ids=[v.pk for v in hall]).ok
