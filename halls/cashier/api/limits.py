"""/api/cashier/venues/<venue>/cards/<code>/limits/: a player's loss and spend limits, set at the cashier.

The limits are the card's player's (on all their cards), or an anonymous card's own. GET lists the six
(loss and spend, per day, week and month): in force, a raise pending and when it applies, what the period
used, what is left and when the period resets. PUT asks for one: 200 when it is in force at once (lowered,
a first limit, a pending raise cancelled) or already so; 202 when it is a raise or a removal waiting its
cooling-off (the pending change in the body); 409 limit_cooling_off for another raise while one waits.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from halls.api import HallAPIView, actor, valid
from halls.cashier.api.player_cards import CARD_PARAMS, card_of
from halls.cashier.limits import LimitKind, Outcome, Period
from halls.cashier.services import limits
from halls.models import Role
from halls.money import PAYMENT_DIGITS
from halls.serializers import error_responses, money_field


class LimitSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField(help_text="loss (staked less won) or spend (staked).")
    period = serializers.CharField(help_text="day, week (ISO, from Monday) or month: the venue's local time.")
    name = serializers.SerializerMethodField(help_text='"daily loss limit", in the reader\'s language.')
    amount = money_field(PAYMENT_DIGITS, allow_null=True, help_text="In force now; null: none.")
    pending = serializers.BooleanField(help_text="A raise or removal waits its cooling-off.")
    pending_amount = money_field(PAYMENT_DIGITS, allow_null=True, help_text="The raise (null: removal).")
    pending_from = serializers.DateTimeField(allow_null=True, help_text="When the pending change applies.")
    used = money_field(PAYMENT_DIGITS, help_text="What the period used of it so far.")
    left = money_field(PAYMENT_DIGITS, allow_null=True, help_text="What may still be staked in the period.")
    resets_at = serializers.DateTimeField(help_text="When the period ends.")

    def get_name(self, view: limits.LimitView) -> str:
        return limits.limit_name(view.kind, view.period)


class LimitsSerializer(serializers.Serializer[Any]):
    card = serializers.CharField()
    player = serializers.IntegerField(allow_null=True, help_text="The player whose limits they are, if any.")
    limits = LimitSerializer(many=True)


class LimitRequestSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField(help_text="loss or spend.")
    period = serializers.CharField(help_text="day, week or month.")
    amount = serializers.CharField(
        allow_null=True, max_length=40, help_text='A decimal string ("50.00"); null removes the limit.'
    )


class LimitChangeSerializer(LimitsSerializer):
    outcome = serializers.CharField(help_text="at_once, pending or unchanged.")
    limit = LimitSerializer(help_text="The limit asked for, as it stands now.")


LIMIT_KINDS = ", ".join(k.value for k in LimitKind)
PERIODS = ", ".join(p.value for p in Period)


class CardLimitsView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cards_limits",
        summary="The card's player's loss and spend limits: in force, pending, used, left (cashier)",
        description="400 bad_card_number; 404 unknown_card.",
        parameters=CARD_PARAMS,
        responses={200: LimitsSerializer, **error_responses(400, 403, 404)},
        tags=["cashier cards"],
    )
    def get(self, request: Request, venue_id: int, code: str) -> Response:
        card = card_of(request, venue_id, code, Role.CASHIER)
        body = {"card": card.number, "player": card.player_id, "limits": limits.limits_of(card)}
        return Response(LimitsSerializer(body).data)

    @extend_schema(
        operation_id="cashier_cards_limit_set",
        summary="Set one limit: lowered at once, raised or removed after the cooling-off (cashier)",
        description=(
            f"kind: {LIMIT_KINDS}; period: {PERIODS}. 200 in force at once (or unchanged), 202 pending its "
            "cooling-off (pending_from says when). 400 bad_kind, bad_period, bad_amount; 404 unknown_card; "
            "409 card_blocked, limit_cooling_off (another raise waits: nothing written)."
        ),
        parameters=CARD_PARAMS,
        request=LimitRequestSerializer,
        responses={
            200: LimitChangeSerializer,
            202: OpenApiResponse(LimitChangeSerializer, description="A raise waiting its cooling-off."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["cashier cards"],
    )
    def put(self, request: Request, venue_id: int, code: str) -> Response:
        card = card_of(request, venue_id, code, Role.CASHIER)
        data = valid(LimitRequestSerializer, request.data)
        change = limits.set_limit(
            card=card, kind=data["kind"], period=data["period"], amount=data["amount"], actor=actor(request)
        )
        body = {
            "card": card.number,
            "player": card.player_id,
            "limits": change.limits,
            "outcome": change.outcome.value,
            "limit": change.limit,
        }
        waiting = change.limit.pending and change.outcome != Outcome.AT_ONCE
        answer = status.HTTP_202_ACCEPTED if waiting else status.HTTP_200_OK
        return Response(LimitChangeSerializer(body).data, status=answer)


urlpatterns = [
    path(
        "venues/<int:venue_id>/cards/<str:code>/limits/", CardLimitsView.as_view(), name="cashier-card-limits"
    ),
]
