"""The central's network pages: 200 in Spanish for a central operator (figures from the read models), 403
for staff without the operator role, 404 at a venue installation; the CSV export; links from the home."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from halls.models import HallCategory, Jurisdiction, Role, Venue
from tests.bingo.network.interconnected.central_pages_support import Scene, build_scene
from tests.bingo.traditional.game_support import fresh_process, no_celery  # noqa: F401 (autouse fixtures)
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

PAGES = ("/central/pools/", "/central/games/", "/central/reports/", "/central/reports.csv")


@pytest.fixture
def central(settings: pytest.FixtureRequest) -> None:
    settings.HALL_ROLE = "central"  # type: ignore[attr-defined]
    settings.LANGUAGE_CODE = "es"  # type: ignore[attr-defined]


def _client(user_name: str, venue: Venue, role: str) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="es")
    client.force_login(make_user(user_name, venue, role))
    return client


def test_a_central_operator_reads_every_page_in_spanish(
    central: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene: Scene = build_scene(monkeypatch)
    client = _client("jefe-central", scene.halls[0].venue, Role.OPERATOR)

    pools = client.get("/central/pools/")
    assert pools.status_code == 200
    text = pools.content.decode()
    assert "Premios de la red" in text and "Bote actual" in text
    assert 'data-meter="IB1"' in text and 'data-amount="102.01"' in text
    assert 'data-decision="1"' in text and 'data-open-round="2"' in text
    assert client.get("/central/pools/meters/").json()["meters"] == {
        "IB1": {"amount": "102.01", "currency": "EUR"}
    }

    games = client.get("/central/games/")
    assert games.status_code == 200
    text = games.content.decode()
    assert "Partidas simultáneas" in text and 'data-game="SB-1"' in text and 'data-hall="ML-B-0003"' in text

    report = client.get("/central/reports/", {"by": "region"})
    assert report.status_code == 200
    text = report.content.decode()
    assert "Informe de la red" in text and 'data-row="ML"' in text and 'data-row="CE"' in text
    assert 'data-check="IB1" data-holds="yes"' in text

    exported = client.get("/central/reports.csv", {"by": "venue"})
    assert exported.status_code == 200 and exported["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(exported.content.decode())))
    assert rows[0][:2] == ["Sala", "Aportaciones IB1"]
    assert [r[0] for r in rows[1:]] == ["Bingo 1", "Bingo 2", "Bingo 3", "Total de la red"]
    assert rows[-1][1] == "20.000000"

    network_map = client.get("/network/").content.decode()  # the link's network map links here
    assert 'href="/central/pools/"' in network_map and 'href="/network/"' in text
    home = client.get("/").content.decode()
    for url in ("/central/pools/", "/central/games/", "/central/reports/"):
        assert f'href="{url}"' in home

    bad = client.get("/central/reports/", {"date_from": "2026-02-01", "date_to": "2026-01-01"})
    assert bad.status_code == 400


def _venue() -> Venue:
    return Venue.objects.create(
        name="Bingo Ceuta",
        licence_number="CE-B-0001",
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
    )


def test_staff_without_the_operator_role_are_refused(central: None) -> None:
    venue = _venue()
    for role in (Role.CASHIER, Role.CALLER):
        client = _client(f"staff-{role}", venue, role)
        for page in (*PAGES, "/central/pools/meters/"):
            assert client.get(page).status_code == 403, (role, page)
        assert "/central/pools/" not in client.get("/").content.decode()
    anonymous = Client().get("/central/pools/")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


def test_a_venue_installation_has_no_network_pages(settings: pytest.FixtureRequest) -> None:
    settings.HALL_ROLE = "venue"  # type: ignore[attr-defined]
    client = _client("operator-venue", _venue(), Role.OPERATOR)
    for page in PAGES:
        assert client.get(page).status_code == 404
    assert "/central/pools/" not in client.get("/").content.decode()
