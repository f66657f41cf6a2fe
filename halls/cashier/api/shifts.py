"""/api/cashier/ tills and shifts: the tills of your venues, open a shift, your current shift with its
running totals, close it with the counted cash-up (arqueo), a shift's report.

Cashier role (an operator holds it), venue-scoped: another venue's till or shift answers 404.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction
from django.http import HttpResponse
from django.urls import path, reverse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access, money
from halls.api import HallAPIView, actor, valid
from halls.api_errors import MAX_ID
from halls.cashier.models import CashDevice, Shift, ShiftState, Till
from halls.cashier.services import ledger as books
from halls.cashier.services import printing, shifts, tickets
from halls.cashier.services.shift_report import ShiftReport, shift_report
from halls.cashier.services.shift_report import document as report_document
from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import Role
from halls.serializers import ErrorSerializer, error_responses, money_field

AMOUNT = money.PAYMENT_DIGITS


def _amount(**kwargs: Any) -> serializers.DecimalField:
    """A counted amount: "12.50", zero or more, in cents."""
    return money_field(AMOUNT, min_value=Decimal(0), **kwargs)


# --- Serializers ----------------------------------------------------------------------------------------


class TillQuerySerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(required=False, min_value=1, help_text="Only this venue's tills.")


class TillSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    venue = serializers.IntegerField(source="venue_id")
    name = serializers.CharField()
    printer = serializers.CharField(help_text='"tcp://host:9100" (ESC/POS), or empty: receipts are PDFs.')
    active = serializers.BooleanField(help_text="In service: shifts open on it.")
    open_shift = serializers.IntegerField(
        allow_null=True, help_text="The shift open on it now, if any.", source="open_shift_id"
    )
    open_shift_cashier = serializers.CharField(allow_null=True, help_text="Its cashier's username.")


class ShiftOpenSerializer(serializers.Serializer[Any]):
    till = serializers.IntegerField(min_value=1, help_text="The till (GET /api/cashier/tills/).")
    float = _amount(help_text='The counted opening float of cash, e.g. "150.00" (zero or more).')


class CountedSerializer(serializers.Serializer[Any]):
    cash = _amount(help_text='The cash counted in the drawer, e.g. "512.30".')
    bank_card = _amount(help_text="The bank card slips' total, as the card terminal's closing shows it.")


class WitnessSerializer(serializers.Serializer[Any]):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=200, trim_whitespace=False, style={"input_type": "password"})


class ShiftCloseSerializer(serializers.Serializer[Any]):
    counted = CountedSerializer(help_text="What was counted, per means of payment.")
    witness = WitnessSerializer(
        required=False,
        allow_null=True,
        help_text="The second person who signs a cash-up that differs from what is expected: another "
        "cashier or operator of the venue (not the shift's cashier), with their own password.",
    )
    note = serializers.CharField(required=False, allow_blank=True, max_length=shifts.NOTE_LENGTH, default="")


class ByMeansSerializer(serializers.Serializer[Any]):
    cash = money_field(AMOUNT + 1)
    bank_card = money_field(AMOUNT + 1)


class KindTotalSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField(
        help_text="The ledger transaction kind: float, sale, sale_return, card_cash_in, card_cash_out, "
        "prize_payout, ticket_issue, ticket_redeem, device_emptied, over_short, cash_up..."
    )
    kind_label = serializers.CharField(source="label", help_text="The kind, in the request's language.")
    count = serializers.IntegerField()
    amount = money_field(AMOUNT + 4, help_text="The transactions' amounts added.")
    drawer = ByMeansSerializer(help_text="What they moved in the drawers: > 0 in, < 0 out.")


class PrizeTotalSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField(help_text="line, bingo, accumulated, table, machine.")
    kind_label = serializers.CharField(source="label")
    method = serializers.CharField(help_text="cash, player_card, ticket.")
    method_label = serializers.CharField()
    count = serializers.IntegerField()
    amount = money_field(AMOUNT + 4)


class ShiftSerializer(serializers.Serializer[Any]):
    """A shift and its figures (halls.cashier.services.shift_report)."""

    id = serializers.IntegerField(source="shift.pk")
    venue = serializers.IntegerField(source="shift.venue_id")
    till = serializers.IntegerField(source="shift.till_id")
    till_name = serializers.CharField(source="shift.till.name")
    cashier = serializers.CharField(source="shift.cashier.username")
    state = serializers.ChoiceField(choices=ShiftState.choices, source="shift.state")
    opened_at = serializers.DateTimeField(source="shift.opened_at")
    closed_at = serializers.DateTimeField(source="shift.closed_at", allow_null=True)
    float = money_field(AMOUNT, source="shift.float_amount")
    expected = ByMeansSerializer(
        help_text="Per means: what the drawer holds now (open), or what the cash-up expected (closed)."
    )
    counted = ByMeansSerializer(allow_null=True, help_text="The cash-up's count; null while open.")
    differences = ByMeansSerializer(allow_null=True, help_text="counted - expected: > 0 over, < 0 short.")
    difference = money_field(AMOUNT + 1, allow_null=True, help_text="The differences added; null while open.")
    witness = serializers.CharField(
        source="shift.witness.username", allow_null=True, default=None, help_text="Who signed the difference."
    )
    note = serializers.CharField(source="shift.note")
    transactions = serializers.IntegerField(help_text="The ledger transactions of the shift.")
    totals = KindTotalSerializer(
        many=True,
        help_text="Per kind of transaction, the float first, the cash-up (over_short, cash_up) last.",
    )
    prizes = PrizeTotalSerializer(many=True, help_text="Prizes paid at this till, by kind and method.")
    report_url = serializers.SerializerMethodField(help_text="The printable shift report page.")

    def get_report_url(self, report: ShiftReport) -> str:
        return reverse("cashier:shift-report", args=[report.shift.pk])


# --- Lookups --------------------------------------------------------------------------------------------


def _till(request: Request, till_id: int) -> Till:
    return access.get_for_user(Till.objects.all(), request.user, Role.CASHIER, label="till", pk=till_id)


def _shift(request: Request, shift_id: int) -> Shift:
    return access.get_for_user(
        Shift.objects.select_related("till", "cashier", "witness"),
        request.user,
        Role.CASHIER,
        label="shift",
        pk=shift_id,
    )


def _report(shift: Shift) -> Any:
    report: ShiftReport = shift_report(shift)
    return ShiftSerializer(report).data


SHIFT_ERRORS = "404 unknown_shift (also another venue's)"


# --- Views ----------------------------------------------------------------------------------------------


class TillListView(HallAPIView):
    @extend_schema(
        operation_id="cashier_tills_list",
        summary="The tills of your venues, with the shift open on each (cashier)",
        parameters=[TillQuerySerializer],
        responses={200: TillSerializer(many=True), **error_responses(400, 403, 404)},
        tags=["cashier"],
    )
    def get(self, request: Request) -> Response:
        query = valid(TillQuerySerializer, request.query_params)
        venues = access.venue_ids_with(request.user, Role.CASHIER)  # one query, however many venues
        if "venue" in query:
            access.require_role(request.user, query["venue"], Role.CASHIER)
            venues = [query["venue"]]
        tills = list(Till.objects.filter(venue_id__in=venues).order_by("venue_id", "name"))
        open_shifts = {
            s.till_id: s
            for s in Shift.objects.filter(till__in=tills, state=ShiftState.OPEN).select_related("cashier")
        }
        for till in tills:
            shift = open_shifts.get(till.pk)
            till.open_shift_id = shift.pk if shift else None  # type: ignore[attr-defined]
            till.open_shift_cashier = shift.cashier.get_username() if shift else None  # type: ignore[attr-defined]
        return Response(TillSerializer(tills, many=True).data)


class ShiftOpenView(HallAPIView):
    @extend_schema(
        operation_id="cashier_shifts_open",
        summary="Open your shift on a till with a counted float (cashier)",
        description="201 with the new shift. A retry (you already hold an open shift on that till with "
        "that float) answers 200 with it. 400 invalid (the float: negative, not in cents, not a number); "
        "404 unknown_till (also another venue's); 409 till_inactive, shift_already_open (the till or you "
        "already have an open shift).",
        request=ShiftOpenSerializer,
        responses={
            201: ShiftSerializer,
            200: OpenApiResponse(ShiftSerializer, description="A retry: your shift already open there."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["cashier"],
    )
    def post(self, request: Request) -> Response:
        data = valid(ShiftOpenSerializer, request.data)
        till = _till(request, data["till"])
        try:
            shift = shifts.open_shift(
                till=till, cashier=actor(request), float_amount=data["float"], actor=actor(request)
            )
        except Conflict as exc:
            mine = Shift.objects.filter(
                till=till, cashier=actor(request), state=ShiftState.OPEN, float_amount=data["float"]
            ).first()
            if exc.code != "shift_already_open" or mine is None:
                raise
            return Response(_report(mine), status=status.HTTP_200_OK)
        return Response(_report(shift), status=status.HTTP_201_CREATED)


class ShiftCurrentQuerySerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,  # past what a key holds: no such venue, said as a 400 (SQLite would overflow)
        help_text="The venue (needed only if you work in several).",
    )


class ShiftCurrentView(HallAPIView):
    @extend_schema(
        operation_id="cashier_shifts_current",
        summary="Your open shift and its running totals (cashier)",
        description="What the till page shows: per means what the drawers should hold now (expected), and "
        "the shift's transactions per kind. 404 no_open_shift when you have none (open one with POST "
        "/api/cashier/shifts/); 400 venue_required when you have open shifts in several venues.",
        parameters=[ShiftCurrentQuerySerializer],
        responses={200: ShiftSerializer, **error_responses(400, 403, 404)},
        tags=["cashier"],
    )
    def get(self, request: Request) -> Response:
        query = valid(ShiftCurrentQuerySerializer, request.query_params)
        mine = Shift.objects.filter(cashier=actor(request), state=ShiftState.OPEN)
        if "venue" in query:
            access.require_role(request.user, query["venue"], Role.CASHIER)
            mine = mine.filter(venue_id=query["venue"])
        found = list(mine.select_related("till", "cashier")[:2])
        if not found:
            raise NotFound(_("You have no open shift: open one at a till first."), code="no_open_shift")
        if len(found) > 1:
            raise InvalidInput(
                _("You have open shifts in several venues: say which (?venue=)."), code="venue_required"
            )
        access.require_role(request.user, found[0].venue_id, Role.CASHIER)
        return Response(_report(found[0]))


class ShiftLastClosedView(HallAPIView):
    @extend_schema(
        operation_id="cashier_shifts_last_closed",
        summary="Your last closed shift: its cash-up and report, after a reload of the till (cashier)",
        description="404 no_closed_shift when you have closed none (in that venue); 400 venue_required when "
        "you work in several venues and did not say which.",
        parameters=[ShiftCurrentQuerySerializer],
        responses={200: ShiftSerializer, **error_responses(400, 403, 404)},
        tags=["cashier"],
    )
    def get(self, request: Request) -> Response:
        query = valid(ShiftCurrentQuerySerializer, request.query_params)
        mine = Shift.objects.filter(cashier=actor(request), state=ShiftState.CLOSED)
        if "venue" in query:
            access.require_role(request.user, query["venue"], Role.CASHIER)
            mine = mine.filter(venue_id=query["venue"])
        elif mine.values("venue_id").distinct().count() > 1:
            raise InvalidInput(
                _("You have shifts in several venues: say which (?venue=)."), code="venue_required"
            )
        last = mine.select_related("till", "cashier", "witness").order_by("-closed_at", "-pk").first()
        if last is None:
            raise NotFound(_("You have closed no shift yet."), code="no_closed_shift")
        access.require_role(request.user, last.venue_id, Role.CASHIER)
        return Response(_report(last))


class ShiftTicketSerializer(serializers.Serializer[Any]):
    at = serializers.DateTimeField()
    number = serializers.CharField(help_text="The ticket's validation number.")
    kind = serializers.ChoiceField(choices=[("issued", "issued"), ("redeemed", "redeemed")])
    means = serializers.CharField(
        help_text="issued: cash, bank_card, card (from a player card) or prize (a prize paid as a ticket); "
        "redeemed: cash or card."
    )
    amount = money_field(AMOUNT)


class ShiftTicketsView(HallAPIView):
    @extend_schema(
        operation_id="cashier_shifts_tickets",
        summary="The tickets issued and redeemed in a shift, newest first (cashier)",
        description=SHIFT_ERRORS + ".",
        responses={200: ShiftTicketSerializer(many=True), **error_responses(403, 404)},
        tags=["cashier"],
    )
    def get(self, request: Request, shift_id: int) -> Response:
        shift = _shift(request, shift_id)
        return Response(ShiftTicketSerializer(tickets.of_shift(shift), many=True).data)


class ShiftDetailView(HallAPIView):
    @extend_schema(
        operation_id="cashier_shifts_detail",
        summary="A shift and its figures: the shift report's data (cashier)",
        description=SHIFT_ERRORS + ".",
        responses={200: ShiftSerializer, **error_responses(403, 404)},
        tags=["cashier"],
    )
    def get(self, request: Request, shift_id: int) -> Response:
        return Response(_report(_shift(request, shift_id)))


class ShiftCloseView(HallAPIView):
    @extend_schema(
        operation_id="cashier_shifts_close",
        summary="Close a shift with the counted cash-up (arqueo) (cashier)",
        description="Per means of payment, the counted amount against what the drawer should hold; a "
        "difference (over or short) is posted to the house and needs a witness who signs with their "
        "password. Every drawer ends at zero (its counted money back to the house). 400 invalid (an "
        "amount negative, not in cents, not a number: the field is named), bad_witness; 403 not_your_shift "
        f"(only its cashier or an operator); {SHIFT_ERRORS}; 409 witness_required, shift_closed.",
        request=ShiftCloseSerializer,
        responses={200: ShiftSerializer, **error_responses(400, 403, 404, 409)},
        tags=["cashier"],
    )
    def post(self, request: Request, shift_id: int) -> Response:
        shift = _shift(request, shift_id)
        data = valid(ShiftCloseSerializer, request.data)
        witness = data.get("witness") or {}
        closed = shifts.close_shift(
            shift=shift,
            counted=dict(data["counted"]),
            actor=actor(request),
            witness=witness.get("username"),
            witness_password=witness.get("password"),
            note=data.get("note", ""),
            request=request._request,
        )
        return Response(_report(closed))


class PrintedSerializer(serializers.Serializer[Any]):
    medium = serializers.ChoiceField(choices=["printer"], help_text="Sent to the till's printer.")
    printer = serializers.CharField(help_text="The printer's address.")
    size = serializers.IntegerField(help_text="Bytes sent.")
    sha256 = serializers.CharField()


class ShiftPrintView(HallAPIView):
    @extend_schema(
        operation_id="cashier_shifts_print",
        summary="Print the shift report at the shift's till (cashier)",
        description="On the till's ESC/POS printer when it has one (200 JSON: what was sent), else the "
        "report as a PDF (200 application/pdf) for the browser to show and print. Every print is audited "
        f"(cashier.printed). {SHIFT_ERRORS}; 409 printer_address_invalid; 503 printer_unreachable.",
        request=None,
        responses={
            (200, "application/json"): PrintedSerializer,
            (200, "application/pdf"): OpenApiResponse(
                OpenApiTypes.BINARY, description="The report as a PDF (the till has no printer)."
            ),
            **error_responses(403, 404, 409),
            503: OpenApiResponse(ErrorSerializer, description="printer_unreachable: nothing was printed."),
        },
        tags=["cashier"],
    )
    def post(self, request: Request, shift_id: int) -> HttpResponse:
        shift = _shift(request, shift_id)
        printed = printing.print_document(
            till=shift.till,
            document=report_document(shift_report(shift)),
            actor=actor(request),
            subject=shift,
        )
        if printed.pdf is not None:
            response = HttpResponse(printed.pdf, content_type="application/pdf")
            response["Content-Disposition"] = f'inline; filename="shift-{shift.pk}.pdf"'
            return response
        return Response(
            {
                "medium": printed.medium,
                "printer": printed.printer,
                "size": printed.size,
                "sha256": printed.sha256,
            }
        )


class DeviceEmptySerializer(serializers.Serializer[Any]):
    idempotency_key = serializers.CharField(
        max_length=80, help_text="Yours, unique per collection: a retry answers the first (200)."
    )
    amount = money_field(
        AMOUNT,
        min_value=money.CENT,
        required=False,
        help_text="What was taken out of the stacker; all it holds when omitted.",
    )


class DeviceEmptiedSerializer(serializers.Serializer[Any]):
    device = serializers.IntegerField()
    shift = serializers.IntegerField()
    transaction = serializers.IntegerField(help_text="The ledger transaction (device_emptied).")
    amount = money_field(AMOUNT)
    drawer_cash = money_field(AMOUNT, help_text="The shift's cash drawer now.")


class DeviceEmptyView(HallAPIView):
    @extend_schema(
        operation_id="cashier_devices_empty",
        summary="Collect a cash device's stacker into your shift's cash drawer (cashier)",
        description="201 for a new collection, 200 for a retry under the same idempotency key. 400 invalid; "
        "404 unknown_cash_device (also another venue's); 409 no_open_shift, nothing_to_collect, "
        "insufficient_balance (more than the device holds), idempotency_key_reused.",
        request=DeviceEmptySerializer,
        responses={
            201: DeviceEmptiedSerializer,
            200: OpenApiResponse(DeviceEmptiedSerializer, description="A retry: the first collection."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["cashier"],
    )
    def post(self, request: Request, device_id: int) -> Response:
        device = access.get_for_user(
            CashDevice.objects.all(), request.user, Role.CASHIER, label="cash device", pk=device_id
        )
        data = valid(DeviceEmptySerializer, request.data)
        with transaction.atomic():
            shift = shifts.open_shift_of(venue_id=device.venue_id, cashier=actor(request))
            posted = shifts.empty_device(
                shift=shift,
                device=device,
                actor=actor(request),
                key=f"{actor(request).pk}:{data['idempotency_key']}",
                amount=data.get("amount"),
            )
            drawer_cash = books.drawer(shift).balance
        amount = sum((leg.amount for leg in posted.transaction.legs.all() if leg.amount > 0), Decimal(0))
        body = {
            "device": device.pk,
            "shift": shift.pk,
            "transaction": posted.transaction.pk,
            "amount": amount,
            "drawer_cash": drawer_cash,
        }
        code = status.HTTP_200_OK if posted.replayed else status.HTTP_201_CREATED
        return Response(DeviceEmptiedSerializer(body).data, status=code)


urlpatterns = [
    path("tills/", TillListView.as_view(), name="cashier-tills"),
    path("shifts/", ShiftOpenView.as_view(), name="cashier-shifts"),
    path("shifts/current/", ShiftCurrentView.as_view(), name="cashier-shift-current"),
    path("shifts/last-closed/", ShiftLastClosedView.as_view(), name="cashier-shift-last-closed"),
    path("shifts/<int:shift_id>/", ShiftDetailView.as_view(), name="cashier-shift"),
    path("shifts/<int:shift_id>/tickets/", ShiftTicketsView.as_view(), name="cashier-shift-tickets"),
    path("shifts/<int:shift_id>/close/", ShiftCloseView.as_view(), name="cashier-shift-close"),
    path("shifts/<int:shift_id>/report/print/", ShiftPrintView.as_view(), name="cashier-shift-print"),
    path("devices/<int:device_id>/empty/", DeviceEmptyView.as_view(), name="cashier-device-empty"),
]
