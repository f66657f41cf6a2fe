"""Every change behind four eyes, door by door: the API only proposes (202, nothing of the change
written), and the change applies when a second operator approves it in the admin with their own password
(a wrong password, or the proposer, is refused there with nothing written). Kinds: a pool level's
parameters, a source joining and leaving a pool, a table joining and leaving a pool and forming a
carrusel, a machine joining and leaving a link, a register file loaded."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from halls.door.models import Register
from halls.models import AuditEntry, Proposal, Role, Venue
from jackpots.models import Pool, PoolLevel, PoolMember
from machines.models import LinkMember, Machine
from machines.services import links
from tests.api_support import api_client, refused
from tests.conftest import make_user
from tests.door.register_support import people, register_file
from tests.four_eyes_support import admin_approve
from tests.jackpots.tables.conftest import Casino, make_pool, make_table
from tests.machines.machine_fixtures import make_machine_pool, register

pytestmark = pytest.mark.django_db

PACK = "AN10_PSD_CARRUSEL"


def _second(venue: Venue) -> User:
    return User.objects.filter(username="segunda").first() or make_user("segunda", venue, Role.OPERATOR)


def _through_admin(
    house: Casino, proposed: Any, check_before: Callable[[], bool], check_after: Callable[[], bool]
) -> None:
    assert proposed.status_code == 202, proposed.content
    body = proposed.json()["proposal"]
    assert body["status"] == "proposed" and check_before()
    pk = body["id"]
    entries = AuditEntry.objects.count()
    # The proposer cannot approve, even in the admin; a wrong password neither: nothing written.
    assert "someone else must approve" in admin_approve(pk, house.operator).content.decode()
    second = _second(house.venue)
    assert "The password is wrong." in admin_approve(pk, second, "wrong").content.decode()
    assert AuditEntry.objects.count() == entries and check_before()
    assert admin_approve(pk, second).status_code == 302
    proposal = Proposal.objects.get(pk=pk)
    assert proposal.status == "applied" and proposal.decided_by == second and check_after()
    names = AuditEntry.objects.filter(object_type="halls.proposal", object_id=str(pk)).order_by("pk")
    assert [(e.action, e.actor_label) for e in names] == [
        ("foureyes.proposed", house.operator.username),
        ("foureyes.approved", "segunda"),
    ]


def test_a_pool_levels_parameters(db: None) -> None:
    house = Casino("AN10")
    pool = make_pool(house.venue, house.operator, PACK, rate=Decimal("0.5"))
    level = PoolLevel.objects.get(pool=pool)
    proposed = api_client(house.operator).post(
        f"/api/pools/{pool.pk}/levels/{level.pk}/parameters/",
        {"changes": {"contribution_rate": "0.4"}, "authorisation_ref": "AUT-9"},
        format="json",
    )

    def rate() -> Decimal:
        return PoolLevel.objects.get(pk=level.pk).contribution_rate

    _through_admin(house, proposed, lambda: rate() == Decimal("0.5"), lambda: rate() == Decimal("0.4"))


def test_a_source_joins_and_leaves_a_pool(db: None) -> None:
    house = Casino("AN10")
    pool = make_machine_pool(house.venue, house.operator, code="SRC-1")
    machine, _token = register(house.venue, house.operator)
    api = api_client(house.operator)
    added = api.post(
        f"/api/pools/{pool.pk}/members/",
        {"source_type": "machine", "source_id": str(machine.pk), "venue": house.venue.pk},
        format="json",
    )

    def member() -> PoolMember | None:
        return PoolMember.objects.filter(
            pool=pool, source_id=str(machine.pk), removed_at__isnull=True
        ).first()

    _through_admin(house, added, lambda: member() is None, lambda: member() is not None)
    joined = member()
    assert joined is not None
    removed = api.delete(f"/api/pools/{pool.pk}/members/{joined.pk}/")
    _through_admin(house, removed, lambda: member() is not None, lambda: member() is None)


@pytest.mark.parametrize("door", ["join", "carrusel", "leave"])
def test_a_table_joins_forms_a_carrusel_and_leaves(door: str) -> None:
    house = Casino("AN10")
    pool = make_pool(house.venue, house.operator, PACK)
    free = make_table(house.venue, house.operator, PACK)
    member = make_table(house.venue, house.operator, PACK, pool=pool)
    api = api_client(house.operator)
    if door == "join":
        answer = api.post(f"/api/tables/{free.pk}/pool/", {"pool": pool.pk}, format="json")
        table = free
    elif door == "carrusel":
        answer = api.post(f"/api/pools/{pool.pk}/tables/", {"tables": [free.pk]}, format="json")
        table = free
    else:
        answer = api.delete(f"/api/tables/{member.pk}/pool/")
        table = member

    def plays() -> bool:
        table.refresh_from_db()
        return table.pool_id == pool.pk

    before, after = (plays, lambda: not plays()) if door == "leave" else (lambda: not plays(), plays)
    _through_admin(house, answer, before, after)


@pytest.mark.parametrize("door", ["join", "leave"])
def test_a_machine_joins_and_leaves_a_link(door: str) -> None:
    house = Casino("AN10")
    pool: Pool = make_machine_pool(house.venue, house.operator, code="LINK-1")
    group = links.create_link_group(venue=house.venue, code="ISLA", name="Isla", pool=pool, actor="test")
    machine: Machine
    machine, _token = register(house.venue, house.operator)
    api = api_client(house.operator)
    if door == "join":
        answer = api.post(f"/api/link-groups/{group.pk}/members/", {"machine": machine.pk})
    else:
        links.join_link(group=group, machine=machine, actor="test")
        answer = api.delete(f"/api/link-groups/{group.pk}/members/{machine.pk}/")

    def linked() -> bool:
        return LinkMember.objects.filter(group=group, machine=machine, left_at__isnull=True).exists()

    before, after = (linked, lambda: not linked()) if door == "leave" else (lambda: not linked(), linked)
    _through_admin(house, answer, before, after)


def test_a_register_file_loads_when_a_second_operator_approves(tmp_path: Path) -> None:
    house = Casino("ML")
    path = tmp_path / "rgiaj-1.csv"
    path.write_bytes(register_file(people(90_000_000, 3)))
    call_command("load_register", str(path), "--create", "RGIAJ", "--by", house.operator.username)
    proposal = Proposal.objects.get(kind="door.register_load")

    def loaded() -> bool:
        return Register.objects.filter(code="RGIAJ").exists()

    answer = SimpleNamespace(
        status_code=202, json=lambda: {"proposal": {"id": proposal.pk, "status": "proposed"}}
    )
    _through_admin(house, answer, lambda: not loaded(), loaded)


def test_a_register_file_or_an_override_is_not_proposed_through_the_api(tmp_path: Path) -> None:
    house = Casino("ML")
    path = tmp_path / "rgiaj-1.csv"
    path.write_bytes(register_file(people(90_000_000, 3)))
    api = api_client(house.operator)
    for kind, params in (("door.register_load", {"path": str(path)}), ("door.override", {"visit": 1})):
        body = {"venue": house.venue.pk, "kind": kind, "target": "x", "params": params}
        refused(api.post("/api/proposals/", body, format="json"), 400, "kind_not_for_api")
    assert not Proposal.objects.exists()
