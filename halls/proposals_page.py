"""The staff page of four eyes (/proposals/): the changes of the user's venues waiting for a second person,
each with its approve form (the approver's own password, and the posted sheet's digest where the kind
posts one) and its reject form; below, the latest decided ones. A POST calls ONE service
(halls.services.proposals) and its refusal is shown above the list, nothing written."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache

from halls import access
from halls.errors import DomainError
from halls.foureyes import kind_named
from halls.models import Proposal, Role
from halls.services import proposals
from halls.staff_pages import staff_page, staff_venues

RECENT = 20  # how many decided proposals the page shows


def _label(proposal: Proposal) -> str:
    kind = kind_named(proposal.kind)
    return str(kind.label) if kind is not None else proposal.kind


def _decide(request: HttpRequest, venue_ids: list[int]) -> None:
    """Approve or reject the proposal the form names (one service call); a refusal becomes a message."""
    found = Proposal.objects.filter(pk=request.POST.get("proposal", "0") or 0, venue_id__in=venue_ids).first()
    if found is None:
        messages.error(request, gettext("No such proposal in your venues."))
        return
    user = cast(User, request.user)
    password = request.POST.get("password", "")
    try:
        who = proposals.decider(current=user, username=request.POST.get("username", ""))
        if request.POST.get("decision") == "approve":
            proposals.approve(
                proposal=found,
                approver=who,
                password=password,
                posted_digest=request.POST.get("posted_digest", ""),
                client=request,
            )
            messages.success(
                request, gettext("Proposal %(pk)s approved: the change is applied.") % {"pk": found.pk}
            )
        else:
            proposals.reject(
                proposal=found,
                decider=who,
                password=password,
                reason=request.POST.get("reason", ""),
                client=request,
            )
            messages.success(
                request, gettext("Proposal %(pk)s rejected: nothing changed.") % {"pk": found.pk}
            )
    except DomainError as exc:
        messages.error(request, exc.message)


@login_required
@never_cache
def proposals_page(request: HttpRequest) -> HttpResponse:
    venues = [v for v in staff_venues(request) if v.roles - {Role.DOOR} or v.is_operator]
    if not venues:
        raise PermissionDenied(gettext("The four-eyes page is for the venue's staff."))
    venue_ids = [v.venue.pk for v in venues]
    if request.method == "POST":
        _decide(request, venue_ids)
        return redirect(reverse("halls:proposals"))
    waiting = proposals.pending(venue_ids)
    decided = list(
        Proposal.objects.filter(venue_id__in=venue_ids)
        .exclude(status="proposed")
        .select_related("venue", "proposed_by", "decided_by")
        .order_by("-decided_at", "-pk")[:RECENT]
    )
    shown = [*waiting, *decided]
    # the user's write roles in the proposals' venues: two queries, however many venues (access.may_write's)
    held = access.write_roles_in_each(request.user, sorted({p.venue_id for p in shown}))
    for proposal in shown:
        proposal.kind_label = _label(proposal)  # type: ignore[attr-defined]
        kind = kind_named(proposal.kind)
        proposal.posts_sheet = bool(kind and kind.posted)  # type: ignore[attr-defined]
        proposal.sheet_url = kind.sheet(proposal) if kind and kind.sheet else ""  # type: ignore[attr-defined]
        proposal.may_decide = access.lets_write(  # type: ignore[attr-defined]
            held[proposal.venue_id], *(kind.roles if kind else (Role.OPERATOR,))
        )
    return staff_page(request, "halls/proposals.html", venues, waiting=waiting, decided=decided)
