"""A join and a revocation of the agreement it relies on, at once (PostgreSQL, own connections): the join
either commits before the revocation (which then names the network as affected) or is refused as revoked;
never a member admitted under an agreement already revoked. A venue placed in a region while the region's
jurisdiction changes: the placement sees the old jurisdiction or the new one, never a venue left in a
region under another jurisdiction than its own."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection

from halls.errors import Conflict, InvalidInput
from halls.models import AuditEntry, Jurisdiction, Region, Venue
from halls.services import audit, regions
from tests.halls.region_support import agree, network, region, venue_in
from tests.threads import in_threads

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("attempt", range(4))
def test_a_join_racing_a_revocation_is_consistent(attempt: int) -> None:
    ml, an = region("ML"), region("AN", Jurisdiction.AN10)
    red = network()
    melilla, sevilla = venue_in(ml, "ML-1"), venue_in(an, "AN-1")
    regions.join_network(network=red, venue=melilla, actor="test")
    agreement = agree(ml, an)
    refusals: list[Conflict] = []

    def join() -> None:
        try:
            regions.join_network(network=red, venue=sevilla, actor="test")
        except Conflict as exc:
            refusals.append(exc)

    def revoke() -> None:
        regions.revoke_agreement(agreement=agreement, actor="test")

    assert in_threads([join, revoke] if attempt % 2 else [revoke, join]) == []
    chain = list(AuditEntry.objects.filter(venue=melilla).order_by("pk").values_list("action", "data"))
    revoked = next(data for action, data in chain if action == "region_agreement.revoked")
    if refusals:
        assert refusals[0].details["missing"] == ["revoked"]
        assert not red.venues.filter(pk=sevilla.pk).exists()
        assert revoked["networks_affected"] == []
    else:
        steps = [(action, data.get("venue")) for action, data in chain]
        joined = steps.index(("network.venue_joined", "AN-1"))
        assert joined < steps.index(("region_agreement.revoked", None))
        assert revoked["networks_affected"] == ["RED"]


# --- a venue placed in a region while the region's jurisdiction changes ------------------------------------


def _waiting_on_a_lock(deadline: float = 60.0) -> bool:
    """Whether another connection of this database waits for a row lock now (polled until `deadline`)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
            )
            row = cursor.fetchone()
        if row is not None and row[0] > 0:
            return True
        time.sleep(0.05)
    return False


def _consistent(ml: Region, venue: Venue) -> None:
    """Every venue in the region follows the region's jurisdiction as it stands."""
    ml.refresh_from_db()
    assert all(j == ml.jurisdiction for j in ml.venues.values_list("jurisdiction", flat=True))


def test_a_region_changing_its_jurisdiction_holds_off_a_venue_placed_in_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The region's change is in flight (locked, written, not committed) when the venue is placed: the
    placement waits for it and is then checked against the new jurisdiction (refused), never against the
    old one it could have read before the change committed."""
    ml = region("ML")
    melilla = venue_in(None, "ML-1")  # a Melilla venue, in no region yet
    changed, go_on = threading.Event(), threading.Event()
    real_audit = regions._audit

    def audit_then_wait(*args: Any, **kwargs: Any) -> None:
        real_audit(*args, **kwargs)
        changed.set()
        assert go_on.wait(60), "the test never let the region's change commit"

    monkeypatch.setattr(regions, "_audit", audit_then_wait)
    placed: list[Venue] = []
    refused: list[InvalidInput] = []

    def change() -> None:
        regions.update_region(region=ml, jurisdiction=Jurisdiction.AN10, actor="test")

    def place() -> None:
        assert changed.wait(60)
        try:
            placed.append(regions.assign_venue(venue=melilla, region=ml, actor="test"))
        except InvalidInput as exc:
            refused.append(exc)

    def release() -> None:
        assert changed.wait(60)
        assert _waiting_on_a_lock(), "the placement did not wait for the region's lock"
        go_on.set()

    assert in_threads([change, place, release]) == []
    assert placed == []
    assert [exc.code for exc in refused] == ["region_jurisdiction"]
    melilla.refresh_from_db()
    assert melilla.region_id is None
    _consistent(ml, melilla)
    assert ml.jurisdiction == Jurisdiction.AN10


def test_a_venue_being_placed_in_a_region_holds_off_its_jurisdiction_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The placement is in flight (checked against the jurisdiction in force, written, not committed) when
    the region's jurisdiction is changed: the change waits for it and then finds the venue in the region
    (refused): the venue keeps the rules it was placed under."""
    ml = region("ML")
    melilla = venue_in(None, "ML-1")
    placed_in, go_on = threading.Event(), threading.Event()
    real_record = audit.record

    def record_then_wait(**kwargs: Any) -> Any:
        entry = real_record(**kwargs)
        if kwargs.get("action") == "venue.region_assigned":
            placed_in.set()
            assert go_on.wait(60), "the test never let the placement commit"
        return entry

    monkeypatch.setattr(audit, "record", record_then_wait)
    refused: list[Conflict] = []

    def place() -> None:
        regions.assign_venue(venue=melilla, region=ml, actor="test")

    def change() -> None:
        assert placed_in.wait(60)
        try:
            regions.update_region(region=ml, jurisdiction=Jurisdiction.AN10, actor="test")
        except Conflict as exc:
            refused.append(exc)

    def release() -> None:
        assert placed_in.wait(60)
        assert _waiting_on_a_lock(), "the region's change did not wait for the placement"
        go_on.set()

    assert in_threads([place, change, release]) == []
    assert [exc.code for exc in refused] == ["region_in_use"]
    melilla.refresh_from_db()
    assert melilla.region_id == ml.pk
    _consistent(ml, melilla)
    assert ml.jurisdiction == Jurisdiction.ML


@pytest.mark.parametrize("attempt", range(6))
def test_a_placement_racing_a_jurisdiction_change_follows_the_jurisdiction_in_force(attempt: int) -> None:
    """Both at once, no pause: exactly one of them happens, and the venue is in the region only under the
    jurisdiction it was checked against."""
    ml = region("ML")
    melilla = venue_in(None, "ML-1")
    outcomes: list[str] = []

    def change() -> None:
        try:
            regions.update_region(region=ml, jurisdiction=Jurisdiction.AN10, actor="test")
            outcomes.append("changed")
        except Conflict as exc:
            outcomes.append(exc.code)

    def place() -> None:
        try:
            regions.assign_venue(venue=melilla, region=ml, actor="test")
            outcomes.append("placed")
        except InvalidInput as exc:
            outcomes.append(exc.code)

    assert in_threads([change, place] if attempt % 2 else [place, change]) == []
    melilla.refresh_from_db()
    ml.refresh_from_db()
    assert sorted(outcomes) in (["changed", "region_jurisdiction"], ["placed", "region_in_use"])
    if "placed" in outcomes:
        assert (melilla.region_id, ml.jurisdiction) == (ml.pk, Jurisdiction.ML)
    else:
        assert (melilla.region_id, ml.jurisdiction) == (None, Jurisdiction.AN10)
    _consistent(ml, melilla)
