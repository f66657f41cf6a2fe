"""The wide-area doors: a table's hit reported by staff, refusals as JSON naming the problem, counted once;
a mirror's state."""

from __future__ import annotations

import pytest

from jackpots.widearea.models import WideAreaClaim
from tests.api_support import api_client, refused
from tests.jackpots.widearea.support import Net, build, refused_count, silence, sync

pytestmark = pytest.mark.django_db


@pytest.fixture
def net() -> Net:
    return build()


def test_a_tables_hit_through_the_api_and_its_refusals(net: Net) -> None:
    sync(net)
    client = api_client(net.operator)
    mirror = net.mirrors["c"].pk
    url = f"/api/widearea/mirrors/{mirror}/hits/"
    hit = {"member": "table:1/hand:7", "level": "Grand", "key": "t1-h7"}
    answer = client.post(url, hit, format="json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["amount"] is None  # decided at the central
    refused(client.post(url, hit, format="json"), 409, "duplicate_hit", "t1-h7")
    refused(
        client.post(url, {**hit, "key": "x", "level": "Mini"}, format="json"), 400, "level_not_linked", "Mini"
    )
    refused(
        client.post(url, {**hit, "key": "y", "member": "table:9"}, format="json"),
        400,
        "not_a_member",
        "table:9",
    )
    silence(net.mirror("c"))
    before = refused_count("venue", "level_unavailable")
    refused(client.post(url, {**hit, "key": "z"}, format="json"), 409, "level_unavailable", "Grand")
    assert refused_count("venue", "level_unavailable") == before + 1
    assert WideAreaClaim.objects.count() == 1
    state = client.get(f"/api/widearea/mirrors/{mirror}/").json()
    assert state["offered"] == "unavailable" and state["holds"] is True
    assert api_client(None).post(url, hit, format="json").status_code == 401
