"""REST doors of a venue's wide-area pools: a member's hit on a wide-area level reported by staff (a poker
table's royal flush keyed in at its console; machines report theirs through the gateway), and a mirror's
state (the central's levels as last heard, offered or withdrawn, its balancing check).

A thin door: validate, find the mirror through halls.access, call one service. Refusals are DomainErrors
rendered as {"error": {"code", "message"}}: level_not_linked, not_a_member, level_unavailable (the central
silent past the pool's window), duplicate_hit.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access, money
from halls.api import ANY_ROLE, HallAPIView, actor, valid
from halls.errors import PermissionDenied
from halls.models import Role
from halls.serializers import error_responses
from jackpots.widearea.models import WideAreaMirror
from jackpots.widearea.services import reconciliations, venue

TAG = "wide-area"


class WideAreaHitSerializer(serializers.Serializer[dict[str, Any]]):
    # the member and where in it: "table:1/hand:7"
    member = serializers.RegexField(r"^[a-z_]+:[^/:]+(/[^/]+)*$", max_length=120)
    level = serializers.CharField(max_length=60)
    key = serializers.CharField(max_length=100)


def _mirror(request: Request, mirror_id: int, *roles: str) -> WideAreaMirror:
    return access.get_for_user(
        WideAreaMirror.objects.select_related("venue"), request.user, *roles, label="mirror", pk=mirror_id
    )


class MirrorView(HallAPIView):
    @extend_schema(
        operation_id="widearea_mirror",
        summary="A venue's side of a wide-area pool: the central's levels, offered or withdrawn",
        responses={200: dict, **error_responses(404)},
        tags=[TAG],
    )
    def get(self, request: Request, mirror_id: int) -> Response:
        mirror = _mirror(request, mirror_id, *ANY_ROLE)
        return Response(
            {
                "id": mirror.pk,
                "central": mirror.central_code,
                "wide_levels": mirror.wide_levels,
                "levels": mirror.levels,
                "offered": venue.offered(mirror).value,
                "state": mirror.state,
                "heard_at": mirror.heard_at,
                "forwarded": mirror.forwarded,
                "holds": venue.balance(mirror=mirror)["holds"],
                "last_reconciliation": _last(mirror),
            }
        )


def _last(mirror: WideAreaMirror) -> dict[str, Any] | None:
    row = venue.last_reconciliation(mirror)
    if row is None:
        return None
    (shown,) = reconciliations.listed(venue_ids=[row.venue_id], side=row.side, pool=row.pool_code, limit=1)
    return shown.as_payload()


class ReconciliationsView(HallAPIView):
    @extend_schema(
        operation_id="widearea_reconciliations",
        summary="The reconciliations of wide-area pools recorded here, newest first (the operator's and the "
        "inspector's venues only)",
        parameters=[
            OpenApiParameter("side", str, enum=["central", "venue"]),
            OpenApiParameter("pool", str),
            OpenApiParameter("venue", int),
        ],
        responses={200: dict, **error_responses(403)},
        tags=[TAG],
    )
    def get(self, request: Request) -> Response:
        venue_ids = reconciliations.reader_venue_ids(request.user)
        if not venue_ids:
            raise PermissionDenied(
                _("The reconciliations are for the venues' operators and inspectors."), code="role_required"
            )
        side, pool, venue_id = reconciliations.filters(request.query_params)
        found = reconciliations.listed(venue_ids=venue_ids, side=side, pool=pool, venue_id=venue_id)
        return Response({"side": side, "reconciliations": [item.as_payload() for item in found]})


class HitView(HallAPIView):
    @extend_schema(
        operation_id="widearea_hit",
        summary="Report a member's hit on a wide-area level (decided at the central)",
        request=WideAreaHitSerializer,
        responses={201: dict, **error_responses(400, 404, 409)},
        tags=[TAG],
    )
    def post(self, request: Request, mirror_id: int) -> Response:
        mirror = _mirror(request, mirror_id, Role.CALLER, Role.OPERATOR)
        body = valid(WideAreaHitSerializer, request.data)
        claim = venue.report_hit(
            mirror=mirror, source=body["member"], level=body["level"], key=body["key"], actor=actor(request)
        )
        return Response(
            {"claim": claim.pk, "key": claim.key, "level": claim.level, "amount": money.text(claim.amount)},
            status=status.HTTP_201_CREATED,
        )


urlpatterns = [
    path("widearea/reconciliations/", ReconciliationsView.as_view(), name="api-widearea-reconciliations"),
    path("widearea/mirrors/<int:mirror_id>/", MirrorView.as_view(), name="api-widearea-mirror"),
    path("widearea/mirrors/<int:mirror_id>/hits/", HitView.as_view(), name="api-widearea-hits"),
]
