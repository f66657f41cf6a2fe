"""/api/cashier/venues/<venue>/payables/: prizes waiting at the cashier and their payment (cashier role).

Every Line, Bingo, accumulated prize, table seat payout and machine hand pay awarded in the venue is a
payable here. Paying one (`pay/`) takes a `method` (cash from your shift's drawer, player_card with the
card's `card` number, ticket) and an optional `idempotency_key`: 201 for the payout, 200 for a retry with
the same key (the first answer); any other attempt on a paid prize is 409 already_paid, naming when and by
whom. `receipt/` prints the receipt at a till (JSON when sent to its printer, the PDF when it has none).
Another venue's payable or card is 404.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpResponse
from django.urls import path
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access, money
from halls.api import HallAPIView, actor, valid
from halls.cashier import hooks
from halls.cashier.api.printed import printed_answer, till_to_print_at
from halls.cashier.models import (
    Payable,
    PayableKind,
    PayableState,
    PayoutMethod,
    PlayerCard,
)
from halls.cashier.services import payables
from halls.errors import InvalidInput, NotFound
from halls.models import Role, Venue
from halls.serializers import ErrorSerializer, error_responses, money_field

TAGS = ["cashier payables"]

# --- Shapes ---------------------------------------------------------------------------------------------


class PayoutSerializer(serializers.Serializer[Any]):
    """A prize's payment as a recall or a report shows it (halls.cashier.services.readmodels.payout_view)."""

    payable = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=PayableKind.choices)
    description = serializers.CharField()
    amount = money_field(money.PAYMENT_DIGITS)
    state = serializers.ChoiceField(choices=PayableState.choices, help_text="waiting or paid.")
    awarded_at = serializers.DateTimeField()
    paid_at = serializers.DateTimeField(allow_null=True)
    paid_by = serializers.CharField(help_text="The cashier who paid it; empty while it waits.")
    method = serializers.CharField(help_text="cash, player_card or ticket; empty while it waits.")
    receipt = serializers.CharField(help_text='The receipt number, "R-000123"; empty while it waits.')


class PayableSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    venue = serializers.IntegerField(source="venue_id")
    kind = serializers.ChoiceField(choices=PayableKind.choices)
    kind_label = serializers.SerializerMethodField()
    source = serializers.CharField(help_text='What awarded it: "bingo.award:41", "pool.award:7", ...')  # type: ignore[assignment]
    description = serializers.CharField(help_text='"Partida 12 · Línea · cartón A-0345" (venue\'s language).')
    amount = money_field(money.PAYMENT_DIGITS)
    state = serializers.ChoiceField(choices=PayableState.choices)
    awarded_at = serializers.DateTimeField()
    paid_at = serializers.DateTimeField(allow_null=True)
    paid_by = serializers.SerializerMethodField()
    method = serializers.CharField()
    receipt = serializers.CharField()
    ticket = serializers.SerializerMethodField(help_text="The ticket's number, for a prize paid as a ticket.")
    identification_required = serializers.SerializerMethodField(
        help_text="At or above the AML threshold: paid only with the winner's identification."
    )

    def get_identification_required(self, payable: Payable) -> bool:
        return hooks.identification_required(payable.venue_id, payable.amount)

    def get_kind_label(self, payable: Payable) -> str:
        return str(PayableKind(payable.kind).label)

    def get_paid_by(self, payable: Payable) -> str:
        return payable.paid_by.get_username() if payable.paid_by is not None else ""

    def get_ticket(self, payable: Payable) -> str:
        ticket = payables.Payout(payable, replayed=False).ticket
        return ticket.number if ticket is not None else ""


class PayRequestSerializer(serializers.Serializer[Any]):
    method = serializers.ChoiceField(
        choices=PayoutMethod.choices,
        default=PayoutMethod.CASH,
        help_text="cash from your shift's drawer, player_card (name the card) or ticket.",
    )
    card = serializers.CharField(
        max_length=40, required=False, help_text="The player card's number (method player_card)."
    )
    reference = serializers.CharField(
        max_length=120, required=False, allow_blank=True, default="", help_text="Your note, e.g. a voucher."
    )
    idempotency_key = serializers.CharField(
        max_length=payables.MAX_KEY,
        required=False,
        help_text="Optional; a retry with the same key answers the first payout (200) and pays nothing more.",
    )
    identification = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text=(
            "The winner's identification at the cage (POST /api/cage/venues/<venue>/identifications/): "
            "required at or above the AML threshold, optional below it."
        ),
    )


class ReceiptRequestSerializer(serializers.Serializer[Any]):
    till = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=2**31 - 1,
        help_text="The till to print at; left out: your open shift's till.",
    )


class ReceiptPrintedSerializer(serializers.Serializer[Any]):
    medium = serializers.CharField(help_text="printer (sent to the till's printer).")
    printer = serializers.CharField(help_text="tcp://host:port")
    sha256 = serializers.CharField()


STATES = ("waiting", "paid", "all")


class PayableQuerySerializer(serializers.Serializer[Any]):
    state = serializers.ChoiceField(choices=[(s, s) for s in STATES], default="waiting")
    limit = serializers.IntegerField(min_value=1, max_value=500, default=100)


# --- Doors ----------------------------------------------------------------------------------------------


