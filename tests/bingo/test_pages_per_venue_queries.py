"""The bingo pages and APIs that list every venue of the user (the inspector's index, the setup page and
its screens, the central's network pages, the home and the cashier's page) ask as many queries for a user
holding roles in 20 venues as in 2: their venues and roles come in one query (halls.access.venue_ids_with,
roles_in_each), not roles_in once per venue."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.utils import timezone

from bingo.venuewide.inspector import views as inspector_views
from halls import access
from halls.models import GameSession, Role, Room
from tests.access_support import FEW, MANY, asked, few_and_many, holding, make_venues, queries

pytestmark = pytest.mark.django_db


def inspected(count: int, prefix: str) -> int:
    """The queries of finding the venues an inspector of ``count`` venues reads (inside a read, as a GET)."""
    venues = make_venues(count, prefix)
    request: Any = SimpleNamespace(user=holding(f"inspector-{prefix}", venues, Role.INSPECTOR))
    with access.reading():
        found, asked = queries(lambda: inspector_views._inspected(request))
        assert access.inspector_reading()
    assert found == sorted(venues, key=lambda v: v.name)
    return asked


def test_the_inspectors_venues_cost_no_more_for_more_venues() -> None:
    """Which venues the index lists: as many queries for 20 as for 2, an inspector's read marked."""
    assert inspected(FEW, "IF") == inspected(MANY, "IM")


def test_the_inspectors_index_asks_no_more_for_more_venues() -> None:
    """The index itself: each venue's latest sessions and electronic games in one query each."""
    few, many = few_and_many("/inspector/", Role.INSPECTOR)
    assert few == many


def test_the_index_lists_each_venues_latest_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inspector_views, "SESSIONS_LISTED", 2)
    venues = make_venues(3, "L")
    inspector = holding("inspector-l", venues, Role.INSPECTOR)
    start = timezone.now() - timedelta(days=10)
    opened: dict[int, list[GameSession]] = {}
    for n, venue in enumerate(venues):
        room = Room.objects.create(venue=venue, name="Sala 1")
        for day in (3, 1, 2)[: n + 1]:  # one, two and three sessions, opened out of order
            opened.setdefault(venue.pk, []).append(
                GameSession.objects.create(
                    room=room,
                    opened_at=start + timedelta(days=day),
                    closed_at=start + timedelta(days=day, hours=1),
                    opened_by=inspector,
                    blower_ok=True,
                    reserve_ok=True,
                    reader_ok=True,
                    inspection_balls=[],
                )
            )
    page, _ = asked(inspector, "/inspector/")
    assert page.status_code == 200
    shown = {row["venue"].pk: [s.pk for s in row["sessions"]] for row in page.context["listed"]}
    latest = {
        v: [s.pk for s in sorted(found, key=lambda s: s.opened_at, reverse=True)[:2]]
        for v, found in opened.items()
    }
    assert shown == latest
    assert all(s.n_games == 0 for row in page.context["listed"] for s in row["sessions"])


def test_the_setup_page_asks_no_more_for_more_venues() -> None:
    few, many = few_and_many("/setup/", Role.OPERATOR)
    assert few == many


def test_the_screens_api_asks_no_more_for_more_venues() -> None:
    few, many = few_and_many("/api/screens/", Role.OPERATOR, api=True)
    assert few == many


@pytest.mark.parametrize(
    ("url", "role", "status"),
    [
        ("/central/pools/", Role.OPERATOR, 200),
        ("/central/games/", Role.OPERATOR, 200),
        ("/central/reports/", Role.OPERATOR, 200),
        ("/central/pools/", Role.CASHIER, 403),  # no venue operated: every venue's roles read
    ],
)
def test_the_central_pages_ask_no_more_for_more_venues(
    url: str, role: str, status: int, settings: pytest.FixtureRequest
) -> None:
    settings.HALL_ROLE = "central"  # type: ignore[attr-defined]
    few, many = few_and_many(url, role, status=status)
    assert few == many


@pytest.mark.parametrize(
    ("url", "roles"),
    [("/", (Role.OPERATOR,)), ("/", (Role.INSPECTOR, Role.CASHIER)), ("/cashier/", (Role.CASHIER,))],
)
def test_the_staff_pages_frame_asks_no_more_for_more_venues(url: str, roles: tuple[str, ...]) -> None:
    """Every staff page's frame: the user's venues with their roles there (halls.staff_pages)."""
    few, many = few_and_many(url, *roles)
    assert few == many


@pytest.mark.parametrize("url", ["/setup/", "/cashier/"])
def test_the_write_controls_of_every_venue_ask_no_more_for_more_venues(url: str) -> None:
    """An inspector reads the page: whether a write control is offered (may_write over every venue of
    the page, none for them) in as many queries for 20 venues as for 2."""
    few, many = few_and_many(url, Role.INSPECTOR)
    assert few == many
