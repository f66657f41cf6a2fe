"""/api/cashier/venues/<venue>/tickets/: TITO tickets at the cashier (cashier role), and the terminals'
ticket-out / ticket-in device messages (/api/cashier/device/ticket-out/, /api/cashier/device/ticket-in/).

A ticket in a path is its 18-digit validation number, with or without the printed dashes; a mistyped
number answers 400 bad_ticket_number, another venue's ticket 404 unknown_ticket. Money moves take an
optional `idempotency_key` (a device: its `seq`): 201 for a new move, 200 for a retry (the first answer).
Amounts are decimal strings ("12.50"); zero, negative or not whole cents answers 400 bad_amount naming
the field.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpResponse
from django.urls import path
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from halls import access
from halls.api import HallAPIView, actor, valid
from halls.cashier import tito
from halls.cashier.api.devices import CashDeviceAuthentication, IsCashDevice
from halls.cashier.api.printed import printed_answer, till_to_print_at
from halls.cashier.models import CashDevice, Means, Ticket, TicketEvent
from halls.cashier.printing.document import Symbology
from halls.cashier.services import tickets
from halls.errors import InvalidInput
from halls.models import Role, Venue
from halls.serializers import ErrorSerializer, error_responses

# --- Shapes ---------------------------------------------------------------------------------------------


class TicketEventSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField(help_text="issued, printed, reprinted, redeemed, refused or expired.")
    at = serializers.DateTimeField()
    actor = serializers.CharField(source="actor_label", help_text="The cashier, the terminal or 'beat'.")
    device = serializers.CharField(help_text="The till's or the terminal's name.")
    reason = serializers.CharField(help_text="A refused redemption's error code.")
    detail = serializers.SerializerMethodField(help_text="A refusal's message; where the money went.")

    def get_detail(self, event: TicketEvent) -> dict[str, str]:
        return {str(k): str(v) for k, v in event.data.items()}


class TicketBarcodeSerializer(serializers.Serializer[Any]):
    symbology = serializers.CharField(help_text="ITF (Interleaved 2 of 5).")
    value = serializers.CharField(help_text="The validation number's 18 digits.")


class TicketSerializer(serializers.Serializer[Any]):
    number = serializers.CharField(help_text="18 digits, the last a Luhn check digit.")
    printed = serializers.SerializerMethodField(help_text='As printed: "12-3456-7890-1234-5678".')
    barcode = serializers.SerializerMethodField()
    venue = serializers.IntegerField(source="venue_id")
    amount = serializers.SerializerMethodField(help_text="A decimal string, '20.00'.")
    state = serializers.CharField(help_text="issued, redeemed or expired.")
    issued_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    issued_by = serializers.CharField(help_text="The till or terminal that issued it.")
    closed_at = serializers.DateTimeField(allow_null=True, help_text="When it was redeemed or expired.")

    def get_printed(self, ticket: Ticket) -> str:
        return tito.grouped(ticket.number)

    @extend_schema_field(TicketBarcodeSerializer)
    def get_barcode(self, ticket: Ticket) -> dict[str, str]:
        return {"symbology": Symbology.ITF.value, "value": ticket.number}

    def get_amount(self, ticket: Ticket) -> str:
        return str(ticket.amount)


class TicketLifeSerializer(TicketSerializer):
    events = serializers.SerializerMethodField(help_text="The ticket's life, oldest first.")

    @extend_schema_field(TicketEventSerializer(many=True))
    def get_events(self, ticket: Ticket) -> list[dict[str, Any]]:
        return list(TicketEventSerializer(tickets.life(ticket), many=True).data)


KEY_HELP = "Optional; a retry with the same key answers the first result (200) and moves nothing."
FUNDED_BY = [("cash", "cash"), ("bank_card", "bank_card"), ("card", "card")]


class TicketIssueSerializer(serializers.Serializer[Any]):
    funded_by = serializers.ChoiceField(
        choices=FUNDED_BY,
        default="cash",
        help_text="cash or bank_card paid in at the till, or card: a player card's balance.",
    )
    amount = serializers.CharField(
        max_length=40,
        required=False,
        help_text="Decimal string above 0 in whole cents; with funded_by card, left out: the whole balance.",
    )
    card = serializers.CharField(
        max_length=40, required=False, help_text="The player card's number (funded_by card)."
    )
    idempotency_key = serializers.CharField(max_length=80, required=False, help_text=KEY_HELP)


class TicketRedeemSerializer(serializers.Serializer[Any]):
    into = serializers.ChoiceField(
        choices=[("cash", "cash"), ("card", "card")],
        default="cash",
        help_text="cash from the shift's drawer, or card: loaded into a player card.",
    )
    card = serializers.CharField(
        max_length=40, required=False, help_text="The player card's number (into card)."
    )
    idempotency_key = serializers.CharField(max_length=80, required=False, help_text=KEY_HELP)
    identification = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="The bearer's identification at the cage (in cash, at or above the AML threshold).",
    )


class TicketPrintSerializer(serializers.Serializer[Any]):
    till = serializers.IntegerField(
        required=False, min_value=1, help_text="The till to print at; left out: your open shift's till."
    )


class TicketPrintedSerializer(serializers.Serializer[Any]):
    medium = serializers.CharField(help_text="printer (sent to the till's printer).")
    printer = serializers.CharField(help_text="tcp://host:port")
    reprint = serializers.BooleanField(help_text="A duplicate: the ticket was printed before.")
    sha256 = serializers.CharField()


class TicketOutSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField(min_value=0, max_value=2**63 - 1, help_text="The device's message number.")
    card = serializers.CharField(max_length=40, help_text="The inserted player card's number.")
    amount = serializers.CharField(
        max_length=40, required=False, help_text="Decimal string; left out: the card's whole balance."
    )


class TicketInSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField(min_value=0, max_value=2**63 - 1, help_text="The device's message number.")
    number = serializers.CharField(max_length=40, help_text="The scanned validation number.")
    card = serializers.CharField(max_length=40, help_text="The inserted player card's number.")


class DeviceTicketSerializer(serializers.Serializer[Any]):
    ticket = TicketSerializer()
    card_balance = serializers.CharField(help_text="The inserted card's balance now.")


# --- Lookups --------------------------------------------------------------------------------------------


def _venue(request: Request, venue_id: int) -> Venue:
    return access.venue_for(request.user, venue_id, Role.CASHIER)


def _ticket(request: Request, venue_id: int, number: str) -> Ticket:
    venue = _venue(request, venue_id)
    return tickets.find([venue.pk], number)


def _key(data: dict[str, Any]) -> str:
    return str(data.get("idempotency_key") or uuid.uuid4())


def _answer(ticket: Ticket, replayed: bool) -> Response:
    return Response(
        TicketLifeSerializer(ticket).data, status=status.HTTP_200_OK if replayed else status.HTTP_201_CREATED
    )


def _required(field: str, message: str) -> InvalidInput:
    return InvalidInput(message, code="required", field=field)


TICKET = "venues/<int:venue_id>/tickets/<str:number>/"
ISSUE_ERRORS = (
    "400 bad_amount, required, invalid; 404 unknown_venue, unknown_card; 409 no_open_shift, card_blocked, "
    "insufficient_balance, idempotency_key_reused, ticket_above_maximum (the venue's maximum ticket value, "
    "in `maximum`)."
)
REDEEM_ERRORS = (
    "400 bad_ticket_number, required; 404 unknown_ticket, unknown_card; 409 ticket_redeemed (naming when "
    "and where), ticket_expired (naming when), drawer_short, card_blocked, no_open_shift, "
    "idempotency_key_reused, identification_required (in cash at or above the AML threshold), "
    "identification_stale; 404 unknown_identification. A refusal writes nothing but itself into the "
    "ticket's life."
)


# --- The cashier ----------------------------------------------------------------------------------------


class TicketsView(HallAPIView):
    @extend_schema(
        operation_id="cashier_tickets_issue",
        summary="Issue a ticket for money paid in or from a player card's balance (cashier)",
        description=f"201 for a new ticket, 200 for a retry with the same idempotency key. {ISSUE_ERRORS}",
        request=TicketIssueSerializer,
        responses={
            201: TicketLifeSerializer,
            200: OpenApiResponse(TicketLifeSerializer, description="A retry: the ticket already issued."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["cashier tickets"],
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id)
        data = valid(TicketIssueSerializer, request.data)
        if data["funded_by"] == "card":
            if not data.get("card"):
                raise _required("card", gettext("card: required to issue a ticket from a card."))
            amount = tickets.checked_amount(data["amount"]) if "amount" in data else None
            issued = tickets.issue_from_card(
                venue_id=venue.pk,
                card_number=data["card"],
                amount=amount,
                key=_key(data),
                actor=actor(request),
            )
        else:
            if "amount" not in data:
                raise _required("amount", gettext("amount: required to issue a ticket for money paid in."))
            issued = tickets.issue_for_payment(
                venue_id=venue.pk,
                amount=tickets.checked_amount(data["amount"]),
                means=Means(data["funded_by"]),
                key=_key(data),
                actor=actor(request),
            )
        return _answer(issued.ticket, issued.replayed)


class TicketView(HallAPIView):
    @extend_schema(
        operation_id="cashier_tickets_read",
        summary="A ticket by its validation number: state, amount, expiry and its life (cashier)",
        description="400 bad_ticket_number; 404 unknown_venue, unknown_ticket (also another venue's).",
        responses={200: TicketLifeSerializer, **error_responses(400, 403, 404)},
        tags=["cashier tickets"],
    )
    def get(self, request: Request, venue_id: int, number: str) -> Response:
        return Response(TicketLifeSerializer(_ticket(request, venue_id, number)).data)


class TicketRedeemView(HallAPIView):
    @extend_schema(
        operation_id="cashier_tickets_redeem",
        summary="Redeem a ticket once: cash from the drawer, or into a player card (cashier)",
        description=f"201 redeemed now, 200 for a retry with the same idempotency key. {REDEEM_ERRORS}",
        request=TicketRedeemSerializer,
        responses={
            201: TicketLifeSerializer,
            200: OpenApiResponse(TicketLifeSerializer, description="A retry: the redemption already made."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["cashier tickets"],
    )
    def post(self, request: Request, venue_id: int, number: str) -> Response:
        venue = _venue(request, venue_id)
        data = valid(TicketRedeemSerializer, request.data)
        if data["into"] == "card":
            if not data.get("card"):
                raise _required("card", gettext("card: required to redeem a ticket into a card."))
            redeemed = tickets.redeem_into_card(
                venue_id=venue.pk,
                number=number,
                card_number=data["card"],
                key=_key(data),
                actor=actor(request),
            )
        else:
            redeemed = tickets.redeem_for_cash(
                venue_id=venue.pk,
                number=number,
                key=_key(data),
                actor=actor(request),
                identification=data.get("identification"),
            )
        return _answer(redeemed.ticket, redeemed.replayed)


class TicketPrintView(HallAPIView):
    @extend_schema(
        operation_id="cashier_tickets_print",
        summary="Print a ticket at a till: its printer, or a PDF when it has none; later prints are reprints",
        description=(
            "The first print is the original; every later one is marked as a reprint (DUPLICADO) and written "
            "into the ticket's life. 200 with application/pdf when the till has no printer, JSON when it was "
            "sent to the printer. 404 unknown_ticket, unknown_till; 409 ticket_redeemed, ticket_expired, "
            "no_open_shift, printer_address_invalid; 503 printer_unreachable."
        ),
        request=TicketPrintSerializer,
        responses={
            (200, "application/json"): TicketPrintedSerializer,
            (200, "application/pdf"): OpenApiTypes.BINARY,
            **error_responses(400, 403, 404, 409),
            503: OpenApiResponse(ErrorSerializer, description="The till's printer did not answer."),
        },
        tags=["cashier tickets"],
    )
    def post(self, request: Request, venue_id: int, number: str) -> HttpResponse:
        ticket = _ticket(request, venue_id, number)
        data = valid(TicketPrintSerializer, request.data)
        till = till_to_print_at(request, ticket.venue_id, data.get("till"))
        printed = tickets.print_ticket(ticket=ticket, till=till, actor=actor(request))
        name = f"ticket-{ticket.number}{'-reprint' if printed.reprint else ''}.pdf"
        return printed_answer(printed.result, name, reprint=printed.reprint)


# --- The terminals (device messages) --------------------------------------------------------------------


class DeviceView(APIView):
    """A cash device's door: 'Authorization: CashDevice <id>:<token>' (halls.cashier.api.devices)."""

    authentication_classes = [CashDeviceAuthentication]
    permission_classes = [IsCashDevice]