def _venue(request: Request, venue_id: int) -> Venue:
    return access.venue_for(request.user, venue_id, Role.CASHIER)


def _payable(request: Request, venue_id: int, payable_id: int) -> Payable:
    venue = _venue(request, venue_id)
    payable = Payable.objects.select_related("paid_by").filter(venue=venue, pk=payable_id).first()
    if payable is None:
        raise NotFound(
            gettext("No prize %(payable)s to pay in this venue.") % {"payable": payable_id},
            code="unknown_payable",
        )
    return payable


def _card(venue_id: int, number: str) -> PlayerCard:
    card = PlayerCard.objects.filter(venue_id=venue_id, number=number.strip()).first()
    if card is None:
        raise NotFound(gettext("No card %(number)s in this venue.") % {"number": number}, code="unknown_card")
    return card


PAY_ERRORS = (
    "400 bad_method, card_required, card_not_expected, bad_idempotency_key; 404 unknown_payable, "
    "unknown_card; 409 already_paid (naming when and by whom), no_open_shift, shift_closed, drawer_short, "
    "card_blocked, idempotency_key_reused, identification_required (at or above the AML threshold), "
    "identification_stale; 404 unknown_identification. A refusal writes nothing."
)


class PayablesView(HallAPIView):
    @extend_schema(
        operation_id="cashier_payables_list",
        summary="Prizes of the venue at the cashier: waiting (default), paid, or all; newest first",
        parameters=[PayableQuerySerializer],
        responses={200: PayableSerializer(many=True), **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id)
        query = valid(PayableQuerySerializer, request.query_params)
        rows = Payable.objects.filter(venue=venue).select_related("paid_by")
        if query["state"] != "all":
            rows = rows.filter(state=query["state"])
        rows = rows.order_by("-awarded_at", "-pk")[: query["limit"]]
        return Response(PayableSerializer(rows, many=True).data)


class PayableView(HallAPIView):
    @extend_schema(
        operation_id="cashier_payables_get",
        summary="One prize payable: what awarded it, and its payment",
        responses={200: PayableSerializer, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int, payable_id: int) -> Response:
        return Response(PayableSerializer(_payable(request, venue_id, payable_id)).data)


class PayablePayView(HallAPIView):
    @extend_schema(
        operation_id="cashier_payables_pay",
        summary="Pay a prize: cash from your shift's drawer, to a player card, or as a ticket",
        description=f"201 for the payout, 200 for a retry with the same idempotency key. {PAY_ERRORS}",
        request=PayRequestSerializer,
        responses={
            201: PayableSerializer,
            200: OpenApiResponse(PayableSerializer, description="A retry: the first payout."),
            **error_responses(400, 403, 404, 409),
        },
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int, payable_id: int) -> Response:
        payable = _payable(request, venue_id, payable_id)
        data = valid(PayRequestSerializer, request.data)
        method = data["method"]
        number = data.get("card")
        if method == PayoutMethod.PLAYER_CARD and not number:
            raise InvalidInput(
                gettext("Name the player card to pay the prize to."), code="card_required", field="card"
            )
        card = _card(payable.venue_id, number) if number else None
        payout = payables.pay_payable(
            payable=payable,
            method=method,
            actor=actor(request),
            key=str(data.get("idempotency_key") or uuid.uuid4()),
            card=card,
            reference=data["reference"],
            identification=data.get("identification"),
        )
        return Response(
            PayableSerializer(payout.payable).data,
            status=status.HTTP_200_OK if payout.replayed else status.HTTP_201_CREATED,
        )


class PayableReceiptView(HallAPIView):
    @extend_schema(
        operation_id="cashier_payables_receipt",
        summary="Print a paid prize's receipt at a till: its printer, or a PDF when it has none",
        description=(
            "200 with application/pdf when the till has no printer, JSON when it was sent to the printer. "
            "A later print is marked DUPLICATE. 404 unknown_payable, unknown_till; 409 not_paid, "
            "no_open_shift, printer_address_invalid; 503 printer_unreachable."
        ),
        request=ReceiptRequestSerializer,
        responses={
            (200, "application/json"): ReceiptPrintedSerializer,
            (200, "application/pdf"): OpenApiTypes.BINARY,
            **error_responses(400, 403, 404, 409),
            503: OpenApiResponse(ErrorSerializer, description="The till's printer did not answer."),
        },
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int, payable_id: int) -> HttpResponse:
        payable = _payable(request, venue_id, payable_id)
        data = valid(ReceiptRequestSerializer, request.data)
        till = till_to_print_at(request, payable.venue_id, data.get("till"))
        result = payables.print_receipt(payable=payable, till=till, actor=actor(request))
        return printed_answer(result, f"receipt-{payable.receipt}.pdf")


PAYABLE = "venues/<int:venue_id>/payables/<int:payable_id>/"

urlpatterns = [
    path("venues/<int:venue_id>/payables/", PayablesView.as_view(), name="cashier-payables"),
    path(PAYABLE, PayableView.as_view(), name="cashier-payable"),
    path(PAYABLE + "pay/", PayablePayView.as_view(), name="cashier-payable-pay"),
    path(PAYABLE + "receipt/", PayableReceiptView.as_view(), name="cashier-payable-receipt"),
]
