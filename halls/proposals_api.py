"""REST doors of four eyes (halls.services.proposals): list and propose changes, approve or reject them.

Thin doors: the proposal is found through the user's venues (another venue's is 404 unknown_proposal); the
second person's password travels in the approval's body and is checked by the service in that call.
"""

from __future__ import annotations

from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access
from halls.api import HallAPIView, actor, valid
from halls.errors import InvalidInput, NotFound
from halls.foureyes import kind_named
from halls.models import Proposal, Role, Venue
from halls.proposals_serializers import (
    ApprovalSerializer,
    ProposalCreateSerializer,
    ProposalQuerySerializer,
    ProposalSerializer,
    RejectionSerializer,
)
from halls.serializers import error_responses
from halls.services import proposals
from halls.throttling import AuthRateThrottle

TAGS = ["four eyes"]


def _proposal(request: Request, proposal_id: int) -> Proposal:
    venue_ids = access.venue_ids_for(request.user, door=True)
    found = Proposal.objects.filter(pk=proposal_id, venue_id__in=venue_ids).first()
    if found is None:
        raise NotFound(
            _("No proposal with pk=%(pk)s in your venues.") % {"pk": proposal_id}, code="unknown_proposal"
        )
    return found


class ProposalListView(HallAPIView):
    @extend_schema(
        operation_id="proposals_list",
        summary="Four-eyes proposals of your venues, newest first (filter by venue, status)",
        parameters=[ProposalQuerySerializer],
        responses={200: ProposalSerializer(many=True), **error_responses(400)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        query = valid(ProposalQuerySerializer, request.query_params)
        found = Proposal.objects.filter(venue_id__in=access.venue_ids_for(request.user, door=True))
        if query["venue"] is not None:
            found = found.filter(venue_id=query["venue"])
        if query["status"]:
            found = found.filter(status=query["status"])
        listed = found.select_related("proposed_by", "decided_by").order_by("-proposed_at", "-pk")[:200]
        return Response(ProposalSerializer(listed, many=True).data)

    @extend_schema(
        operation_id="proposals_create",
        summary="Propose a money-deciding change; a second person approves it before it applies",
        description=(
            "Needs one of the kind's roles in the venue (403 proposer_role_required). 400 unknown_kind, "
            "kind_not_for_api (a register file, an override: their own doors), bad_target, and whatever "
            "the kind's validator refuses (nothing is written). The change expires after "
            "HALL_FOUR_EYES_EXPIRY_MINUTES."
        ),
        request=ProposalCreateSerializer,
        responses={201: ProposalSerializer, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(ProposalCreateSerializer, request.data)
        venue = access.get_for_user(
            Venue.objects.all(), request.user, *Role.values, venue_path="pk", label="venue", pk=data["venue"]
        )
        kind = kind_named(data["kind"])
        if kind is not None and not kind.api:
            raise InvalidInput(
                _("This change is proposed only through its own door, not here."),
                code="kind_not_for_api",
                field="kind",
            )
        proposal = proposals.propose(
            venue=venue,
            kind=data["kind"],
            target=data["target"],
            params=data["params"],
            actor=actor(request),
            reason=data["reason"],
        )
        return Response(ProposalSerializer(proposal).data, status=status.HTTP_201_CREATED)


class ProposalDetailView(HallAPIView):
    @extend_schema(
        operation_id="proposals_retrieve",
        summary="A four-eyes proposal",
        responses={200: ProposalSerializer, **error_responses(404)},
        tags=TAGS,
    )
    def get(self, request: Request, proposal_id: int) -> Response:
        return Response(ProposalSerializer(_proposal(request, proposal_id)).data)


class ProposalApproveView(HallAPIView):
    throttle_classes = [AuthRateThrottle]  # each approval hashes a password

    @extend_schema(
        operation_id="proposals_approve",
        summary="Approve a proposal with your own password (a second person): the change applies now",
        description=(
            "The approver is the logged-in user, or `username` (a second person at the same terminal). "
            "Refused with nothing written: 403 same_person (the proposer), approver_role_required, "
            "wrong_password; 409 already_decided, proposal_expired, posted_digest_differs; 400 "
            "password_required, posted_digest_required; and whatever the change's own service refuses."
        ),
        request=ApprovalSerializer,
        responses={200: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, proposal_id: int) -> Response:
        proposal = _proposal(request, proposal_id)
        data = valid(ApprovalSerializer, request.data)
        done = proposals.approve(
            proposal=proposal,
            approver=proposals.decider(current=actor(request), username=data["username"]),
            password=data["password"],
            posted_digest=data["posted_digest"],
            client=request._request,
        )
        return Response(ProposalSerializer(done).data)


class ProposalRejectView(HallAPIView):
    throttle_classes = [AuthRateThrottle]

    @extend_schema(
        operation_id="proposals_reject",
        summary="Reject a proposal with your own password (a second person, or the proposer withdrawing it)",
        description="403 approver_role_required, wrong_password; 409 already_decided, proposal_expired.",
        request=RejectionSerializer,
        responses={200: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, proposal_id: int) -> Response:
        proposal = _proposal(request, proposal_id)
        data = valid(RejectionSerializer, request.data)
        done = proposals.reject(
            proposal=proposal,
            decider=proposals.decider(current=actor(request), username=data["username"]),
            password=data["password"],
            reason=data["reason"],
            client=request._request,
        )
        return Response(ProposalSerializer(done).data)


urlpatterns = [
    path("proposals/", ProposalListView.as_view(), name="api-proposals"),
    path("proposals/<int:proposal_id>/", ProposalDetailView.as_view(), name="api-proposal"),
    path("proposals/<int:proposal_id>/approve/", ProposalApproveView.as_view(), name="api-proposal-approve"),
    path("proposals/<int:proposal_id>/reject/", ProposalRejectView.as_view(), name="api-proposal-reject"),
]


def proposed(proposal: Proposal) -> Response:
    """The answer of a door whose change goes through four eyes: 202, the proposal waiting for its second
    person (POST /api/proposals/{id}/approve/ applies it)."""
    return Response({"proposal": ProposalSerializer(proposal).data}, status=status.HTTP_202_ACCEPTED)
