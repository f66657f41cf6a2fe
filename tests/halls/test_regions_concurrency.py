"""A join and a revocation of the agreement it relies on, at once (PostgreSQL, own connections): the join
either commits before the revocation (which then names the network as affected) or is refused as revoked;
never a member admitted under an agreement already revoked."""

from __future__ import annotations

import pytest

from halls.errors import Conflict
from halls.models import AuditEntry, Jurisdiction
from halls.services import regions
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
