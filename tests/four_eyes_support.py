"""Four eyes in the tests: a door that proposes answers 202 with its proposal; a second operator of the
proposal's venue approves it through the API with their own password (halls.services.proposals)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from halls.models import Proposal, Role, StaffRole, Venue
from halls.services import proposals
from tests.api_support import api_client

SECOND = "second-operator"


def second_operator(venue: Venue | int) -> User:
    """The venue's second operator (made once, password "pw-second-operator")."""
    venue_id = venue if isinstance(venue, int) else venue.pk
    user = User.objects.filter(username=SECOND).first()
    if user is None:
        user = User.objects.create_user(username=SECOND, password=f"pw-{SECOND}")
    StaffRole.objects.get_or_create(user=user, venue_id=venue_id, role=Role.OPERATOR)
    return user


def approve(proposed: Any, approver: User | None = None) -> Any:
    """The door's 202 answer approved by a second person: the approval's answer (200 applied, or the
    refusal of the change's own service)."""
    assert proposed.status_code == 202, proposed.content
    proposal = proposed.json()["proposal"]
    assert proposal["status"] == "proposed", proposal
    approver = approver or second_operator(proposal["venue"])
    return api_client(approver).post(
        f"/api/proposals/{proposal['id']}/approve/", {"password": f"pw-{approver.username}"}
    )


def applied(proposed: Any, approver: User | None = None) -> dict[str, Any]:
    """``approve``, which must apply: the proposal as the approval answers it."""
    done = approve(proposed, approver)
    assert done.status_code == 200, done.content
    body: dict[str, Any] = done.json()
    assert body["status"] == "applied", body
    return body


def approve_proposal(proposal: Proposal, approver: User | None = None) -> Proposal:
    """A proposal a page made, approved by the venue's second operator through the service."""
    approver = approver or second_operator(proposal.venue_id)
    return proposals.approve(proposal=proposal, approver=approver, password=f"pw-{approver.username}")


def admin_approve(proposal_id: int, approver: User, password: str | None = None) -> Any:
    """The second person approves in the admin (the proposals' action, asking for their password)."""
    from django.contrib.auth.models import Permission
    from django.test import Client

    approver.is_staff = True
    approver.save(update_fields=["is_staff"])
    approver.user_permissions.add(Permission.objects.get(codename="view_proposal"))
    client = Client()
    client.force_login(approver)
    body = {
        "action": "approve_proposal",
        "_selected_action": [proposal_id],
        "decide": "1",
        "password": password if password is not None else f"pw-{approver.username}",
    }
    return client.post("/admin/halls/proposal/", body)


def approved(answer: Any, approver: User | None = None) -> Proposal:
    """The proposal a door answered (202) approved through the service by the venue's second operator,
    with the digest of the posted sheet (the prize programs' kinds require it); returns it, applied."""
    assert answer.status_code == 202, answer.content
    proposal = Proposal.objects.select_related("venue").get(pk=answer.json()["proposal"]["id"])
    approver = approver or second_operator(proposal.venue_id)
    done = proposals.approve(
        proposal=proposal,
        approver=approver,
        password=f"pw-{approver.get_username()}",
        posted_digest=proposal.digest,
    )
    assert done.status == "applied"
    return done