def _device_answer(ticket: Ticket, card: str, device: CashDevice, replayed: bool) -> Response:
    balance = tickets.card_balance(device.venue_id, card)
    body = {"ticket": TicketSerializer(ticket).data, "card_balance": str(balance)}
    return Response(body, status=status.HTTP_200_OK if replayed else status.HTTP_201_CREATED)


class TicketOutView(DeviceView):
    @extend_schema(
        operation_id="cashier_device_ticket_out",
        summary="A terminal's cash-out: the inserted card's balance onto a ticket it prints (device)",
        description=(
            "Authenticate with 'Authorization: CashDevice <id>:<token>'. 201 for a new ticket, 200 for the "
            "same seq again (the same ticket); the seq of another message is 409 seq_reused. 400 bad_amount, "
            "bad_card_number; 403 device_inactive; 404 unknown_card; 409 card_blocked, insufficient_balance, "
            "ticket_above_maximum (the venue's maximum ticket value, in `maximum`: nothing moved)."
        ),
        request=TicketOutSerializer,
        responses={
            201: DeviceTicketSerializer,
            200: OpenApiResponse(DeviceTicketSerializer, description="A retry: the ticket already issued."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["cashier devices"],
    )
    def post(self, request: Request) -> Response:
        device = request.auth
        assert isinstance(device, CashDevice)
        data = valid(TicketOutSerializer, request.data)
        amount = tickets.checked_amount(data["amount"]) if "amount" in data else None
        issued = tickets.cash_out_to_ticket(
            device=device, card_number=data["card"], seq=data["seq"], amount=amount
        )
        return _device_answer(issued.ticket, data["card"], device, issued.replayed)


class TicketInView(DeviceView):
    @extend_schema(
        operation_id="cashier_device_ticket_in",
        summary="A terminal's ticket-in: a scanned ticket into the inserted card (device)",
        description=(
            "Authenticate with 'Authorization: CashDevice <id>:<token>'. 201 redeemed now, 200 for the same "
            f"seq again; the seq of another message is 409 seq_reused. {REDEEM_ERRORS} 409 ticket_cage_only: "
            "the ticket is above the venue's cage figure (in `cage_above`), paid only at a cashier's till."
        ),
        request=TicketInSerializer,
        responses={
            201: DeviceTicketSerializer,
            200: OpenApiResponse(DeviceTicketSerializer, description="A retry: the redemption already made."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["cashier devices"],
    )
    def post(self, request: Request) -> Response:
        device = request.auth
        assert isinstance(device, CashDevice)
        data = valid(TicketInSerializer, request.data)
        redeemed = tickets.redeem_at_device(
            device=device, number=data["number"], card_number=data["card"], seq=data["seq"]
        )
        return _device_answer(redeemed.ticket, data["card"], device, redeemed.replayed)


urlpatterns = [
    path("venues/<int:venue_id>/tickets/", TicketsView.as_view(), name="cashier-tickets"),
    path(TICKET, TicketView.as_view(), name="cashier-ticket"),
    path(TICKET + "redeem/", TicketRedeemView.as_view(), name="cashier-ticket-redeem"),
    path(TICKET + "print/", TicketPrintView.as_view(), name="cashier-ticket-print"),
    path("device/ticket-out/", TicketOutView.as_view(), name="cashier-device-ticket-out"),
    path("device/ticket-in/", TicketInView.as_view(), name="cashier-device-ticket-in"),
]
