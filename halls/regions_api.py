"""REST doors of regions, operators, agreements between regions, and network membership (spec §5
IB-02…IB-04, R-14).

Reading needs a role in some venue. Regions, operators and agreements are shared by the whole installation:
changed by a superuser or the operator of every venue (halls.access.require_installation_operator). A
venue's region and operator, and its joining or leaving a network, are changed by its operator. A span
refusal answers 409 ``no_region_agreement`` with ``details.regions`` the pair lacking an agreement and
``details.missing`` what it lacks; nothing is written.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.urls import path
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access
from halls.api import HallAPIView, actor, valid
from halls.errors import InvalidInput, NotFound, PermissionDenied
from halls.models import Network, Operator, Region, RegionAgreement, Role, Venue
from halls.regions_serializers import (
    AgreementDocumentsSerializer,
    AgreementRevokeSerializer,
    NetworkMemberSerializer,
    NetworkMembershipSerializer,
    NetworkWithMembersSerializer,
    OperatorCreateSerializer,
    OperatorSerializer,
    RegionAgreementCreateSerializer,
    RegionAgreementSerializer,
    RegionCreateSerializer,
    RegionSerializer,
    RegionUpdateSerializer,
    VenuePlaceSerializer,
)
from halls.serializers import error_responses
from halls.services import regions

TAGS = ["regions"]


def _staff(request: Request) -> None:
    if not access.venue_ids_for(request.user):
        raise PermissionDenied(_("This needs a role in some venue."), code="role_required")


def _region(code: str) -> Region:
    found = Region.objects.filter(code=code.strip().upper()).first()
    if found is None:
        raise NotFound(_("No region %(code)s.") % {"code": code}, code="unknown_region")
    return found


def _operators(ids: list[int]) -> list[Operator]:
    found = list(Operator.objects.filter(pk__in=ids).order_by("pk"))
    if len(found) != len(set(ids)):
        raise NotFound(_("Unknown operator among %(ids)s.") % {"ids": ids}, code="unknown_operator")
    return found


def _agreement(agreement_id: int) -> RegionAgreement:
    found = RegionAgreement.objects.select_related("region_a", "region_b").filter(pk=agreement_id).first()
    if found is None:
        raise NotFound(_("No agreement %(id)s.") % {"id": agreement_id}, code="unknown_agreement")
    return found


def _agreement_data(agreement: RegionAgreement) -> dict[str, Any]:
    data: dict[str, Any] = RegionAgreementSerializer(agreement, context={"today": timezone.localdate()}).data
    return data


class RegionListView(HallAPIView):
    @extend_schema(
        operation_id="regions_list",
        summary="Regions, by code",
        responses={200: RegionSerializer(many=True), **error_responses(403)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        _staff(request)
        return Response(RegionSerializer(Region.objects.order_by("code"), many=True).data)

    @extend_schema(
        operation_id="regions_create",
        summary="Create a region (operator of every venue)",
        description="409 region_code_taken when the code exists.",
        request=RegionCreateSerializer,
        responses={201: RegionSerializer, **error_responses(400, 403, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        access.require_installation_operator(request.user)
        data = valid(RegionCreateSerializer, request.data)
        region = regions.create_region(actor=actor(request), **data)
        return Response(RegionSerializer(region).data, status=status.HTTP_201_CREATED)


class RegionDetailView(HallAPIView):
    @extend_schema(
        operation_id="regions_update",
        summary="Rename a region, or change its jurisdiction while no venue is in it",
        request=RegionUpdateSerializer,
        responses={200: RegionSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def patch(self, request: Request, code: str) -> Response:
        access.require_installation_operator(request.user)
        data = valid(RegionUpdateSerializer, request.data)
        region = regions.update_region(region=_region(code), actor=actor(request), **data)
        return Response(RegionSerializer(region).data)


class OperatorListView(HallAPIView):
    @extend_schema(
        operation_id="operators_list",
        summary="Operators (the licensed companies), by name",
        responses={200: OperatorSerializer(many=True), **error_responses(403)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        _staff(request)
        return Response(OperatorSerializer(Operator.objects.order_by("name"), many=True).data)

    @extend_schema(
        operation_id="operators_create",
        summary="Record an operator (operator of every venue)",
        description="409 operator_taken when the tax id exists.",
        request=OperatorCreateSerializer,
        responses={201: OperatorSerializer, **error_responses(400, 403, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        access.require_installation_operator(request.user)
        data = valid(OperatorCreateSerializer, request.data)
        created = regions.create_operator(actor=actor(request), **data)
        return Response(OperatorSerializer(created).data, status=status.HTTP_201_CREATED)


class AgreementListView(HallAPIView):
    @extend_schema(
        operation_id="region_agreements_list",
        summary="Agreements between regions, the open ones first",
        responses={200: RegionAgreementSerializer(many=True), **error_responses(403)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        _staff(request)
        found: QuerySet[RegionAgreement] = (
            RegionAgreement.objects.select_related("region_a", "region_b")
            .prefetch_related("operators")
            .order_by("-ended_at", "region_a__code", "region_b__code", "-pk")
        )
        today = timezone.localdate()
        return Response(RegionAgreementSerializer(found, many=True, context={"today": today}).data)

    @extend_schema(
        operation_id="region_agreements_create",
        summary="Record the agreement of two regions (operator of every venue)",
        description=(
            "The operators' agreement (reference, signing date, the operators who signed) and the "
            "administrations' collaboration protocol (reference, signing date); either may follow later. "
            "409 agreement_exists while the pair has an agreement still valid or not yet valid."
        ),
        request=RegionAgreementCreateSerializer,
        responses={201: RegionAgreementSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        access.require_installation_operator(request.user)
        data = valid(RegionAgreementCreateSerializer, request.data)
        codes = data.pop("regions")
        pair = (_region(codes[0]), _region(codes[1]))
        data["operators"] = _operators(data["operators"])
        agreement = regions.record_agreement(regions=pair, actor=actor(request), **data)
        return Response(_agreement_data(agreement), status=status.HTTP_201_CREATED)


class AgreementDocumentsView(HallAPIView):
    @extend_schema(
        operation_id="region_agreements_documents",
        summary="Add the document an agreement lacks (operator of every venue)",
        request=AgreementDocumentsSerializer,
        responses={200: RegionAgreementSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, agreement_id: int) -> Response:
        access.require_installation_operator(request.user)
        data = valid(AgreementDocumentsSerializer, request.data)
        data["operators"] = _operators(data["operators"])
        agreement = regions.record_agreement_documents(
            agreement=_agreement(agreement_id), actor=actor(request), **data
        )
        return Response(_agreement_data(agreement))


class AgreementRevokeView(HallAPIView):
    @extend_schema(
        operation_id="region_agreements_revoke",
        summary="Revoke an agreement now (operator of every venue)",
        request=AgreementRevokeSerializer,
        responses={200: RegionAgreementSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, agreement_id: int) -> Response:
        access.require_installation_operator(request.user)
        data = valid(AgreementRevokeSerializer, request.data)
        agreement = regions.revoke_agreement(agreement=_agreement(agreement_id), actor=actor(request), **data)
        return Response(_agreement_data(agreement))


class VenuePlaceView(HallAPIView):
    @extend_schema(
        operation_id="venues_place",
        summary="Set a venue's region and/or operator (operator of the venue)",
        description=(
            "Moving a venue that belongs to networks re-checks their span: 409 no_region_agreement naming "
            "the pair, nothing written. 400 region_jurisdiction when the region's jurisdiction is not the "
            "venue's."
        ),
        request=VenuePlaceSerializer,
        responses={200: NetworkMemberSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        access.require_role(request.user, venue_id, Role.OPERATOR)
        data = valid(VenuePlaceSerializer, request.data)
        if data["region"] is None and data["operator"] is None:
            raise InvalidInput(_("Give a region or an operator."), code="nothing_to_place")
        region = None if data["region"] is None else _region(data["region"])
        company = None
        if data["operator"] is not None:
            company = Operator.objects.filter(tax_id=data["operator"].strip().upper()).first()
            if company is None:
                message = _("No operator with tax id %(tax_id)s.") % {"tax_id": data["operator"]}
                raise NotFound(message, code="unknown_operator")
        venue = regions.assign_venue(
            venue=Venue.objects.get(pk=venue_id), region=region, operator=company, actor=actor(request)
        )
        return Response(NetworkMemberSerializer(venue).data)


def _networks_for(request: Request) -> QuerySet[Network]:
    networks = Network.objects.prefetch_related("venues__region", "venues__operator").order_by("code")
    if getattr(request.user, "is_superuser", False):
        return networks
    return networks.filter(venues__in=access.venue_ids_for(request.user)).distinct()


class NetworkListView(HallAPIView):
    @extend_schema(
        operation_id="networks_list",
        summary="Networks with a venue of yours, with every member's region and operator",
        responses={200: NetworkWithMembersSerializer(many=True), **error_responses(403)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        _staff(request)
        return Response(NetworkWithMembersSerializer(_networks_for(request), many=True).data)


def _membership(request: Request, network_id: int) -> tuple[Network, Venue]:
    data = valid(NetworkMembershipSerializer, request.data)
    venue = access.get_for_user(
        Venue.objects.all(), request.user, Role.OPERATOR, venue_path="pk", label="venue", pk=data["venue"]
    )
    network = Network.objects.filter(pk=network_id).first()
    if network is None:
        raise NotFound(_("No network %(id)s.") % {"id": network_id}, code="unknown_network")
    return network, venue


def _network_data(network_id: int) -> dict[str, Any]:
    network = Network.objects.prefetch_related("venues__region", "venues__operator").get(pk=network_id)
    data: dict[str, Any] = NetworkWithMembersSerializer(network).data
    return data


class NetworkJoinView(HallAPIView):
    @extend_schema(
        operation_id="networks_join",
        summary="Add your venue to a network (operator of the venue)",
        description=(
            "409 no_region_agreement when the network's venues with yours span a pair of regions without "
            "a valid agreement (details.regions, details.missing); nothing written. Joining twice changes "
            "nothing."
        ),
        request=NetworkMembershipSerializer,
        responses={200: NetworkWithMembersSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, network_id: int) -> Response:
        network, venue = _membership(request, network_id)
        regions.join_network(network=network, venue=venue, actor=actor(request))
        return Response(_network_data(network.pk))


class NetworkLeaveView(HallAPIView):
    @extend_schema(
        operation_id="networks_leave",
        summary="Take your venue out of a network (operator of the venue)",
        request=NetworkMembershipSerializer,
        responses={200: NetworkWithMembersSerializer, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def post(self, request: Request, network_id: int) -> Response:
        network, venue = _membership(request, network_id)
        regions.leave_network(network=network, venue=venue, actor=actor(request))
        return Response(_network_data(network.pk))


urlpatterns = [
    path("regions/", RegionListView.as_view(), name="api-regions"),
    path("regions/<str:code>/", RegionDetailView.as_view(), name="api-region"),
    path("operators/", OperatorListView.as_view(), name="api-operators"),
    path("region-agreements/", AgreementListView.as_view(), name="api-region-agreements"),
    path(
        "region-agreements/<int:agreement_id>/documents/",
        AgreementDocumentsView.as_view(),
        name="api-region-agreement-documents",
    ),
    path(
        "region-agreements/<int:agreement_id>/revoke/",
        AgreementRevokeView.as_view(),
        name="api-region-agreement-revoke",
    ),
    path("venues/<int:venue_id>/place/", VenuePlaceView.as_view(), name="api-venue-place"),
    path("networks/", NetworkListView.as_view(), name="api-networks"),
    path("networks/<int:network_id>/join/", NetworkJoinView.as_view(), name="api-network-join"),
    path("networks/<int:network_id>/leave/", NetworkLeaveView.as_view(), name="api-network-leave"),
]
