"""REST doors of machines: registry, link groups, the gateway's HTTP batch endpoint, hand-pay clearing.

Staff doors (DESIGN §3) validate with a serializer, find their objects through halls.access (an object of
another venue answers 404 unknown_<thing>), check the role (operator for the registry and links, cashier
for hand pays; an operator holds every role), call ONE service and render.

The gateway's batch endpoint is a door for interface boards that cannot hold a WebSocket: the board
authenticates with ``Authorization: Device <asset>:<token>`` (``?venue=<id>`` when its asset number is not
unique across venues), posts ``{"messages": [...]}`` and gets a reply per message, in order, plus its link
group's levels. A body over 256 KB or a batch over 200 messages answers 413 before anything is read into the
gateway; a body that is not a batch answers 400. A malformed message inside a good batch is refused alone
(its ack says why) and the others are taken, all in one gateway call.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.db.models import OuterRef, Prefetch, Q, QuerySet, Subquery
from django.urls import path
from django.utils.translation import gettext
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from halls import access, metrics, throttling
from halls.api import ANY_ROLE, HallAPIView, actor, valid
from halls.errors import DomainError, InvalidInput, NotFound
from halls.models import Role, Venue
from halls.proposals_api import proposed
from halls.proposals_serializers import ProposalSerializer
from halls.serializers import ErrorSerializer, error_responses
from halls.services import proposals
from jackpots.models import Pool
from machines import protocol
from machines.models import LinkGroup, LinkMember, Machine, ProgressiveHit
from machines.serializers import (
    DeviceTokenSerializer,
    GatewayBatchSerializer,
    GatewayRepliesSerializer,
    HandPayRequestSerializer,
    HitQuerySerializer,
    LinkGroupCreateSerializer,
    LinkGroupQuerySerializer,
    LinkGroupSerializer,
    LinkJoinSerializer,
    MachineCreateSerializer,
    MachineHitSerializer,
    MachineQuerySerializer,
    MachineRegisteredSerializer,
    MachineSerializer,
    MachineStateRequestSerializer,
    ReconciliationRowSerializer,
)
from machines.services import gateway, handpay, links, proposal_kinds, readmodels, registry
from machines.services.reconciliation import reconciliation

# An HTTP batch: at most 200 messages (protocol.MAX_BATCH) in at most 256 KB.
MAX_BATCH_BYTES = 256 * 1024

# --- lookups --------------------------------------------------------------------------------------------


def _machines() -> QuerySet[Machine]:
    """Machines with the link group they are in now."""
    link = LinkMember.objects.filter(machine=OuterRef("pk"), left_at__isnull=True)
    return Machine.objects.annotate(
        link_group=Subquery(link.values("group_id")[:1]),
        link_group_code=Subquery(link.values("group__code")[:1]),
    )


def _machine(request: Request, machine_id: int, *roles: str) -> Machine:
    return access.get_for_user(_machines(), request.user, *roles, label="machine", pk=machine_id)


def _venue(request: Request, venue_id: int, *roles: str) -> Venue:
    return access.get_for_user(
        Venue.objects.all(), request.user, *roles, venue_path="pk", label="venue", pk=venue_id
    )


def _venues_with(request: Request, venue_id: int | None, role: str) -> list[Venue]:
    """The venue asked for (with the role, else 404/403), or every venue where the user holds the role."""
    if venue_id is not None:
        return [_venue(request, venue_id, role)]
    ids = access.venue_ids_with(request.user, role)  # one query, however many venues they hold roles in
    return list(Venue.objects.filter(pk__in=ids).order_by("pk"))


def _group(request: Request, group_id: int, *roles: str) -> LinkGroup:
    return access.get_for_user(
        LinkGroup.objects.select_related("pool"), request.user, *roles, label="link group", pk=group_id
    )


def _pool_for(request: Request, pool_id: int) -> Pool:
    """A pool the user may see: its venue's, or its network's (another one answers 404 unknown_pool)."""
    venue_ids = access.venue_ids_for(request.user)
    pool = (
        Pool.objects.filter(Q(venue_id__in=venue_ids) | Q(network__venues__in=venue_ids))
        .filter(pk=pool_id)
        .select_related("network")
        .first()
    )
    if pool is None:
        raise NotFound(
            gettext("No pool with pk=%(pool_id)s in your venues.") % {"pool_id": pool_id}, code="unknown_pool"
        )
    return pool


# --- renderings -----------------------------------------------------------------------------------------


def _groups() -> QuerySet[LinkGroup]:
    active = LinkMember.objects.filter(left_at__isnull=True).select_related("machine").order_by("machine_id")
    return LinkGroup.objects.select_related("pool").prefetch_related(
        Prefetch("members", queryset=active, to_attr="active_members")
    )


def _group_data(group: LinkGroup) -> dict[str, Any]:
    members: list[LinkMember] = getattr(group, "active_members", None) or list(
        group.members.filter(left_at__isnull=True).select_related("machine").order_by("machine_id")
    )
    return {
        "id": group.pk,
        "venue": group.venue_id,
        "code": group.code,
        "name": group.name,
        "pool": group.pool_id,
        "pool_code": group.pool.code,
        "same_type_and_denomination": group.same_type_and_denomination,
        "created_at": group.created_at,
        "machines": [
            {
                "member": m.pk,
                "machine": m.machine_id,
                "asset_number": m.machine.asset_number,
                "machine_type": m.machine.machine_type,
                "denomination": m.machine.denomination,
                "joined_at": m.joined_at,
            }
            for m in members
        ],
    }


# --- the registry ---------------------------------------------------------------------------------------

TAGS = ["machines"]


class MachineListView(HallAPIView):
    @extend_schema(
        operation_id="machines_list",
        summary="Machines of your venues, by venue and asset number",
        parameters=[MachineQuerySerializer],
        responses={200: MachineSerializer(many=True), **error_responses(400, 404)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        query = valid(MachineQuerySerializer, request.query_params)
        found = _machines().order_by("venue_id", "asset_number")
        if query["venue"] is not None:
            found = found.filter(venue=_venue(request, query["venue"], *ANY_ROLE))
        else:
            found = found.filter(venue_id__in=access.venue_ids_for(request.user))
        return Response(MachineSerializer(found, many=True).data)

    @extend_schema(
        operation_id="machines_register",
        summary="Register a type B or C machine (operator); the answer carries its device token, once",
        description=(
            "400 bad_asset_number, bad_denomination, bad_positions (individual 1, two-player 2, "
            "multi-position ≥ 2); 409 asset_taken when the venue has the asset number already. The machine "
            "starts in service and offline until its board connects."
        ),
        request=MachineCreateSerializer,
        responses={201: MachineRegisteredSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(MachineCreateSerializer, request.data)
        venue = _venue(request, data.pop("venue"), Role.OPERATOR)
        machine, token = registry.register_machine(venue=venue, actor=actor(request), **data)
        body = {**MachineSerializer(_machines().get(pk=machine.pk)).data, "token": token}
        return Response(body, status=status.HTTP_201_CREATED)


class MachineDetailView(HallAPIView):
    @extend_schema(
        operation_id="machines_retrieve",
        summary="A machine: registry data, state, link and connection",
        responses={200: MachineSerializer, **error_responses(404)},
        tags=TAGS,
    )
    def get(self, request: Request, machine_id: int) -> Response:
        return Response(MachineSerializer(_machine(request, machine_id, *ANY_ROLE)).data)


class MachineStateView(HallAPIView):
    @extend_schema(
        operation_id="machines_state",
        summary="Put a machine in service, lock it or take it out of service (operator)",
        description=(
            "The machine is told at once (lock / unlock). 409 hand_pay_pending: a machine with an unpaid "
            "progressive hit stays locked until the cashier pays it."
        ),
        request=MachineStateRequestSerializer,
        responses={200: MachineSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, machine_id: int) -> Response:
        machine = _machine(request, machine_id, Role.OPERATOR)
        data = valid(MachineStateRequestSerializer, request.data)
        registry.set_machine_state(
            machine=machine, state=data["state"], reason=data["reason"], actor=actor(request)
        )
        return Response(MachineSerializer(_machines().get(pk=machine.pk)).data)


class MachineTokenView(HallAPIView):
    @extend_schema(
        operation_id="machines_token_rotate",
        summary="Give the machine a new device token (operator); the old one stops working at once",
        request=None,
        responses={200: DeviceTokenSerializer, **error_responses(403, 404)},
        tags=TAGS,
    )
    def post(self, request: Request, machine_id: int) -> Response:
        machine = _machine(request, machine_id, Role.OPERATOR)
        return Response({"token": registry.rotate_token(machine=machine, actor=actor(request))})


class ReconciliationView(HallAPIView):
    @extend_schema(
        operation_id="machines_reconciliation",
        summary="The machine's meter snapshots against the plays recorded, interval by interval (operator)",
        description=(
            "Per interval between two snapshots: coin-in and games by the meters against the bets and plays "
            "recorded, the sequence gaps reconciled from the meters, and a status (first, ok, "
            "gap_reconciled, mismatch); the last row (status open) counts the plays since the last snapshot."
        ),
        responses={200: ReconciliationRowSerializer(many=True), **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, machine_id: int) -> Response:
        machine = _machine(request, machine_id, Role.OPERATOR)
        return Response(ReconciliationRowSerializer(reconciliation(machine), many=True).data)


# --- link groups ----------------------------------------------------------------------------------------


class LinkGroupListView(HallAPIView):
    @extend_schema(
        operation_id="link_groups_list",
        summary="Link groups of your venues, with their linked machines",
        parameters=[LinkGroupQuerySerializer],
        responses={200: LinkGroupSerializer(many=True), **error_responses(400, 404)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        query = valid(LinkGroupQuerySerializer, request.query_params)
        found = _groups().order_by("venue_id", "code")
        if query["venue"] is not None:
            found = found.filter(venue=_venue(request, query["venue"], *ANY_ROLE))
        else:
            found = found.filter(venue_id__in=access.venue_ids_for(request.user))
        return Response(LinkGroupSerializer([_group_data(g) for g in found], many=True).data)

    @extend_schema(
        operation_id="link_groups_create",
        summary="Link a pool to the venue's machines (operator)",
        description=(
            "The pool has no table rule pack (400 pool_not_for_machines) and is the venue's or its "
            "network's (400 pool_outside_scope); 409 pool_inactive, 409 link_group_code_taken. "
            "same_type_and_denomination defaults to the jurisdiction's rule (machines.rules)."
        ),
        request=LinkGroupCreateSerializer,
        responses={201: LinkGroupSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(LinkGroupCreateSerializer, request.data)
        venue = _venue(request, data["venue"], Role.OPERATOR)
        group = links.create_link_group(
            venue=venue,
            code=data["code"],
            name=data["name"],
            pool=_pool_for(request, data["pool"]),
            same_type_and_denomination=data["same_type_and_denomination"],
            actor=actor(request),
        )
        return Response(
            LinkGroupSerializer(_group_data(_groups().get(pk=group.pk))).data, status=status.HTTP_201_CREATED
        )


class LinkGroupDetailView(HallAPIView):
    @extend_schema(
        operation_id="link_groups_retrieve",
        summary="A link group with its linked machines",
        responses={200: LinkGroupSerializer, **error_responses(404)},
        tags=TAGS,
    )
    def get(self, request: Request, group_id: int) -> Response:
        group = access.get_for_user(_groups(), request.user, *ANY_ROLE, label="link group", pk=group_id)
        # Through the serializer: money as a decimal string, never a JSON float.
        return Response(LinkGroupSerializer(_group_data(group)).data)


class LinkMembersView(HallAPIView):
    @extend_schema(
        operation_id="link_groups_members_add",
        summary="Propose linking a machine to the group's pool (operator); its plays contribute once a "
        "second operator approves (four eyes)",
        description=(
            "400 link_mismatch when the group's rule applies and the machine's type or denomination "
            "differs from its machines'; 409 already_linked when it is in another group; 400 "
            "machine_outside_venue. Nothing is written on a refusal."
        ),
        request=LinkJoinSerializer,
        responses={202: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, group_id: int) -> Response:
        group = _group(request, group_id, Role.OPERATOR)
        data = valid(LinkJoinSerializer, request.data)
        machine = _machine(request, data["machine"], Role.OPERATOR)
        proposal = proposals.propose(
            venue=group.venue,
            kind=proposal_kinds.JOIN,
            target=f"machine:{machine.pk}",
            params={"group": group.pk, "machine": machine.pk},
            actor=actor(request),
        )
        return proposed(proposal)


class LinkMemberView(HallAPIView):
    @extend_schema(
        operation_id="link_groups_members_remove",
        summary="Propose unlinking a machine (operator); it leaves once a second operator approves",
        request=None,
        responses={202: ProposalSerializer, **error_responses(403, 404)},
        tags=TAGS,
    )
    def delete(self, request: Request, group_id: int, machine_id: int) -> Response:
        group = _group(request, group_id, Role.OPERATOR)
        machine = _machine(request, machine_id, Role.OPERATOR)
        proposal = proposals.propose(
            venue=group.venue,
            kind=proposal_kinds.LEAVE,
            target=f"machine:{machine.pk}",
            params={"group": group.pk, "machine": machine.pk},
            actor=actor(request),
        )
        return proposed(proposal)


# --- hand pays ------------------------------------------------------------------------------------------


class HitListView(HallAPIView):
    @extend_schema(
        operation_id="machine_hits_pending",
        summary="Progressive hits waiting to be paid by hand (cashier), oldest first",
        parameters=[HitQuerySerializer],
        responses={200: MachineHitSerializer(many=True), **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        query = valid(HitQuerySerializer, request.query_params)
        venues = _venues_with(request, query["venue"], Role.CASHIER)
        rows = readmodels.pending_hand_pays_in([venue.pk for venue in venues])
        return Response(MachineHitSerializer(rows, many=True).data)


class HitPayView(HallAPIView):
    @extend_schema(
        operation_id="machine_hits_pay",
        summary="Record that a progressive hit was paid by hand (cashier); the machine unlocks",
        description=(
            "Records who paid it, when, and the payment reference. The machine is unlocked (and told so) "
            "when no other hit of it waits to be paid. 409 already_paid."
        ),
        request=HandPayRequestSerializer,
        responses={200: MachineHitSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, hit_id: int) -> Response:
        hit = access.get_for_user(
            ProgressiveHit.objects.select_related("machine", "group", "level"),
            request.user,
            Role.CASHIER,
            venue_path="machine.venue_id",
            label="hit",
            pk=hit_id,
        )
        data = valid(HandPayRequestSerializer, request.data)
        paid = handpay.pay_hand_pay(
            hit=hit,
            actor=actor(request),
            payment_ref=data["payment_ref"],
            identification=data.get("identification"),
        )
        payout = readmodels.hit_payouts([paid]).get(paid.pk)
        return Response(MachineHitSerializer(readmodels.hit_row(paid, payout)).data)


# --- the gateway's HTTP batch ---------------------------------------------------------------------------


class TooLarge(DomainError):
    status = 413
    default_code = "too_large"


class DeviceAuthentication(BaseAuthentication):
    """``Authorization: Device <asset>:<token>``: the machine whose device token it is (request.auth)."""

    keyword = "Device"

    def authenticate(self, request: Request) -> tuple[AnonymousUser, Machine] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        try:
            asset, _, token = parts[1].decode("ascii").partition(":") if len(parts) == 2 else ("", "", "")
        except UnicodeDecodeError:
            asset = token = ""
        venue = request.query_params.get("venue")
        venue_id = int(venue) if venue is not None and venue.isdigit() and len(venue) <= 18 else None
        # An address that sent too many wrong tokens is refused before its token is looked at.
        throttling.check_failures(request, "device_failures")
        machine = None
        if asset and token and (venue is None or venue_id is not None):
            machine = registry.authenticate(venue_id=venue_id, asset_number=asset, token=token)
        if machine is None:
            throttling.count_failure(request, "device_failures")
            raise exceptions.AuthenticationFailed(
                gettext(
                    "Unknown machine or wrong device token: send 'Authorization: Device <asset>:<token>'."
                ),
                code="bad_device_token",
            )
        return AnonymousUser(), machine

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="machines"'


class DeviceAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "machines.api.DeviceAuthentication"
    name = "deviceAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "'Device <asset_number>:<device token>' (the token given at registration).",
        }


class IsDevice(BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, Machine)


def _read_batch(request: Request) -> list[protocol.Message | protocol.ProtocolError]:
    """The batch's messages, each parsed or its error; 413 / 400 for a body that is not a batch."""
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if not declared.isdigit() or int(declared) > MAX_BATCH_BYTES:
        raise TooLarge(
            gettext("A batch body is at most %(max_batch_bytes)s bytes.")
            % {"max_batch_bytes": MAX_BATCH_BYTES},
            code="too_large",
        )
    body = request.body
    if len(body) > MAX_BATCH_BYTES:
        raise TooLarge(
            gettext("A batch body is at most %(max_batch_bytes)s bytes.")
            % {"max_batch_bytes": MAX_BATCH_BYTES},
            code="too_large",
        )
    try:
        decoded = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError):
        raise InvalidInput(
            gettext('The body is not JSON: send {"messages": [...]}.'), code="malformed_json"
        ) from None
    try:
        return protocol.parse_batch(decoded)
    except protocol.ProtocolError as exc:
        if exc.code == "batch_too_large":
            raise TooLarge(exc.message, code=exc.code) from None
        raise InvalidInput(exc.message, code=exc.code) from None


