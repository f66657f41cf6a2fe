"""The regions API: an operator records regions, operators and agreements, places venues and joins
networks; a join across regions without an agreement answers 409 with the code and the pair, nothing
written."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User

from halls.models import Jurisdiction, Network, Role, StaffRole, Venue
from tests.api_support import api_client, refused
from tests.conftest import make_user
from tests.halls.region_support import network, nothing_written, today

pytestmark = pytest.mark.django_db


@pytest.fixture
def halls() -> tuple[Venue, Venue]:
    melilla = Venue.objects.create(name="Bingo Melilla", licence_number="ML-1", jurisdiction=Jurisdiction.ML)
    malaga = Venue.objects.create(name="Bingo Málaga", licence_number="AN-1", jurisdiction=Jurisdiction.AN10)
    return melilla, malaga


@pytest.fixture
def boss(halls: tuple[Venue, Venue]) -> User:
    """The operator of both venues: may change what the installation shares."""
    user = make_user("boss", halls[0], Role.OPERATOR)
    StaffRole.objects.create(user=user, venue=halls[1], role=Role.OPERATOR)
    return user


def test_an_operator_spans_two_regions_only_with_the_agreement(
    halls: tuple[Venue, Venue], boss: User
) -> None:
    melilla, malaga = halls
    api = api_client(boss)
    assert (
        api.post("/api/regions/", {"code": "ml", "name": "Melilla", "jurisdiction": "ML"}).status_code == 201
    )
    assert (
        api.post("/api/regions/", {"code": "AN", "name": "Andalucía", "jurisdiction": "AN10"}).status_code
        == 201
    )
    company = api.post("/api/operators/", {"name": "Juegos del Sur SA", "tax_id": "A29000001"}).json()
    for venue, code in ((melilla, "ML"), (malaga, "AN")):
        placed = api.post(f"/api/venues/{venue.pk}/place/", {"region": code, "operator": "A29000001"})
        assert placed.status_code == 200, placed.content
        assert placed.json()["region"] == code
    red = network()
    assert api.post(f"/api/networks/{red.pk}/join/", {"venue": melilla.pk}).status_code == 200

    with nothing_written():
        error = refused(
            api.post(f"/api/networks/{red.pk}/join/", {"venue": malaga.pk}),
            409,
            "no_region_agreement",
            "AN",
            "ML",
        )
    assert error["details"] == {"regions": ["AN", "ML"], "missing": ["agreement"], "network": "RED"}

    signed = (today() - timedelta(days=2)).isoformat()
    body = {
        "regions": ["ML", "AN"],
        "operator_agreement_ref": "CONV-2026-01",
        "operator_agreement_signed_on": signed,
        "operators": [company["id"]],
        "valid_from": signed,
    }
    made = api.post("/api/region-agreements/", body, format="json")
    assert made.status_code == 201, made.content
    agreement = made.json()
    assert agreement["regions"] == ["ML", "AN"] or agreement["regions"] == ["AN", "ML"]
    assert agreement["missing"] == ["administration_protocol"] and not agreement["valid_today"]
    error = refused(
        api.post(f"/api/networks/{red.pk}/join/", {"venue": malaga.pk}), 409, "no_region_agreement"
    )
    assert error["details"]["missing"] == ["administration_protocol"]

    documents = {"protocol_ref": "PROT-ML-AN-7", "protocol_signed_on": signed}
    done = api.post(f"/api/region-agreements/{agreement['id']}/documents/", documents, format="json")
    assert done.status_code == 200 and done.json()["valid_today"], done.content
    joined = api.post(f"/api/networks/{red.pk}/join/", {"venue": malaga.pk})
    assert joined.status_code == 200
    assert {(v["licence_number"], v["region"]) for v in joined.json()["venues"]} == {
        ("ML-1", "ML"),
        ("AN-1", "AN"),
    }

    revoked = api.post(f"/api/region-agreements/{agreement['id']}/revoke/", {"note": "protocolo denunciado"})
    assert revoked.status_code == 200 and revoked.json()["ended_as"] == "revoked"
    assert api.post(f"/api/networks/{red.pk}/leave/", {"venue": malaga.pk}).status_code == 200
    error = refused(
        api.post(f"/api/networks/{red.pk}/join/", {"venue": malaga.pk}), 409, "no_region_agreement"
    )
    assert error["details"]["missing"] == ["revoked"]
    listed = api.get("/api/networks/").json()
    assert [[v["licence_number"] for v in n["venues"]] for n in listed] == [["ML-1"]]
    assert len(api.get("/api/region-agreements/").json()) == 1


def test_who_may_change_what(halls: tuple[Venue, Venue], boss: User) -> None:
    melilla, malaga = halls
    local = make_user("local", melilla, Role.OPERATOR)  # operator of one venue only
    caller = make_user("caller", melilla, Role.CALLER)
    api = api_client(local)
    refused(
        api.post("/api/regions/", {"code": "ML", "name": "Melilla", "jurisdiction": "ML"}),
        403,
        "role_required",
    )
    assert api.get("/api/regions/").status_code == 200
    api_client(boss).post("/api/regions/", {"code": "ML", "name": "Melilla", "jurisdiction": "ML"})
    assert api.post(f"/api/venues/{melilla.pk}/place/", {"region": "ML"}).status_code == 200
    refused(api.post(f"/api/venues/{malaga.pk}/place/", {"region": "ML"}), 404, "not_found")
    refused(
        api_client(caller).post(f"/api/venues/{melilla.pk}/place/", {"region": "ML"}), 403, "role_required"
    )
    red = Network.objects.create(name="Red", code="RED", jurisdiction=Jurisdiction.ML)
    refused(api.post(f"/api/networks/{red.pk}/join/", {"venue": malaga.pk}), 404, "unknown_venue")
    refused(api.post("/api/networks/999/join/", {"venue": melilla.pk}), 404, "unknown_network")
    refused(api.post(f"/api/venues/{melilla.pk}/place/", {"region": "ZZ"}), 404, "unknown_region")
    refused(api_client(None).get("/api/regions/"), 401, "not_authenticated")


def test_the_regions_page_is_for_operators(client: Any, halls: tuple[Venue, Venue], boss: User) -> None:
    caller = make_user("caller", halls[0], Role.CALLER)
    client.force_login(caller)
    assert client.get("/regions/").status_code == 403
    client.force_login(boss)
    page = client.get("/regions/", HTTP_ACCEPT_LANGUAGE="es")
    assert page.status_code == 200
    assert "Regiones y convenios" in page.content.decode()
