"""Regions and agreements (spec §5 IB-02…IB-04, R-14): a network spans two regions only under an agreement
with both documents, valid today; a refusal writes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction

from halls.errors import Conflict, InvalidInput
from halls.models import AgreementEnd, AuditEntry, Jurisdiction, RegionAgreement
from halls.services import audit, regions, venueclock
from tests.halls.region_support import agree, network, nothing_written, operator, region, today, venue_in

pytestmark = pytest.mark.django_db


def test_same_region_needs_no_agreement() -> None:
    ml = region("ML")
    red = network()
    for licence in ("ML-1", "ML-2", "ML-3"):
        regions.join_network(network=red, venue=venue_in(ml, licence), actor="test")
    assert red.venues.count() == 3
    assert RegionAgreement.objects.count() == 0


def test_cross_region_join_refused_without_agreement_nothing_written() -> None:
    ml, an = region("ML"), region("AN", Jurisdiction.AN10)
    red = network()
    regions.join_network(network=red, venue=venue_in(ml, "ML-1"), actor="test")
    sevilla = venue_in(an, "AN-1")
    with nothing_written(), pytest.raises(Conflict) as refused:
        regions.join_network(network=red, venue=sevilla, actor="test")
    assert refused.value.code == "no_region_agreement"
    assert refused.value.details == {"regions": ["AN", "ML"], "missing": ["agreement"], "network": "RED"}
    assert "AN" in refused.value.message and "ML" in refused.value.message
    assert list(red.venues.values_list("licence_number", flat=True)) == ["ML-1"]


def test_both_documents_make_the_join_valid_and_it_is_audited() -> None:
    ml, an = region("ML"), region("AN", Jurisdiction.AN10)
    red = network()
    melilla, sevilla = venue_in(ml, "ML-1"), venue_in(an, "AN-1")
    regions.join_network(network=red, venue=melilla, actor="test")
    agreement = agree(ml, an, protocol=False)
    with nothing_written(), pytest.raises(Conflict) as no_protocol:
        regions.join_network(network=red, venue=sevilla, actor="test")
    assert no_protocol.value.details["missing"] == ["administration_protocol"]

    regions.record_agreement_documents(
        agreement=agreement, actor="test", protocol_ref="PC-1", protocol_signed_on=today()
    )
    regions.join_network(network=red, venue=sevilla, actor="test")
    assert set(red.venues.all()) == {melilla, sevilla}
    joined = AuditEntry.objects.filter(action="network.venue_joined", data__venue="AN-1")
    assert sorted(joined.values_list("venue_id", flat=True)) == sorted([melilla.pk, sevilla.pk])
    assert joined.first().data["regions"] == ["AN", "ML"]  # type: ignore[union-attr]
    regions.join_network(network=red, venue=sevilla, actor="test")  # twice: nothing more
    assert joined.count() == 2
    for venue in (melilla, sevilla):
        assert audit.verify_chain(venue.pk).ok


def test_revoked_agreement_refuses_again() -> None:
    ml, an = region("ML"), region("AN", Jurisdiction.AN10)
    red = network()
    melilla, sevilla = venue_in(ml, "ML-1"), venue_in(an, "AN-1")
    agreement = agree(ml, an)
    regions.join_network(network=red, venue=melilla, actor="test")
    regions.join_network(network=red, venue=sevilla, actor="test")
    regions.revoke_agreement(agreement=agreement, actor="test", note="administration withdrew")
    agreement.refresh_from_db()
    assert agreement.ended_as == AgreementEnd.REVOKED
    revoked = AuditEntry.objects.get(action="region_agreement.revoked", venue=melilla)
    assert revoked.data["networks_affected"] == ["RED"]
    assert [(n.code, pair) for n, pair in regions.networks_out_of_span()] == [("RED", ["AN", "ML"])]

    regions.leave_network(network=red, venue=sevilla, actor="test")
    with nothing_written(), pytest.raises(Conflict) as refused:
        regions.join_network(network=red, venue=sevilla, actor="test")
    assert refused.value.details["missing"] == ["revoked"]
    with pytest.raises(Conflict) as twice:
        regions.revoke_agreement(agreement=agreement, actor="test")
    assert twice.value.code == "agreement_ended"


def test_validity_period() -> None:
    ml, an = region("ML"), region("AN", Jurisdiction.AN10)
    melilla, sevilla = venue_in(ml, "ML-1"), venue_in(an, "AN-1")
    agreement = agree(ml, an, valid_from=today() - timedelta(days=30), valid_until=today())
    regions.check_network_span(network=None, venues=[melilla, sevilla])
    with pytest.raises(Conflict) as after:
        regions.check_network_span(network=None, venues=[melilla, sevilla], on=today() + timedelta(days=1))
    assert after.value.details["missing"] == ["expired"]
    with pytest.raises(Conflict) as before:
        regions.check_network_span(network=None, venues=[melilla, sevilla], on=today() - timedelta(days=31))
    assert "not_yet_valid" in before.value.details["missing"]
    assert regions.agreement_valid(ml, an) and regions.agreement_valid(ml, ml)

    # An open agreement still valid is not replaced; an expired one is ended (audited) by the new one.
    with pytest.raises(Conflict) as exists:
        agree(ml, an)
    assert exists.value.code == "agreement_exists"
    RegionAgreement.objects.filter(pk=agreement.pk).update(valid_until=today() - timedelta(days=1))
    with pytest.raises(Conflict) as expired:
        regions.check_network_span(network=None, venues=[melilla, sevilla])
    assert expired.value.details["missing"] == ["expired"]
    renewed = agree(an, ml)
    agreement.refresh_from_db()
    assert agreement.ended_as == AgreementEnd.EXPIRED
    assert (renewed.region_a, renewed.region_b) == (ml, an)  # stored normalised, lower id first
    assert AuditEntry.objects.filter(action="region_agreement.expired").count() == 2  # both venues
    regions.check_network_span(network=None, venues=[melilla, sevilla])


def test_three_regions_name_the_first_missing_pair() -> None:
    ml, an, ct = region("ML"), region("AN", Jurisdiction.AN10), region("CT", Jurisdiction.CT)
    venues = [venue_in(ml, "ML-1"), venue_in(an, "AN-1"), venue_in(ct, "CT-1"), venue_in(None, "X-1")]
    agree(ml, an)
    with pytest.raises(Conflict) as refused:
        regions.check_network_span(network=None, venues=venues)
    assert refused.value.details["regions"] == ["AN", "CT"]
    agree(an, ct)
    with pytest.raises(Conflict) as still:
        regions.check_network_span(network=None, venues=venues)
    assert still.value.details["regions"] == ["CT", "ML"]
    agree(ct, ml)
    regions.check_network_span(network=None, venues=venues)


def test_moving_a_member_to_another_region_checks_its_networks() -> None:
    ml, an = region("ML"), region("AN", Jurisdiction.ML)
    red = network()
    first, second = venue_in(ml, "ML-1"), venue_in(ml, "ML-2")
    for venue in (first, second):
        regions.join_network(network=red, venue=venue, actor="test")
    with nothing_written(), pytest.raises(Conflict) as refused:
        regions.assign_venue(venue=second, region=an, actor="test")
    assert refused.value.details["regions"] == ["AN", "ML"]
    agree(ml, an)
    moved = regions.assign_venue(venue=second, region=an, actor="test")
    assert moved.region == an
    entry = AuditEntry.objects.filter(action="venue.region_assigned", venue=second).last()
    assert entry is not None and entry.data == {
        "old": {"region": "ML", "operator": None},
        "new": {"region": "AN", "operator": None},
    }


def test_refusals_of_bad_input() -> None:
    ml = region("ML")
    with pytest.raises(Conflict):
        region("ml")  # codes are upper-cased: taken
    with pytest.raises(InvalidInput) as bad:
        regions.create_region(code=" ", name="x", jurisdiction="ML", actor="t")
    assert bad.value.code == "bad_region"
    with pytest.raises(InvalidInput):
        regions.create_region(code="ZZ", name="x", jurisdiction="XX", actor="t")
    company = operator("B12345678")
    with pytest.raises(Conflict):
        operator("b12345678")
    with pytest.raises(InvalidInput) as same:
        agree(ml, ml)
    assert same.value.code == "same_region"
    an = region("AN", Jurisdiction.AN10)
    with pytest.raises(InvalidInput) as wrong:
        regions.assign_venue(venue=venue_in(ml, "ML-1"), region=an, actor="t")
    assert wrong.value.code == "region_jurisdiction"
    with pytest.raises(InvalidInput) as future:
        regions.record_agreement(
            regions=(ml, an),
            actor="t",
            valid_from=today(),
            operator_agreement_ref="AC",
            operator_agreement_signed_on=today() + timedelta(days=1),
            operators=[company],
        )
    assert future.value.code == "signed_in_future"
    with pytest.raises(InvalidInput) as half:
        regions.record_agreement(regions=(ml, an), actor="t", valid_from=today(), protocol_ref="PC")
    assert half.value.code == "incomplete_document"
    with pytest.raises(Conflict) as in_use:
        regions.update_region(region=ml, jurisdiction=Jurisdiction.CT, actor="t")
    assert in_use.value.code == "region_in_use"
    renamed = regions.update_region(region=ml, name="Ciudad Autónoma de Melilla", actor="t")
    assert renamed.name == "Ciudad Autónoma de Melilla"
    assert AuditEntry.objects.filter(action="region.changed").count() == 1


def test_the_database_keeps_one_open_agreement_per_normalised_pair() -> None:
    ml, an = region("ML"), region("AN", Jurisdiction.AN10)
    agreement = agree(ml, an)
    fields = {"valid_from": today(), "recorded_at": agreement.recorded_at}
    with pytest.raises(IntegrityError), transaction.atomic():
        RegionAgreement.objects.create(region_a=ml, region_b=an, **fields)
    with pytest.raises(IntegrityError), transaction.atomic():
        RegionAgreement.objects.create(region_a=an, region_b=ml, **fields)


def test_the_agreements_dates_are_judged_at_each_venues_lab_clock() -> None:
    """A lab moves a venue's clock forward (halls.services.venueclock): the span is judged at that venue's
    date too, so an agreement ending in two days has expired there, and one starting in two days is valid
    once both venues' clocks have reached it."""
    ml, an = region("ML"), region("AN", Jurisdiction.AN10)
    melilla, sevilla = venue_in(ml, "ML-1"), venue_in(an, "AN-1")
    ending = agree(ml, an, valid_from=today() - timedelta(days=30), valid_until=today() + timedelta(days=2))
    red = network()
    regions.join_network(network=red, venue=melilla, actor="test")
    regions.join_network(network=red, venue=sevilla, actor="test")
    assert regions.networks_out_of_span() == []
    venueclock.move(venue=sevilla, actor="test", forward=timedelta(days=3))
    with pytest.raises(Conflict) as expired:
        regions.check_network_span(network=None, venues=[melilla, sevilla])
    assert expired.value.details["missing"] == ["expired"]
    assert [(n.code, pair) for n, pair in regions.networks_out_of_span()] == [("RED", ["AN", "ML"])]
    # A day given is judged as given (the operator's explicit question).
    regions.check_network_span(network=None, venues=[melilla, sevilla], on=today())

    regions.revoke_agreement(agreement=ending, actor="test")
    regions.leave_network(network=red, venue=sevilla, actor="test")
    agree(ml, an, valid_from=today() + timedelta(days=2))  # signed yesterday, valid from the day after next
    with nothing_written(), pytest.raises(Conflict) as early:
        regions.join_network(network=red, venue=sevilla, actor="test")  # Melilla is still at today's date
    assert early.value.details["missing"] == ["not_yet_valid"]
    venueclock.move(venue=melilla, actor="test", forward=timedelta(days=3))
    regions.join_network(network=red, venue=sevilla, actor="test")
    assert set(red.venues.all()) == {melilla, sevilla}