class GatewayMessagesView(APIView):
    authentication_classes = [DeviceAuthentication]
    permission_classes = [IsDevice]
    parser_classes = [JSONParser]  # documents the body; _read_batch reads it itself, size first

    @extend_schema(
        operation_id="gateway_messages",
        summary="A machine's messages in one batch, for interface boards that cannot hold a WebSocket",
        description=(
            "Authenticate with 'Authorization: Device <asset_number>:<token>' (add ?venue=<id> when the "
            "asset number is not unique across venues). Each message is idempotent by its seq: the same seq "
            "with the same content answers duplicate, with other content rejected seq_reused. A malformed "
            "message is refused alone (its reply is a rejected ack). 413 too_large (body over 256 KB) or "
            "batch_too_large (over 200 messages) and 400 for a body that is not a batch: nothing is taken."
        ),
        request=GatewayBatchSerializer,
        responses={
            200: GatewayRepliesSerializer,
            400: OpenApiResponse(ErrorSerializer, description="Not a batch. Nothing taken."),
            401: OpenApiResponse(ErrorSerializer, description="Unknown machine or wrong device token."),
            413: OpenApiResponse(ErrorSerializer, description="Body or batch too large. Nothing taken."),
            429: OpenApiResponse(ErrorSerializer, description="Too many wrong device tokens from here."),
        },
        parameters=[
            OpenApiParameter(
                "venue", int, description="The machine's venue, if its asset number is not unique."
            )
        ],
        tags=["gateway"],
    )
    def post(self, request: Request) -> Response:
        machine = request.auth
        assert isinstance(machine, Machine)  # IsDevice let the request in
        parsed = _read_batch(request)
        messages = [m for m in parsed if not isinstance(m, protocol.ProtocolError)]
        taken = iter(gateway.receive(machine_id=machine.pk, messages=messages))
        replies = [m.ack() if isinstance(m, protocol.ProtocolError) else next(taken) for m in parsed]
        for reply in replies:
            metrics.count_gateway_ack(reply)  # as the socket's answers are
        return Response({"replies": replies, "levels": gateway.levels_payload(_linked_pool(machine.pk))})


