"""Regions, operators, agreements and networks for the span tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta

from django.db import models
from django.utils import timezone

from halls.models import AuditEntry, Jurisdiction, Network, Operator, Region, RegionAgreement, Venue
from halls.services import regions

# The rows a refused span change must leave as they were.
SPAN_TABLES: tuple[type[models.Model], ...] = (
    Region,
    Operator,
    RegionAgreement,
    Network.venues.through,
    AuditEntry,
)


def counts() -> dict[str, int]:
    return {m.__name__: m._default_manager.count() for m in SPAN_TABLES}


@contextmanager
def nothing_written() -> Iterator[None]:
    before = counts()
    memberships = sorted(Network.venues.through.objects.values_list("network_id", "venue_id"))
    places = sorted(Venue.objects.values_list("pk", "region_id", "operator_id"))
    yield
    assert counts() == before
    assert sorted(Network.venues.through.objects.values_list("network_id", "venue_id")) == memberships
    assert sorted(Venue.objects.values_list("pk", "region_id", "operator_id")) == places


def today() -> date:
    return timezone.localdate()


def region(code: str, jurisdiction: str = Jurisdiction.ML) -> Region:
    return regions.create_region(code=code, name=f"Region {code}", jurisdiction=jurisdiction, actor="test")


def operator(tax_id: str) -> Operator:
    return regions.create_operator(name=f"Operator {tax_id}", tax_id=tax_id, actor="test")


def some_operator() -> Operator:
    found = Operator.objects.filter(tax_id="B00000000").first()
    return found or operator("B00000000")


def venue_in(where: Region | None, licence: str, company: Operator | None = None) -> Venue:
    venue = Venue.objects.create(
        name=f"Bingo {licence}",
        licence_number=licence,
        jurisdiction=where.jurisdiction if where else Jurisdiction.ML,
    )
    if where is not None or company is not None:
        venue = regions.assign_venue(venue=venue, region=where, operator=company, actor="test")
    return venue


def agree(
    a: Region,
    b: Region,
    *,
    company: Operator | None = None,
    protocol: bool = True,
    valid_from: date | None = None,
    valid_until: date | None = None,
) -> RegionAgreement:
    """A pair's agreement with the operators' agreement and (unless told) the protocol, signed yesterday."""
    signed = today() - timedelta(days=1)
    return regions.record_agreement(
        regions=(a, b),
        actor="test",
        valid_from=valid_from or signed,
        valid_until=valid_until,
        operator_agreement_ref=f"AC-{a.code}-{b.code}",
        operator_agreement_signed_on=signed,
        operators=[company or some_operator()],
        protocol_ref=f"PC-{a.code}-{b.code}" if protocol else "",
        protocol_signed_on=signed if protocol else None,
    )


def network(code: str = "RED", jurisdiction: str = Jurisdiction.ML) -> Network:
    return Network.objects.create(name=f"Red {code}", code=code, jurisdiction=jurisdiction)
