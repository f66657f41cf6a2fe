"""The transactional tests' flush on PostgreSQL (tests/fast_flush.py): it deletes the rows of the tables a
test wrote to, append-only ones included, and leaves the row triggers on for everything after it."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from halls.models import AuditEntry, Venue
from halls.services import audit
from tests import fast_flush


@pytest.mark.django_db(transaction=True)
def test_the_flush_empties_every_table_the_append_only_ones_too_and_keeps_their_guard(
    venue: Venue, operator: Any
) -> None:
    if connection.vendor != "postgresql":
        pytest.fail("the fast flush is PostgreSQL's")
    with transaction.atomic():
        audit.record(venue_id=venue.pk, actor=operator, action="test.flush", obj=venue, data={})
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    assert {"halls_venue", "halls_auditentry", "auth_user"} <= set(fast_flush.non_empty(connection, tables))

    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, inhibit_post_migrate=True)

    assert fast_flush.non_empty(connection, tables) == []
    # The append-only guard is back on once the flush's transaction ended.
    again = Venue.objects.create(
        name="Otra", licence_number="ML-9", jurisdiction="ML", hall_category="1", time_zone="Africa/Ceuta"
    )
    with transaction.atomic():
        audit.record(
            venue_id=again.pk, actor=operator.get_username(), action="test.flush", obj=again, data={}
        )
    with pytest.raises(DatabaseError, match="Cannot update or delete"), transaction.atomic():
        AuditEntry.objects.all().delete()
