"""REST doors of the door's players (issue 27): the till finds a person and issues their card by the document
they show (POST: a document number never travels in a URL, so never in an access log), and the door lists
and acknowledges its alerts (a player inside whose admission was withdrawn, their cards blocked).

A document the till cannot read answers 400 naming the problem (never the number), nothing written; a
player not admitted today answers 409 player_not_admitted where the venue's cards need it.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access
from halls.api import HallAPIView, actor, valid
from halls.cashier.api.player_cards import PlayerCardSerializer
from halls.door.api import DocumentSerializer
from halls.door.services import admission, players, till
from halls.models import Role, Venue
from halls.serializers import error_responses

TAGS = ["door"]


def _venue(request: Request, venue_id: int, *roles: str) -> Venue:
    return access.venue_for(request.user, venue_id, *roles)


class PlayerFindView(HallAPIView):
    @extend_schema(
        operation_id="door_player_find",
        summary="The player of a scanned document: whether admitted today, and their cards (cashier)",
        description="No name and no number in the answer. 400 names a document's problem.",
        request=DocumentSerializer,
        responses={200: None, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, Role.CASHIER, Role.OPERATOR)
        data = valid(DocumentSerializer, request.data)
        document = admission.document_from(data["kind"], data["number"], data["country"])
        found = till.find_player(venue=venue, document=document)
        return Response(
            {
                "player": found.player,
                "admitted_today": found.admitted,
                "cards": [PlayerCardSerializer(card).data for card in found.cards],
            }
        )


class PlayerCardIssueView(HallAPIView):
    @extend_schema(
        operation_id="door_player_card_issue",
        summary="Issue a player card to the person showing their document (cashier)",
        description=(
            "201 with the card. 400 names a document's problem; 409 player_not_admitted when the venue's "
            "cards need the player admitted today and they were not (nothing written)."
        ),
        request=DocumentSerializer,
        responses={201: PlayerCardSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, Role.CASHIER)
        data = valid(DocumentSerializer, request.data)
        document = admission.document_from(data["kind"], data["number"], data["country"])
        card = till.card_for(venue=venue, document=document, actor=actor(request))
        return Response(PlayerCardSerializer(card).data, status=status.HTTP_201_CREATED)


def _alert(alert: players.OpenAlert) -> dict[str, Any]:
    return {
        "id": alert.id,
        "kind": alert.kind,
        "kind_label": alert.kind_label,
        "raised_at": alert.raised_at,
        "player": alert.player,
        "visit": alert.visit,
        "door": alert.door,
        "admitted_at": alert.admitted_at,
        "register": alert.register,
        "register_version": alert.register_version,
        "cards_blocked": alert.cards_blocked,
    }


class AlertsView(HallAPIView):
    @extend_schema(
        operation_id="door_alerts",
        summary="The door's open alerts, newest first (door staff, operator)",
        description="A player inside whose admission was withdrawn (a register listed them, they "
        "self-excluded): their cards are blocked. Ids only, and the register's code, never its reason.",
        responses={200: None, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, Role.DOOR, Role.OPERATOR)
        return Response([_alert(a) for a in players.open_alerts(venue)])


class AlertAcknowledgeView(HallAPIView):
    @extend_schema(
        operation_id="door_alert_acknowledge",
        summary="Acknowledge a door alert: it leaves the open list (door staff, operator)",
        request=None,
        responses={200: None, **error_responses(403, 404)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int, alert_id: int) -> Response:
        venue = _venue(request, venue_id, Role.DOOR, Role.OPERATOR)
        alert = players.acknowledge_alert(venue=venue, alert_id=alert_id, actor=actor(request))
        return Response(
            {
                "id": alert.pk,
                "acknowledged_at": alert.acknowledged_at,
                "acknowledged_by": alert.acknowledged_by_label,
            }
        )


urlpatterns = [
    path("venues/<int:venue_id>/players/find/", PlayerFindView.as_view(), name="api-door-player-find"),
    path("venues/<int:venue_id>/players/cards/", PlayerCardIssueView.as_view(), name="api-door-player-card"),
    path("venues/<int:venue_id>/door-alerts/", AlertsView.as_view(), name="api-door-alerts"),
    path(
        "venues/<int:venue_id>/door-alerts/<int:alert_id>/acknowledge/",
        AlertAcknowledgeView.as_view(),
        name="api-door-alert-acknowledge",
    ),
]
