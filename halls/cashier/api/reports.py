"""The cashier's reports: per shift, per cashier over a range of days, per day (JSON; the day also as CSV).

Who may read what: a cashier reads the reports of their own shifts and their own cashier report; the
operator (who holds every role of their venue) reads every shift's, every cashier's and the day's. The
day report shows the whole hall's money: operator only. Another venue's shift or venue answers 404.
"""

from __future__ import annotations

import csv
import io
from datetime import date
from typing import Any

from django.contrib.auth.models import User
from django.http import HttpResponse
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access
from halls.api import HallAPIView, actor, valid
from halls.cashier.models import Shift
from halls.cashier.services import reports
from halls.errors import NotFound, PermissionDenied
from halls.models import Role, StaffRole, Venue
from halls.serializers import error_responses

TAGS = ["cashier"]
MAX_ID = 2**63 - 1
FIRST_DAY, LAST_DAY = date(2000, 1, 1), date(2999, 12, 31)


def _day(value: date) -> None:
    if not FIRST_DAY <= value <= LAST_DAY:
        raise serializers.ValidationError(_("A day between 2000 and 2999."))


class DayQuerySerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    day = serializers.DateField(validators=[_day])


class CashierQuerySerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    cashier = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, required=False, default=None, help_text="default: yourself"
    )
    date_from = serializers.DateField(validators=[_day], help_text="the first day (the venue's)")
    date_to = serializers.DateField(validators=[_day], help_text="the last day, included")


REPORT = OpenApiResponse(OpenApiTypes.OBJECT, description="The report (halls.cashier.services.reports)")


def _venue(request: Request, venue_id: int, *roles: str) -> Venue:
    return access.venue_for(request.user, venue_id, *roles)


def _is_operator(user: Any, venue_id: int) -> bool:
    return Role.OPERATOR in access.roles_in(user, venue_id)


class ShiftReportView(HallAPIView):
    @extend_schema(
        operation_id="cashier_shift_report",
        summary="A shift's report: sales, payouts, cash-in/out, tickets, float, cash-up, trial balance",
        description="The shift's cashier, or an operator of its venue (another venue's: 404 unknown_shift).",
        responses={200: REPORT, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, shift_id: int) -> Response:
        shift = access.get_for_user(
            Shift.objects.select_related("till", "cashier"),
            request.user,
            Role.CASHIER,
            label="shift",
            pk=shift_id,
        )
        if shift.cashier_id != request.user.pk and not _is_operator(request.user, shift.venue_id):
            raise PermissionDenied(
                _("A cashier reads the reports of their own shifts."), code="not_your_shift"
            )
        return Response(reports.shift_report(shift).as_dict())


class CashierReportView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cashier_report",
        summary="A cashier's report over a range of the venue's days (date_from, date_to: both included)",
        description=(
            "A cashier reads their own (cashier omitted or theirs); an operator any cashier's of the venue. "
            "400 bad_range / range_too_long (more than 93 days), 404 unknown_cashier."
        ),
        parameters=[CashierQuerySerializer],
        responses={200: REPORT, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        query = valid(CashierQuerySerializer, request.query_params)
        venue = _venue(request, query["venue"], Role.CASHIER)
        wanted: int = query["cashier"] or actor(request).pk
        if wanted != request.user.pk and not _is_operator(request.user, venue.pk):
            raise PermissionDenied(_("A cashier reads their own report."), code="not_your_report")
        if not StaffRole.objects.filter(user_id=wanted, venue=venue).exists():
            raise NotFound(
                _("No cashier %(cashier)s in this venue.") % {"cashier": wanted}, code="unknown_cashier"
            )
        cashier = User.objects.get(pk=wanted)
        report = reports.cashier_report(
            venue=venue, cashier=cashier, first=query["date_from"], last=query["date_to"]
        )
        return Response(report.as_dict())


class DayReportView(HallAPIView):
    @extend_schema(
        operation_id="cashier_day_report",
        summary="The venue's day: every transaction of its calendar day (in its time zone)",
        description="Operator. Tickets outstanding and the trial balance as of the end of the day.",
        parameters=[DayQuerySerializer],
        responses={200: REPORT, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        query = valid(DayQuerySerializer, request.query_params)
        venue = _venue(request, query["venue"], Role.OPERATOR)
        return Response(reports.day_report(venue=venue, day=query["day"]).as_dict())


class DayReportCsvView(HallAPIView):
    @extend_schema(
        operation_id="cashier_day_report_csv",
        summary="The venue's day report as CSV (section, item, count, amount)",
        description="Operator.",
        parameters=[DayQuerySerializer],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV"),
            **error_responses(400, 403, 404),
        },
        tags=TAGS,
    )
    def get(self, request: Request) -> HttpResponse:
        query = valid(DayQuerySerializer, request.query_params)
        venue = _venue(request, query["venue"], Role.OPERATOR)
        report = reports.day_report(venue=venue, day=query["day"])
        out = io.StringIO()
        csv.writer(out).writerows(reports.rows(report))
        response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
        name = f"cashier-day-{venue.pk}-{query['day'].isoformat()}.csv"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


urlpatterns = [
    path("reports/shifts/<int:shift_id>/", ShiftReportView.as_view(), name="cashier-report-shift"),
    path("reports/cashier/", CashierReportView.as_view(), name="cashier-report-cashier"),
    path("reports/day/", DayReportView.as_view(), name="cashier-report-day"),
    path("reports/day/csv/", DayReportCsvView.as_view(), name="cashier-report-day-csv"),
]
