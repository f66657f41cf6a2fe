"""REST doors of interconnected bingo (bingo.network.interconnected). Thin (DESIGN §3): validate, find
through the user's
venues, check the role, call ONE service, render.

The central: create a prize (an operator of every member hall, as a network pool), open a round, list the
prizes, their rounds and decisions (any role in a member hall). A prize is interconnected (IB-01) or a
Gran Línea / Gran Bingo of automatic bingo (AB-05, AB-08). A venue: name the room that plays an
interconnected prize, or the speciality of its electronic room that plays a Gran prize, or stop it (the
venue's operator), and list them.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from bingo.electronic.models import Speciality
from bingo.network.interconnected.decide import MAX_BALL
from bingo.network.interconnected.models import NetworkPrize, PrizeKind, RoomMembership, SpecialityMembership
from bingo.network.interconnected.serializers import (
    MembershipCreateSerializer,
    MembershipSerializer,
    NetworkPrizeSerializer,
    PrizeCreateSerializer,
    RoundOpenSerializer,
    RoundSerializer,
    SpecialityMembershipCreateSerializer,
    SpecialityMembershipSerializer,
)
from bingo.network.interconnected.services import gran, prizes, readmodels, venue
from halls import access
from halls.api import ANY_ROLE, HallAPIView, actor, valid
from halls.errors import InvalidInput, NotFound, PermissionDenied
from halls.models import Network, Role, Room, Venue
from halls.serializers import error_responses

TAGS = ["interconnected bingo"]


def _every_venue(request: Request, venue_ids: list[int], *roles: str) -> None:
    allowed = [v for v, held in access.roles_in_each(request.user, venue_ids) if held.intersection(roles)]
    if len(allowed) != len(venue_ids) or not venue_ids:
        raise PermissionDenied(
            _("An interconnected prize is run by an operator of every member hall."), code="role_required"
        )


def _visible(request: Request) -> QuerySet[NetworkPrize]:
    venue_ids = access.venue_ids_for(request.user)
    return NetworkPrize.objects.filter(halls__venue_id__in=venue_ids).distinct().select_related("network")


def _prize(request: Request, code: str, *roles: str, every: bool = False) -> NetworkPrize:
    prize = _visible(request).filter(code=code).first()
    if prize is None:
        raise NotFound(
            _("No interconnected prize %(code)s in your venues.") % {"code": code}, code="unknown_prize"
        )
    venue_ids = sorted(prize.halls.values_list("venue_id", flat=True))
    if every:
        _every_venue(request, venue_ids, *roles)
    elif not any(held.intersection(roles) for _, held in access.roles_in_each(request.user, venue_ids)):
        raise PermissionDenied(_("This needs a role in a member hall."), code="role_required")
    return prize


def _network(code: str) -> Network:
    network = Network.objects.filter(code=code).first()
    if network is None:
        raise NotFound(_("No network %(code)s.") % {"code": code}, code="unknown_network")
    return network


class PrizeListView(HallAPIView):
    @extend_schema(
        operation_id="network_prizes_list",
        summary="Interconnected prizes of your halls, with their live meters",
        responses={200: NetworkPrizeSerializer(many=True), **error_responses()},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        found = [readmodels.prize_view(p) for p in _visible(request).order_by("code")]
        return Response(NetworkPrizeSerializer(found, many=True).data)

    @extend_schema(
        operation_id="network_prizes_create",
        summary="Create an interconnected prize on a network pool (operator of every member hall)",
        description=(
            "kind: interconnected (IB-01, max_ball required) or gran_linea / gran_bingo (AB-05, AB-08: no "
            "max ball; its rounds open by themselves unless auto_rounds is false). "
            "400 bad_percent / bad_max_ball / bad_wait / hall_outside_network / no_halls / unknown_hall; "
            "403 role_required unless operator of every member hall; 404 unknown_network; "
            "409 prize_code_taken."
        ),
        request=PrizeCreateSerializer,
        responses={201: NetworkPrizeSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(PrizeCreateSerializer, request.data)
        network = _network(data["network"])
        halls = list(Venue.objects.filter(licence_number__in=data["halls"]).order_by("pk"))
        if len(halls) != len(set(data["halls"])):
            raise InvalidInput(_("Unknown hall licence numbers."), code="unknown_hall")
        _every_venue(request, [v.pk for v in halls], Role.OPERATOR)
        kind = PrizeKind(data["kind"])
        if kind == PrizeKind.INTERCONNECTED and data["max_ball"] is None:
            raise InvalidInput(_("An interconnected prize needs its max ball."), code="bad_max_ball")
        if kind != PrizeKind.INTERCONNECTED and data["max_ball"] is not None:
            raise InvalidInput(
                _("A Gran Línea or Gran Bingo has no max ball: the first in the whole network wins."),
                code="bad_max_ball",
            )
        prize = prizes.create_prize(
            network=network,
            kind=kind,
            auto_rounds=data["auto_rounds"],
            code=data["code"],
            name=data["name"],
            percent=data["percent"],
            reserve_percent=data["reserve_percent"],
            max_ball=data["max_ball"] or MAX_BALL,
            seed=data["seed"],
            wait_seconds=data["wait_seconds"],
            authorisation_ref=data["authorisation_ref"],
            halls=halls,
            actor=actor(request),
        )
        body = NetworkPrizeSerializer(readmodels.prize_view(prize)).data
        return Response(body, status=status.HTTP_201_CREATED)


class RoundListView(HallAPIView):
    @extend_schema(
        operation_id="network_prizes_rounds_list",
        summary="A prize's rounds, newest first, with their decisions hall by hall",
        responses={200: RoundSerializer(many=True), **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, code: str) -> Response:
        prize = _prize(request, code, *ANY_ROLE)
        found = [readmodels.round_view(r) for r in prize.rounds.order_by("-number")[:50]]
        return Response(RoundSerializer(found, many=True).data)

    @extend_schema(
        operation_id="network_prizes_rounds_open",
        summary="Open the prize's next round (operator of every member hall)",
        description="400 bad_wait; 403 role_required; 404 unknown_prize; 409 prize_closed.",
        request=RoundOpenSerializer,
        responses={201: RoundSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, code: str) -> Response:
        prize = _prize(request, code, Role.OPERATOR, every=True)
        data = valid(RoundOpenSerializer, request.data)
        rnd = prizes.open_round(prize=prize, actor=actor(request), wait_seconds=data["wait_seconds"])
        return Response(RoundSerializer(readmodels.round_view(rnd)).data, status=status.HTTP_201_CREATED)


class MembershipListView(HallAPIView):
    @extend_schema(
        operation_id="network_memberships_list",
        summary="Rooms of your venues that play an interconnected prize, with the last meter heard",
        responses={200: MembershipSerializer(many=True), **error_responses()},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        rows = RoomMembership.objects.filter(venue_id__in=access.venue_ids_for(request.user)).select_related(
            "network"
        )
        found = [readmodels.membership_view(m) for m in rows.order_by("pk")]
        return Response(MembershipSerializer(found, many=True).data)

    @extend_schema(
        operation_id="network_memberships_create",
        summary="Name the room of your venue that plays a network's interconnected prize (operator)",
        description=(
            "403 role_required; 404 unknown_room / unknown_network; 409 not_in_network / prize_room_taken."
        ),
        request=MembershipCreateSerializer,
        responses={201: MembershipSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(MembershipCreateSerializer, request.data)
        room = access.get_for_user(
            Room.objects.select_related("venue"), request.user, Role.OPERATOR, label="room", pk=data["room"]
        )
        membership = venue.join_room(
            room=room, network=_network(data["network"]), prize_code=data["prize"], actor=actor(request)
        )
        return Response(
            MembershipSerializer(readmodels.membership_view(membership)).data, status=status.HTTP_201_CREATED
        )


def _speciality_membership(request: Request, pk: int) -> SpecialityMembership:
    return access.get_for_user(
        SpecialityMembership.objects.select_related("network", "speciality"),
        request.user,
        Role.OPERATOR,
        label="speciality membership",
        pk=pk,
    )


class SpecialityMembershipListView(HallAPIView):
    @extend_schema(
        operation_id="network_specialities_list",
        summary="Automatic-bingo specialities of your venues that play a Gran Línea / Gran Bingo",
        responses={200: SpecialityMembershipSerializer(many=True), **error_responses()},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        rows = SpecialityMembership.objects.filter(
            venue_id__in=access.venue_ids_for(request.user)
        ).select_related("network")
        found = [readmodels.speciality_membership_view(m) for m in rows.order_by("pk")]
        return Response(SpecialityMembershipSerializer(found, many=True).data)

    @extend_schema(
        operation_id="network_specialities_join",
        summary="A speciality of your venue's electronic room plays a network's Gran prize (operator)",
        description=(
            "400 not_a_network_prize (table_code is no gran_line / gran_bingo of the speciality's table); "
            "403 role_required; 404 unknown_speciality / unknown_network; 409 not_in_network / "
            "prize_room_taken (another speciality of the venue plays it) / no_version."
        ),
        request=SpecialityMembershipCreateSerializer,
        responses={201: SpecialityMembershipSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(SpecialityMembershipCreateSerializer, request.data)
        speciality = access.get_for_user(
            Speciality.objects.select_related("venue"),
            request.user,
            Role.OPERATOR,
            label="speciality",
            pk=data["speciality"],
        )
        membership = gran.join_speciality(
            speciality=speciality,
            network=_network(data["network"]),
            prize_code=data["prize"],
            table_code=data["table_code"],
            actor=actor(request),
        )
        body = SpecialityMembershipSerializer(readmodels.speciality_membership_view(membership)).data
        return Response(body, status=status.HTTP_201_CREATED)


class SpecialityMembershipLeaveView(HallAPIView):
    @extend_schema(
        operation_id="network_specialities_leave",
        summary="The speciality stops playing the network's Gran prize from its next game (operator)",
        description="403 role_required; 404 unknown_speciality_membership; 409 already_left.",
        request=None,
        responses={200: SpecialityMembershipSerializer, **error_responses(403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, pk: int) -> Response:
        found = _speciality_membership(request, pk)
        membership = gran.leave_speciality(membership=found, actor=actor(request))
        body = SpecialityMembershipSerializer(readmodels.speciality_membership_view(membership)).data
        return Response(body)


urlpatterns = [
    path("network/prizes/", PrizeListView.as_view(), name="network-prizes"),
    path("network/prizes/<str:code>/rounds/", RoundListView.as_view(), name="network-prize-rounds"),
    path("network/memberships/", MembershipListView.as_view(), name="network-memberships"),
    path("network/specialities/", SpecialityMembershipListView.as_view(), name="network-specialities"),
    path(
        "network/specialities/<int:pk>/leave/",
        SpecialityMembershipLeaveView.as_view(),
        name="network-speciality-leave",
    ),
]