def _linked_pool(machine_id: int) -> int | None:
    pool_id: int | None = (
        LinkMember.objects.filter(machine_id=machine_id, left_at__isnull=True, group__pool__active=True)
        .values_list("group__pool_id", flat=True)
        .first()
    )
    return pool_id


urlpatterns = [
    path("machines/", MachineListView.as_view(), name="api-machines"),
    path("machines/<int:machine_id>/", MachineDetailView.as_view(), name="api-machine"),
    path("machines/<int:machine_id>/state/", MachineStateView.as_view(), name="api-machine-state"),
    path("machines/<int:machine_id>/token/", MachineTokenView.as_view(), name="api-machine-token"),
    path(
        "machines/<int:machine_id>/reconciliation/",
        ReconciliationView.as_view(),
        name="api-machine-reconciliation",
    ),
    path("link-groups/", LinkGroupListView.as_view(), name="api-link-groups"),
    path("link-groups/<int:group_id>/", LinkGroupDetailView.as_view(), name="api-link-group"),
    path("link-groups/<int:group_id>/members/", LinkMembersView.as_view(), name="api-link-group-members"),
    path(
        "link-groups/<int:group_id>/members/<int:machine_id>/",
        LinkMemberView.as_view(),
        name="api-link-group-member",
    ),
    path("machine-hits/", HitListView.as_view(), name="api-machine-hits"),
    path("machine-hits/<int:hit_id>/pay/", HitPayView.as_view(), name="api-machine-hit-pay"),
    path("gateway/messages/", GatewayMessagesView.as_view(), name="api-gateway-messages"),
]
