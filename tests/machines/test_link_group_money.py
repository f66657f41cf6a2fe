"""Money in the machines' API is a decimal string, never a JSON float (issue 10): a link group's machines
carry their denomination as "0.20", whether the group is read or created."""

# ruff: noqa: F811
from __future__ import annotations

from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from halls.models import Venue
from jackpots.models import Pool
from machines.models import LinkGroup, Machine
from tests.four_eyes_support import applied
from tests.jackpots.pool_fixtures import an10_venue, pool_operator  # noqa: F401 - fixtures
from tests.machines.machine_fixtures import link, machine, register, slot_pool  # noqa: F401 - fixtures


def operator_client(user: User) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_a_link_group_shows_its_machines_denomination_as_a_decimal_string(
    link: LinkGroup, machine: Machine, pool_operator: User
) -> None:
    answer = operator_client(pool_operator).get(f"/api/link-groups/{link.pk}/")
    assert answer.status_code == 200, answer.content
    assert b'"denomination":"0.20"' in answer.content.replace(b" ", b"")
    assert [m["denomination"] for m in answer.json()["machines"]] == ["0.20"]


def test_a_created_link_group_and_the_list_answer_decimal_strings(
    an10_venue: Venue, pool_operator: User, slot_pool: Pool
) -> None:
    client = operator_client(pool_operator)
    created = client.post(
        "/api/link-groups/",
        {"venue": an10_venue.pk, "code": "ISLA-9", "name": "Isla 9", "pool": slot_pool.pk},
        format="json",
    )
    assert created.status_code == 201, created.content
    first, _ = register(an10_venue, pool_operator, denomination="1.50")
    applied(client.post(f"/api/link-groups/{created.json()['id']}/members/", {"machine": first.pk}))
    shown = client.get(f"/api/link-groups/{created.json()['id']}/").json()
    assert shown["machines"][0]["denomination"] == "1.50"
    listed = client.get(f"/api/link-groups/?venue={an10_venue.pk}").json()
    assert [m["denomination"] for g in listed for m in g["machines"]] == ["1.50"]
