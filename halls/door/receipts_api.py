"""The receipt of a self-exclusion (halls.door.services.receipts): shown as a PDF to the
door, the operator or the cashier, or printed at a till. The self-exclusion is recorded by the door's API
(POST /api/venues/<id>/self-exclusions/, which answers its id)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.urls import path
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request

from halls import access
from halls.api import HallAPIView, actor, valid
from halls.cashier.api.printed import printed_answer, till_to_print_at
from halls.door.models import SelfExclusion
from halls.door.services import receipts
from halls.errors import NotFound
from halls.models import Role
from halls.serializers import ErrorSerializer, error_responses

TAGS = ["door"]


class ReceiptPrintSerializer(serializers.Serializer[Any]):
    till = serializers.IntegerField(required=False, label=_("till"))


def _self_exclusion(request: Request, venue_id: int, pk: int, *roles: str) -> SelfExclusion:
    venue = access.venue_for(request.user, venue_id, *roles)
    found = SelfExclusion.objects.filter(venue=venue, pk=pk).first()
    if found is None:
        raise NotFound(
            gettext("No self-exclusion %(id)s in this venue.") % {"id": pk}, code="unknown_self_exclusion"
        )
    return found


class ReceiptView(HallAPIView):
    @extend_schema(
        operation_id="door_self_exclusion_receipt",
        summary="The receipt of a self-exclusion as a PDF (door, operator, cashier)",
        description="The venue, the day recorded, the term, the reference and the document's last three "
        "characters. Audited.",
        responses={(200, "application/pdf"): OpenApiTypes.BINARY, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int, pk: int) -> HttpResponse:
        found = _self_exclusion(request, venue_id, pk, Role.DOOR, Role.OPERATOR, Role.CASHIER)
        data = receipts.receipt_pdf(found=found, actor=actor(request))
        response = HttpResponse(data, content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="self-exclusion-{found.pk}.pdf"'
        return response

    @extend_schema(
        operation_id="door_self_exclusion_receipt_print",
        summary="Print the receipt of a self-exclusion at a till: its printer, or a PDF (operator, cashier)",
        description="200 with application/pdf when the till has no printer, JSON when it was sent to the "
        "printer. 404 unknown_self_exclusion, unknown_till; 409 no_open_shift; 503 printer_unreachable.",
        request=ReceiptPrintSerializer,
        responses={
            (200, "application/pdf"): OpenApiTypes.BINARY,
            **error_responses(400, 403, 404, 409),
            503: OpenApiResponse(ErrorSerializer, description="The till's printer did not answer."),
        },
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int, pk: int) -> HttpResponse:
        found = _self_exclusion(request, venue_id, pk, Role.OPERATOR, Role.CASHIER)
        data = valid(ReceiptPrintSerializer, request.data)
        till = till_to_print_at(request, found.venue_id, data.get("till"))
        result = receipts.print_receipt(found=found, till=till, actor=actor(request))
        return printed_answer(result, f"self-exclusion-{found.pk}.pdf")


urlpatterns = [
    path(
        "venues/<int:venue_id>/self-exclusions/<int:pk>/receipt/",
        ReceiptView.as_view(),
        name="api-door-self-exclusion-receipt",
    ),
]
