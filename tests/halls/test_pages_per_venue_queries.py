"""The halls' pages and APIs that read the user's roles in every venue (the venues API, the regions page,
the central's network map, the four-eyes page): as many queries for a user holding roles in 20 venues as in 2
(halls.access.roles_in_each, inspected_venue_ids), with the same roles shown."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from halls.models import Proposal, Role, StaffRole, Venue
from tests.access_support import FEW, MANY, asked, few_and_many, holding, make_venues
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "roles",
    [
        (Role.OPERATOR,),
        (Role.INSPECTOR,),
        (Role.INSPECTOR, Role.CASHIER),
        (Role.DOOR,),
        (Role.CALLER, Role.CASHIER),
    ],
)
def test_the_venues_api_asks_no_more_for_more_venues(roles: tuple[str, ...]) -> None:
    few, many = few_and_many("/api/venues/", *roles, api=True)
    assert few == many


def test_the_venues_api_shows_each_venues_roles() -> None:
    """An inspector (not operator) is shown as the inspector only; an operator with the inspector's role
    as both; elsewhere the roles held, sorted."""
    a, b, c, d = make_venues(4, "V")
    user = holding("mixed", [a], Role.INSPECTOR, Role.CASHIER)
    StaffRole.objects.bulk_create(
        [
            StaffRole(user=user, venue=b, role=Role.OPERATOR),
            StaffRole(user=user, venue=b, role=Role.INSPECTOR),
            StaffRole(user=user, venue=c, role=Role.DOOR),
            StaffRole(user=user, venue=d, role=Role.CASHIER),
            StaffRole(user=user, venue=d, role=Role.CALLER),
        ]
    )
    answer, _ = asked(user, "/api/venues/", api=True)
    shown = {v["id"]: v["roles"] for v in answer.json()}
    assert shown[a.pk] == [Role.INSPECTOR]
    assert set(shown[b.pk]) == {r.value for r in Role}
    assert shown[c.pk] == [Role.DOOR]
    assert shown[d.pk] == sorted([Role.CALLER.value, Role.CASHIER.value])


@pytest.mark.parametrize(("role", "status"), [(Role.OPERATOR, 200), (Role.CASHIER, 403)])
def test_the_regions_page_asks_no_more_for_more_venues(role: str, status: int) -> None:
    few, many = few_and_many("/regions/", role, status=status)
    assert few == many


@pytest.mark.parametrize(("roles", "status"), [((Role.OPERATOR,), 200), ((Role.CASHIER,), 403)])
def test_the_network_map_asks_no_more_for_more_venues(
    roles: tuple[str, ...], status: int, settings: pytest.FixtureRequest
) -> None:
    settings.HALL_ROLE = "central"  # type: ignore[attr-defined]
    few, many = few_and_many("/network/", *roles, status=status)
    assert few == many


def waiting_in(venues: list[Venue], proposer: User) -> list[Proposal]:
    """A pool's change waiting for its second person in each of ``venues``."""
    now = timezone.now()
    return [
        Proposal.objects.create(
            venue=v,
            kind="pool.parameters",
            target="pool-level:1",
            params={},
            digest="0" * 64,
            proposed_by=proposer,
            proposed_at=now,
            expires_at=now + timedelta(hours=1),
        )
        for v in venues
    ]


def proposals_page(count: int, prefix: str) -> int:
    venues = make_venues(count, prefix)
    waiting_in(venues, make_user(f"proposer-{prefix}"))
    page, n = asked(holding(f"decider-{prefix}", venues, Role.OPERATOR), "/proposals/")
    assert page.status_code == 200
    assert [p.may_decide for p in page.context["waiting"]] == [True] * count
    return n


def test_the_proposals_page_asks_no_more_for_more_venues() -> None:
    """Who may decide each waiting change: the user's write roles in every venue in two queries."""
    assert proposals_page(FEW, "PF") == proposals_page(MANY, "PM")


def test_who_may_decide_each_proposal() -> None:
    run, sell, inspect = make_venues(3, "D")
    user = holding("decider", [run], Role.OPERATOR)
    StaffRole.objects.bulk_create(
        [
            StaffRole(user=user, venue=sell, role=Role.CASHIER),
            StaffRole(user=user, venue=inspect, role=Role.INSPECTOR),
        ]
    )
    made = waiting_in([run, sell, inspect], make_user("proposer"))
    page, _ = asked(user, "/proposals/")
    decides = {p.pk: p.may_decide for p in page.context["waiting"]}
    assert decides == {made[0].pk: True, made[1].pk: False, made[2].pk: False}
