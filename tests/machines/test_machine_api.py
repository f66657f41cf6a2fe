"""The machine endpoints: the registry (the device token shown once), states, link groups (a machine of
the wrong denomination or type is refused with link_mismatch and nothing written), the reconciliation
report, hand pays at the cashier; roles per venue (operator for the registry and links, cashier for hand
pays), another venue's objects answering 404; and the schema that documents them."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from halls.models import AuditEntry, Role, Venue
from jackpots.models import Pool, PoolMember
from machines.models import LinkGroup, LinkMember, LockReason, Machine, MachineState, ProgressiveHit
from machines.services import gateway, links, registry
from tests.api_support import api_client as client_for
from tests.api_support import refused
from tests.conftest import make_user
from tests.four_eyes_support import applied, approve
from tests.machines.machine_fixtures import (
    an10_venue,
    cashier_user,
    hit,
    link,
    make_machine_pool,
    meters_msg,
    nothing_written,
    play,
    pool_operator,
    register,
    slot_pool,
)

__all__ = ["an10_venue", "cashier_user", "link", "pool_operator", "slot_pool"]

pytestmark = pytest.mark.django_db

D = Decimal

MACHINE = {
    "asset_number": "C-0042",
    "machine_type": "C",
    "modality": "individual",
    "manufacturer": "Novomatic",
    "model": "Gaminator",
    "serial": "SN-42",
    "denomination": "0.20",
    "paytable_id": "PT-92",
    "software_version": "4.1.0",
    "location": "Sala A, fila 2",
}


@pytest.fixture
def op(pool_operator: User) -> APIClient:
    return client_for(pool_operator)


@pytest.fixture
def cashier(cashier_user: User) -> APIClient:
    return client_for(cashier_user)


@pytest.fixture
def caller(an10_venue: Venue) -> APIClient:
    return client_for(make_user("slot-caller", an10_venue, Role.CALLER))


@pytest.fixture
def stranger(other_venue: Venue) -> APIClient:
    """The operator of another venue."""
    return client_for(make_user("other-operator", other_venue, Role.OPERATOR))


def test_an_operator_registers_a_machine_and_gets_its_token_once(
    op: APIClient, caller: APIClient, an10_venue: Venue
) -> None:
    answer = op.post("/api/machines/", {**MACHINE, "venue": an10_venue.pk}, format="json")
    assert answer.status_code == 201, answer.content
    body = answer.json()
    token = body.pop("token")
    machine = Machine.objects.get(pk=body["id"])
    assert registry.authenticate(venue_id=an10_venue.pk, asset_number="C-0042", token=token) == machine
    assert (body["asset_number"], body["machine_type"], body["denomination"]) == ("C-0042", "C", "0.20")
    assert (body["state"], body["lock_reason"], body["online"], body["link_group"]) == (
        "in_service",
        "",
        False,
        None,
    )
    assert AuditEntry.objects.filter(action="machine.registered").count() == 1

    # The token is never shown again.
    listed = caller.get("/api/machines/").json()
    assert [m["asset_number"] for m in listed] == ["C-0042"]
    assert "token" not in listed[0] and "token_hash" not in listed[0]
    assert "token" not in op.get(f"/api/machines/{machine.pk}/").json()

    refused(op.post("/api/machines/", {**MACHINE, "venue": an10_venue.pk}, format="json"), 409, "asset_taken")
    with nothing_written():
        refused(
            caller.post("/api/machines/", {**MACHINE, "asset_number": "C-1", "venue": an10_venue.pk}),
            403,
            "role_required",
        )
        refused(
            op.post("/api/machines/", {**MACHINE, "asset_number": "bad asset!", "venue": an10_venue.pk}),
            400,
            "bad_asset_number",
        )
        refused(
            op.post(
                "/api/machines/",
                {**MACHINE, "asset_number": "C-2", "denomination": "-1", "venue": an10_venue.pk},
            ),
            400,
            "invalid",
        )
        refused(
            op.post(
                "/api/machines/", {**MACHINE, "asset_number": "C-3", "positions": 3, "venue": an10_venue.pk}
            ),
            400,
            "bad_positions",
        )


def test_another_venues_machines_are_not_found(
    op: APIClient, stranger: APIClient, an10_venue: Venue, pool_operator: User, other_venue: Venue
) -> None:
    machine, _ = register(an10_venue, pool_operator)
    assert stranger.get("/api/machines/").json() == []
    refused(stranger.get(f"/api/machines/{machine.pk}/"), 404, "unknown_machine")
    refused(stranger.post(f"/api/machines/{machine.pk}/state/", {"state": "locked"}), 404, "unknown_machine")
    refused(stranger.get(f"/api/machines/{machine.pk}/reconciliation/"), 404, "unknown_machine")
    refused(stranger.post(f"/api/machines/{machine.pk}/token/"), 404, "unknown_machine")
    refused(stranger.post("/api/machines/", {**MACHINE, "venue": an10_venue.pk}), 404, "unknown_venue")
    refused(stranger.get(f"/api/machines/?venue={an10_venue.pk}"), 404, "unknown_venue")
    refused(op.get(f"/api/machines/?venue={other_venue.pk}"), 404, "unknown_venue")
    assert client_for(None).get("/api/machines/").status_code == 401


def test_states_are_changed_by_the_operator(
    op: APIClient, caller: APIClient, an10_venue: Venue, pool_operator: User
) -> None:
    machine, _ = register(an10_venue, pool_operator)
    with nothing_written():
        refused(caller.post(f"/api/machines/{machine.pk}/state/", {"state": "locked"}), 403, "role_required")
        refused(op.post(f"/api/machines/{machine.pk}/state/", {"state": "broken"}), 400, "invalid")
    locked = op.post(f"/api/machines/{machine.pk}/state/", {"state": "locked", "reason": "door check"})
    assert locked.status_code == 200, locked.content
    assert (locked.json()["state"], locked.json()["lock_reason"]) == ("locked", "operator")
    out = op.post(f"/api/machines/{machine.pk}/state/", {"state": "out_of_service"}).json()
    assert (out["state"], out["lock_reason"]) == ("out_of_service", "")
    back = op.post(f"/api/machines/{machine.pk}/state/", {"state": "in_service"}).json()
    assert back["state"] == "in_service"

    old = registry.authenticate(venue_id=None, asset_number=machine.asset_number, token="x")
    assert old is None
    rotated = op.post(f"/api/machines/{machine.pk}/token/")
    assert rotated.status_code == 200
    assert registry.authenticate(
        venue_id=None, asset_number=machine.asset_number, token=rotated.json()["token"]
    )
    refused(caller.post(f"/api/machines/{machine.pk}/token/"), 403, "role_required")


def test_link_groups_refuse_a_machine_of_another_denomination_or_type(
    op: APIClient, caller: APIClient, an10_venue: Venue, pool_operator: User, slot_pool: Pool
) -> None:
    created = op.post(
        "/api/link-groups/",
        {"venue": an10_venue.pk, "code": "ISLA-1", "name": "Isla 1", "pool": slot_pool.pk},
        format="json",
    )
    assert created.status_code == 201, created.content
    group = created.json()
    assert (group["pool"], group["pool_code"], group["machines"]) == (slot_pool.pk, slot_pool.code, [])
    assert group["same_type_and_denomination"] is True  # the jurisdiction's rule
    members = f"/api/link-groups/{group['id']}/members/"

    first, _ = register(an10_venue, pool_operator, denomination="0.20")
    joined = applied(op.post(members, {"machine": first.pk}))
    linked = LinkMember.objects.get(pk=joined["result"]["link_member"])
    assert (linked.machine_id, linked.left_at) == (first.pk, None)
    assert PoolMember.objects.filter(pool=slot_pool, source_type="machine", source_id=str(first.pk)).exists()

    dime, _ = register(an10_venue, pool_operator, denomination="0.10")
    type_b, _ = register(an10_venue, pool_operator, machine_type="B", denomination="0.20")
    waiting = [op.post(members, {"machine": m.pk}) for m in (dime, type_b, first)]
    with nothing_written():
        for wrong in waiting[:2]:
            refused(approve(wrong), 400, "link_mismatch")  # refused when the second person approves
        refused(approve(waiting[2]), 409, "already_linked")
        refused(caller.post(members, {"machine": dime.pk}), 403, "role_required")
        refused(op.post(members, {"machine": 999999}), 404, "unknown_machine")
    assert not LinkMember.objects.filter(machine__in=[dime, type_b]).exists()

    shown = caller.get(f"/api/link-groups/{group['id']}/").json()
    assert [m["asset_number"] for m in shown["machines"]] == [first.asset_number]
    assert caller.get(f"/api/machines/{first.pk}/").json()["link_group_code"] == "ISLA-1"

    applied(op.delete(f"/api/link-groups/{group['id']}/members/{first.pk}/"))
    linked.refresh_from_db()
    assert linked.left_at is not None
    assert op.get("/api/link-groups/").json()[0]["machines"] == []
    refused(op.delete(f"/api/link-groups/{group['id']}/members/{first.pk}/"), 404, "not_linked")

    # A group with the rule off takes both (the choice is audited with the group).
    mixed = op.post(
        "/api/link-groups/",
        {
            "venue": an10_venue.pk,
            "code": "MIX",
            "name": "Mixta",
            "pool": make_machine_pool(an10_venue, pool_operator, code="MIX-POOL").pk,
            "same_type_and_denomination": False,
        },
        format="json",
    ).json()
    for machine in (dime, type_b):
        applied(op.post(f"/api/link-groups/{mixed['id']}/members/", {"machine": machine.pk}))


def test_link_groups_only_take_pools_and_venues_of_the_user(
    op: APIClient,
    stranger: APIClient,
    an10_venue: Venue,
    other_venue: Venue,
    slot_pool: Pool,
    link: LinkGroup,
) -> None:
    with nothing_written():
        refused(
            stranger.post(
                "/api/link-groups/",
                {"venue": other_venue.pk, "code": "X", "name": "X", "pool": slot_pool.pk},
                format="json",
            ),
            404,
            "unknown_pool",
        )
        refused(
            op.post(
                "/api/link-groups/",
                {"venue": other_venue.pk, "code": "X", "name": "X", "pool": slot_pool.pk},
                format="json",
            ),
            404,
            "unknown_venue",
        )
        refused(
            op.post(
                "/api/link-groups/",
                {"venue": an10_venue.pk, "code": "L1", "name": "Again", "pool": slot_pool.pk},
                format="json",
            ),
            409,
            "link_group_code_taken",
        )
    refused(stranger.get(f"/api/link-groups/{link.pk}/"), 404, "unknown_link_group")
    assert stranger.get("/api/link-groups/").json() == []


def test_a_hand_pay_is_cleared_by_the_cashier(
    op: APIClient,
    cashier: APIClient,
    caller: APIClient,
    stranger: APIClient,
    an10_venue: Venue,
    pool_operator: User,
    cashier_user: User,
    link: LinkGroup,
) -> None:
    machine, _ = register(an10_venue, pool_operator)
    links.join_link(group=link, machine=machine, actor=pool_operator)
    gateway.receive(machine_id=machine.pk, messages=[play(1, bet="10.00"), hit(2, level="Major")])
    row = ProgressiveHit.objects.get(machine=machine)
    machine.refresh_from_db()
    assert (machine.state, machine.lock_reason) == (MachineState.LOCKED, LockReason.HAND_PAY)

    pending = cashier.get("/api/machine-hits/")
    assert pending.status_code == 200
    [shown] = pending.json()
    assert (shown["id"], shown["asset_number"], shown["level_name"], shown["amount"]) == (
        row.pk,
        machine.asset_number,
        "Major",
        "100.05",
    )
    assert (shown["paid_at"], shown["group"]) == (None, "L1")
    assert cashier.get(f"/api/machine-hits/?venue={an10_venue.pk}").json() == [shown]
    refused(caller.get("/api/machine-hits/?venue=" + str(an10_venue.pk)), 403, "role_required")
    assert caller.get("/api/machine-hits/").json() == []  # no venue where the caller is cashier

    pay = f"/api/machine-hits/{row.pk}/pay/"
    with nothing_written():
        refused(caller.post(pay, {"payment_ref": "V-1"}), 403, "role_required")
        refused(stranger.post(pay, {"payment_ref": "V-1"}), 404, "unknown_hit")
        refused(cashier.post(pay, {"payment_ref": "x" * 121}), 400, "invalid")
    paid = cashier.post(pay, {"payment_ref": "V-77"})
    assert paid.status_code == 200, paid.content
    body = paid.json()
    assert (body["paid_by"], body["payment_ref"]) == (cashier_user.username, "V-77")
    assert body["paid_at"] is not None
    machine.refresh_from_db()
    assert (machine.state, machine.lock_reason) == (MachineState.IN_SERVICE, "")
    assert cashier.get("/api/machine-hits/").json() == []
    with nothing_written():
        refused(cashier.post(pay, {"payment_ref": "V-78"}), 409, "already_paid")
    # An operator holds every role, the cashier's included.
    assert op.get("/api/machine-hits/").status_code == 200


def test_the_reconciliation_report_is_the_operators(
    op: APIClient, cashier: APIClient, an10_venue: Venue, pool_operator: User, link: LinkGroup
) -> None:
    machine, _ = register(an10_venue, pool_operator)
    links.join_link(group=link, machine=machine, actor=pool_operator)
    gateway.receive(
        machine_id=machine.pk,
        messages=[
            meters_msg(1, "0.00", 0),
            play(2, bet="1.00"),
            play(5, bet="2.00"),
            meters_msg(6, "5.50", 4),
        ],
    )
    answer = op.get(f"/api/machines/{machine.pk}/reconciliation/")
    assert answer.status_code == 200, answer.content
    rows = answer.json()
    assert [r["status"] for r in rows] == ["first", "gap_reconciled", "open"]
    interval = rows[1]
    assert (interval["from_seq"], interval["to_seq"]) == (1, 6)
    assert (interval["coin_in_delta"], interval["bets_recorded"], interval["coin_in_difference"]) == (
        "5.50",
        "3.00",
        "2.50",
    )
    assert (interval["games_delta"], interval["plays_recorded"], interval["games_difference"]) == (4, 2, 2)
    [gap] = interval["gaps"]
    assert (gap["first_missing"], gap["last_missing"], gap["missing_coin_in"]) == (3, 4, "2.50")
    refused(cashier.get(f"/api/machines/{machine.pk}/reconciliation/"), 403, "role_required")


def test_the_schema_documents_the_machine_doors(caller: APIClient) -> None:
    schema = caller.get("/api/schema/", {"format": "json"}).json()
    paths = schema["paths"]
    for path in (
        "/api/machines/",
        "/api/machines/{machine_id}/",
        "/api/machines/{machine_id}/state/",
        "/api/machines/{machine_id}/token/",
        "/api/machines/{machine_id}/reconciliation/",
        "/api/link-groups/",
        "/api/link-groups/{group_id}/",
        "/api/link-groups/{group_id}/members/",
        "/api/link-groups/{group_id}/members/{machine_id}/",
        "/api/machine-hits/",
        "/api/machine-hits/{hit_id}/pay/",
        "/api/gateway/messages/",
    ):
        assert path in paths, path
    batch = paths["/api/gateway/messages/"]["post"]
    assert set(batch["responses"]) == {"200", "400", "401", "413", "429"}
    assert batch["security"] == [{"deviceAuth": []}]
    assert batch["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/GatewayBatch")
    join = paths["/api/link-groups/{group_id}/members/"]["post"]
    assert "link_mismatch" in join["description"]
    assert join["responses"]["400"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
    components = schema["components"]["schemas"]
    assert components["Machine"]["properties"]["denomination"]["type"] == "string"  # money is a string
    assert "token" in components["MachineRegistered"]["properties"]
    assert "token" not in components["Machine"]["properties"]
    assert schema["components"]["securitySchemes"]["deviceAuth"]["name"] == "Authorization"
