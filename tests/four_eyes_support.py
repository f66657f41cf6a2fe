"""Tests of doors behind four eyes (halls.foureyes): a door answers 202 with the proposal; a second person
of the venue approves it with their own password (and the posted digest where the kind posts a sheet)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from halls.models import Proposal, ProposalStatus, Role, Venue
from halls.services import proposals
from tests.conftest import make_user


def second_person(venue: Venue, role: str = Role.OPERATOR, username: str = "segunda") -> User:
    """A second member of the venue's staff (password ``pw-<username>``), made once."""
    found = User.objects.filter(username=username).first()
    return found or make_user(username, venue, role)


def approved(answer: Any, approver: User | None = None) -> Proposal:
    """Approve the proposal a door answered (202) as a second person; returns it, applied."""
    assert answer.status_code == 202, answer.content
    proposal = Proposal.objects.select_related("venue").get(pk=answer.json()["id"])
    approver = approver or second_person(proposal.venue)
    done = proposals.approve(
        proposal=proposal,
        approver=approver,
        password=f"pw-{approver.get_username()}",
        posted_digest=proposal.digest,
    )
    assert done.status == ProposalStatus.APPLIED
    return done
