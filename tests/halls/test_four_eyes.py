"""Four eyes (halls.services.proposals): a change proposed by one person applies only when a second person
of the venue with the kind's role approves it with their own password, in the same transaction; every
refusal writes nothing; both names are in the audit. Through the service, the API, the page and the admin,
with a kind registered here (renaming a room)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.utils import timezone

from halls.errors import Conflict, InvalidInput, PermissionDenied
from halls.foureyes import Kind, _kinds, params_digest, register_kind
from halls.models import AuditEntry, Proposal, ProposalStatus, Role, Room, Venue
from halls.services import proposals
from tests.api_support import api_client, refused
from tests.conftest import make_user
from tests.threads import in_threads

pytestmark = pytest.mark.django_db


def _validate(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    room = Room.objects.filter(venue=venue, pk=int(target.removeprefix("room:"))).first()
    if room is None:
        raise InvalidInput("No such room.", code="unknown_room")
    name = str(params.get("name", "")).strip()
    if not name:
        raise InvalidInput("A room needs a name.", code="bad_name")
    return {"room": room.pk, "name": name}


def _apply(proposal: Proposal, approver: User) -> dict[str, Any]:
    room = Room.objects.get(pk=proposal.params["room"])
    if proposal.params["name"] == "refused by the service":
        raise Conflict("The room's own service refuses.", code="refused_by_service")
    room.name = proposal.params["name"]
    room.save(update_fields=["name"])
    return {"room": room.pk}


@pytest.fixture(autouse=True)
def kinds() -> Iterator[None]:
    saved = dict(_kinds)
    register_kind(Kind("test.room_name", "Rename a room", (Role.OPERATOR,), _validate, _apply))
    register_kind(
        Kind("test.room_sheet", "Rename a room (posted)", (Role.OPERATOR,), _validate, _apply, True)
    )
    yield
    _kinds.clear()
    _kinds.update(saved)


@pytest.fixture
def alice(venue: Venue) -> User:
    return make_user("alice", venue, Role.OPERATOR)


@pytest.fixture
def bob(venue: Venue) -> User:
    return make_user("bob", venue, Role.OPERATOR)


def _propose(
    venue: Venue, room: Room, who: User, name: str = "Sala Azul", kind: str = "test.room_name"
) -> Proposal:
    return proposals.propose(
        venue=venue, kind=kind, target=f"room:{room.pk}", params={"name": name}, actor=who
    )


def _writes() -> tuple[int, list[tuple[str, str]]]:
    rows = list(Proposal.objects.order_by("pk").values_list("status", "decided_at"))
    return AuditEntry.objects.count(), [(s, str(d)) for s, d in rows]


def test_a_second_person_approves_and_the_change_applies_with_both_names_audited(
    venue: Venue, room: Room, alice: User, bob: User
) -> None:
    proposal = _propose(venue, room, alice)
    assert proposal.status == ProposalStatus.PROPOSED
    assert proposal.digest == params_digest({"room": room.pk, "name": "Sala Azul"})
    room.refresh_from_db()
    assert room.name != "Sala Azul"  # nothing applies before the second person
    done = proposals.approve(proposal=proposal, approver=bob, password="pw-bob")
    room.refresh_from_db()
    assert room.name == "Sala Azul"
    assert (
        done.status == ProposalStatus.APPLIED and done.decided_by == bob and done.result == {"room": room.pk}
    )
    entries = AuditEntry.objects.filter(object_type="halls.proposal", object_id=str(proposal.pk)).order_by(
        "pk"
    )
    assert [(e.action, e.actor_label) for e in entries] == [
        ("foureyes.proposed", "alice"),
        ("foureyes.approved", "bob"),
    ]
    assert entries[1].data["proposed_by"] == "alice" and entries[1].data["digest"] == proposal.digest


@pytest.mark.parametrize(
    ("case", "error", "code"),
    [
        ("proposer", PermissionDenied, "same_person"),
        ("wrong_password", PermissionDenied, "wrong_password"),
        ("no_password", InvalidInput, "password_required"),
        ("wrong_role", PermissionDenied, "approver_role_required"),
        ("other_venue", PermissionDenied, "approver_role_required"),
        ("expired", Conflict, "proposal_expired"),
        ("decided", Conflict, "already_decided"),
        ("digest_differs", Conflict, "posted_digest_differs"),
        ("service_refuses", Conflict, "refused_by_service"),
    ],
)
def test_refusals_write_nothing(
    venue: Venue, room: Room, alice: User, bob: User, case: str, error: type[Exception], code: str
) -> None:
    proposal = _propose(
        venue, room, alice, name="refused by the service" if case == "service_refuses" else "X"
    )
    approver, password, posted = bob, "pw-bob", ""
    if case == "proposer":
        approver, password = alice, "pw-alice"
    elif case == "wrong_password":
        password = "pw-alice"
    elif case == "no_password":
        password = ""
    elif case == "wrong_role":
        approver, password = make_user("carla", venue, Role.CALLER), "pw-carla"
    elif case == "other_venue":
        elsewhere = Venue.objects.create(name="Otro", licence_number="ML-9", jurisdiction=venue.jurisdiction)
        approver, password = make_user("dario", elsewhere, Role.OPERATOR), "pw-dario"
    elif case == "expired":
        Proposal.objects.filter(pk=proposal.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    elif case == "decided":
        proposals.reject(proposal=proposal, decider=bob, password="pw-bob", reason="no")
    elif case == "digest_differs":
        posted = "0" * 64
    before = _writes()
    with pytest.raises(error) as raised:
        proposals.approve(proposal=proposal, approver=approver, password=password, posted_digest=posted)
    assert raised.value.code == code  # type: ignore[attr-defined]
    assert raised.value.message  # type: ignore[attr-defined]
    assert _writes() == before
    room.refresh_from_db()
    assert room.name != "X"


def test_a_posted_kind_needs_the_sheets_digest(venue: Venue, room: Room, alice: User, bob: User) -> None:
    proposal = _propose(venue, room, alice, kind="test.room_sheet")
    with pytest.raises(InvalidInput) as raised:
        proposals.approve(proposal=proposal, approver=bob, password="pw-bob")
    assert raised.value.code == "posted_digest_required"
    done = proposals.approve(
        proposal=proposal, approver=bob, password="pw-bob", posted_digest=proposal.digest
    )
    assert done.status == ProposalStatus.APPLIED and done.posted_digest == proposal.digest


def test_propose_refusals(venue: Venue, room: Room, alice: User) -> None:
    caller = make_user("carla", venue, Role.CALLER)
    with pytest.raises(PermissionDenied) as raised:
        _propose(venue, room, caller)
    assert raised.value.code == "proposer_role_required"
    with pytest.raises(InvalidInput) as bad:
        _propose(venue, room, alice, name=" ")
    assert bad.value.code == "bad_name"
    with pytest.raises(InvalidInput) as unknown:
        proposals.propose(venue=venue, kind="nope", target="x", params={}, actor=alice)
    assert unknown.value.code == "unknown_kind"
    assert not Proposal.objects.exists() and not AuditEntry.objects.exists()


def test_the_proposer_withdraws_and_the_sweep_expires(
    venue: Venue, room: Room, alice: User, bob: User
) -> None:
    withdrawn = proposals.reject(proposal=_propose(venue, room, alice), decider=alice, password="pw-alice")
    assert withdrawn.status == ProposalStatus.REJECTED and withdrawn.decided_by == alice
    late = _propose(venue, room, alice, name="Tarde")
    assert proposals.expire_proposals(now=late.expires_at - timedelta(seconds=1)) == 0
    assert proposals.expire_proposals(now=late.expires_at) == 1
    late.refresh_from_db()
    assert late.status == ProposalStatus.EXPIRED
    assert AuditEntry.objects.filter(action="foureyes.expired", object_id=str(late.pk)).count() == 1


def test_the_api_proposes_lists_approves_and_rejects(
    venue: Venue, room: Room, alice: User, bob: User
) -> None:
    a, b = api_client(alice), api_client(bob)
    body = {
        "venue": venue.pk,
        "kind": "test.room_name",
        "target": f"room:{room.pk}",
        "params": {"name": "Sala 2"},
    }
    created = a.post("/api/proposals/", body, format="json")
    assert created.status_code == 201, created.content
    pk = created.json()["id"]
    assert [p["id"] for p in b.get("/api/proposals/?status=proposed").json()] == [pk]
    refused(a.post(f"/api/proposals/{pk}/approve/", {"password": "pw-alice"}), 403, "same_person")
    refused(b.post(f"/api/proposals/{pk}/approve/", {"password": "wrong"}), 403, "wrong_password")
    refused(
        b.post(f"/api/proposals/{pk}/approve/", {"password": "pw-bob", "posted_digest": "ab" * 32}),
        409,
        "posted_digest_differs",
    )
    # a second person at the proposer's terminal types their own username and password
    approved = a.post(f"/api/proposals/{pk}/approve/", {"username": "bob", "password": "pw-bob"})
    assert approved.status_code == 200, approved.content
    assert approved.json()["status"] == "applied" and approved.json()["decided_by"] == "bob"
    room.refresh_from_db()
    assert room.name == "Sala 2"
    refused(b.post(f"/api/proposals/{pk}/reject/", {"password": "pw-bob"}), 409, "already_decided")
    other = a.post("/api/proposals/", {**body, "params": {"name": "Sala 3"}}, format="json").json()["id"]
    rejected = b.post(f"/api/proposals/{other}/reject/", {"password": "pw-bob", "reason": "no"})
    assert rejected.json()["status"] == "rejected"
    stranger = make_user(
        "eve", Venue.objects.create(name="V2", licence_number="L2", jurisdiction="ML"), Role.OPERATOR
    )
    refused(api_client(stranger).get(f"/api/proposals/{pk}/"), 404, "unknown_proposal")


def test_the_admin_asks_for_the_second_persons_password(
    venue: Venue, room: Room, alice: User, bob: User
) -> None:
    bob.is_staff = True
    bob.save()
    bob.user_permissions.add(Permission.objects.get(codename="view_proposal"))
    proposal = _propose(venue, room, alice, name="Sala Admin")
    client = Client()
    client.force_login(bob)
    url = "/admin/halls/proposal/"
    asked = client.post(url, {"action": "approve_proposal", "_selected_action": [proposal.pk]})
    assert asked.status_code == 200 and b'name="password"' in asked.content
    wrong = client.post(
        url, {"action": "approve_proposal", "_selected_action": [proposal.pk], "decide": "1", "password": "x"}
    )
    assert wrong.status_code == 200 and "The password is wrong." in wrong.content.decode()
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PROPOSED
    done = client.post(
        url,
        {
            "action": "approve_proposal",
            "_selected_action": [proposal.pk],
            "decide": "1",
            "password": "pw-bob",
        },
    )
    assert done.status_code == 302
    proposal.refresh_from_db()
    room.refresh_from_db()
    assert proposal.status == ProposalStatus.APPLIED and room.name == "Sala Admin"


def test_the_page_lists_and_decides(venue: Venue, room: Room, alice: User, bob: User) -> None:
    proposal = _propose(venue, room, alice, name="Sala Página")
    client = Client()
    client.force_login(bob)
    page = client.get("/proposals/")
    assert page.status_code == 200 and f'data-proposal="{proposal.pk}"' in page.content.decode()
    wrong = client.post(
        "/proposals/", {"proposal": proposal.pk, "decision": "approve", "password": "x"}, follow=True
    )
    assert "The password is wrong." in wrong.content.decode()
    client.post("/proposals/", {"proposal": proposal.pk, "decision": "approve", "password": "pw-bob"})
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.APPLIED


@pytest.mark.django_db(transaction=True)
def test_two_approvers_at_once_apply_the_change_once(
    venue: Venue, room: Room, alice: User, bob: User
) -> None:
    carla = make_user("carla", venue, Role.OPERATOR)
    proposal = _propose(venue, room, alice, name="Sala Única")

    def approver(who: User) -> Callable[[], Any]:
        return lambda: proposals.approve(proposal=proposal, approver=who, password=f"pw-{who.username}")

    errors = in_threads([approver(bob), approver(carla)])
    assert [getattr(e, "code", e) for e in errors] == ["already_decided"]
    assert AuditEntry.objects.filter(action="foureyes.approved", object_id=str(proposal.pk)).count() == 1
    room.refresh_from_db()
    assert room.name == "Sala Única"


def test_the_admin_shows_no_digest_of_a_posted_kind(venue: Venue, room: Room, alice: User, bob: User) -> None:
    bob.is_staff = True
    bob.save()
    bob.user_permissions.add(Permission.objects.get(codename="view_proposal"))
    client = Client()
    client.force_login(bob)
    for kind, shown in (("test.room_name", True), ("test.room_sheet", False)):
        proposal = _propose(venue, room, alice, kind=kind)
        asked = client.post(
            "/admin/halls/proposal/", {"action": "approve_proposal", "_selected_action": [proposal.pk]}
        )
        assert (proposal.digest in asked.content.decode()) is shown  # the sheet on the wall says it
