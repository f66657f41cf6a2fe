"""REST doors of the gaming tax (issue 29): the rate tables and a venue's returns.

Who may: anyone with a role in some venue reads the rate tables; a superuser or the operator of every venue
records and corrects them (they are shared by the installation, like regions). A venue's operator and
inspector read its returns and compute a closed period's (nothing written); its operator files one. A
refusal is a 4xx JSON error naming the problem (400 bad_period / bad_rate_table, 409 period_not_closed /
no_rate_table / return_filed / rate_table_used / rate_tables_overlap) and writes nothing.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access
from halls.api import HallAPIView, actor, valid
from halls.errors import NotFound, PermissionDenied
from halls.models import Role, Venue
from halls.serializers import error_responses
from halls.tax import compute
from halls.tax.models import RateTable, Rounding, TaxReturn
from halls.tax.services import periods, rates, returns

TAGS = ["tax"]
READERS = (Role.OPERATOR, Role.INSPECTOR)


class RateTableSerializer(serializers.Serializer[Any]):
    jurisdiction = serializers.CharField(max_length=4, label=gettext_lazy("jurisdiction"))
    reference = serializers.CharField(max_length=240, label=gettext_lazy("legal reference"))
    valid_from = serializers.DateField(label=gettext_lazy("valid from"))
    valid_until = serializers.DateField(required=False, allow_null=True, label=gettext_lazy("valid until"))
    rounding = serializers.ChoiceField(
        choices=Rounding.choices, default=Rounding.HALF_UP, label=gettext_lazy("rounding")
    )
    lines = serializers.ListField(child=serializers.DictField(), label=gettext_lazy("rates by game type"))


class RateTableChangeSerializer(RateTableSerializer):
    jurisdiction = None  # type: ignore[assignment]  # a table stays in its jurisdiction


class PeriodSerializer(serializers.Serializer[Any]):
    period = serializers.CharField(max_length=10, label=gettext_lazy("period"))


def _staff(request: Request) -> None:
    if not access.venue_ids_for(request.user):
        raise PermissionDenied(_("This needs a role in some venue."), code="role_required")


def rate_table_data(table: RateTable) -> dict[str, Any]:
    return {
        "id": table.pk,
        "jurisdiction": table.jurisdiction,
        "reference": table.reference,
        "valid_from": table.valid_from,
        "valid_until": table.valid_until,
        "rounding": table.rounding,
        "lines": table.lines,
        "recorded_at": table.recorded_at,
        "changed_at": table.changed_at,
    }


def _lines(rows: list[list[str]]) -> list[dict[str, str]]:
    return [dict(zip(compute.COLUMNS, row, strict=True)) for row in rows]


def draft_data(draft: returns.Draft) -> dict[str, Any]:
    return {
        "venue": draft.venue.pk,
        "period": draft.period.label,
        "first_day": draft.period.first,
        "last_day": draft.period.last,
        "rate_table": {"id": draft.table.pk, "reference": draft.table.reference},
        "rounding": draft.computed.rounding,
        "lines": _lines([compute.line_row(line) for line in draft.computed.lines]),
        "total_due": compute.amount(draft.computed.total),
        "digest": draft.digest,
        "filed": False,
    }


def return_data(tax_return: TaxReturn) -> dict[str, Any]:
    return {
        "id": tax_return.pk,
        "venue": tax_return.venue_id,
        "period": tax_return.period,
        "first_day": tax_return.first_day,
        "last_day": tax_return.last_day,
        "rate_table": {"id": tax_return.rate_table_id, "reference": tax_return.rate_reference},
        "rounding": tax_return.rounding,
        "lines": _lines(tax_return.lines),
        "total_due": str(tax_return.total_due),
        "digest": tax_return.digest,
        "filed": True,
        "filed_at": tax_return.filed_at,
        "filed_by": tax_return.filed_by_label,
    }


def _table(table_id: int) -> RateTable:
    found = RateTable.objects.filter(pk=table_id).first()
    if found is None:
        raise NotFound(_("No rate table %(id)s.") % {"id": table_id}, code="unknown_rate_table")
    return found


def _venue(request: Request, venue_id: int, *roles: str) -> Venue:
    return access.venue_for(request.user, venue_id, *roles)


class RateTablesView(HallAPIView):
    @extend_schema(
        operation_id="tax_rate_tables",
        summary="The gaming-tax rate tables, by jurisdiction and validity (any staff)",
        responses={200: None, **error_responses(403)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        _staff(request)
        wanted = request.query_params.get("jurisdiction")
        found = rates.tables([wanted] if wanted else None)
        return Response({"rate_tables": [rate_table_data(t) for t in found]})

    @extend_schema(
        operation_id="tax_rate_table_record",
        summary="Record a jurisdiction's rate table (superuser or the operator of every venue)",
        description=(
            "lines: [{game_type, basis (sales|net|drop|machines), rate_percent, fee_per_machine}], one per "
            "game type. 400 bad_rate_table names the line and field; 409 rate_tables_overlap."
        ),
        request=RateTableSerializer,
        responses={201: None, **error_responses(400, 403, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(RateTableSerializer, request.data)
        table = rates.record_rate_table(
            jurisdiction=data["jurisdiction"],
            reference=data["reference"],
            valid_from=data["valid_from"],
            valid_until=data.get("valid_until"),
            rounding=data["rounding"],
            lines=data["lines"],
            actor=actor(request),
        )
        return Response(rate_table_data(table), status=status.HTTP_201_CREATED)


class RateTableView(HallAPIView):
    @extend_schema(
        operation_id="tax_rate_table",
        summary="One rate table (any staff)",
        responses={200: None, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, table_id: int) -> Response:
        _staff(request)
        return Response(rate_table_data(_table(table_id)))

    @extend_schema(
        operation_id="tax_rate_table_change",
        summary="Correct a rate table no return was filed with (superuser or the operator of every venue)",
        description="409 rate_table_used once a return was filed with it.",
        request=RateTableChangeSerializer,
        responses={200: None, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def put(self, request: Request, table_id: int) -> Response:
        _staff(request)
        table = _table(table_id)
        data = valid(RateTableChangeSerializer, request.data)
        table = rates.change_rate_table(
            table=table,
            reference=data["reference"],
            valid_from=data["valid_from"],
            valid_until=data.get("valid_until"),
            rounding=data["rounding"],
            lines=data["lines"],
            actor=actor(request),
        )
        return Response(rate_table_data(table))


class ReturnsView(HallAPIView):
    @extend_schema(
        operation_id="tax_returns",
        summary="The venue's filed returns and its period setting (operator, inspector)",
        responses={200: None, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, *READERS)
        return Response(
            {
                "period_kind": periods.period_kind(venue.jurisdiction),
                "last_closed": periods.last_closed(venue).label,
                "returns": [return_data(r) for r in returns.filed(venue)],
            }
        )

    @extend_schema(
        operation_id="tax_return_file",
        summary="File the venue's return for a closed period (operator)",
        description="201 with the return as filed (frozen). 400 bad_period; 409 period_not_closed, "
        "no_rate_table, return_filed.",
        request=PeriodSerializer,
        responses={201: None, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, Role.OPERATOR)
        data = valid(PeriodSerializer, request.data)
        tax_return = returns.file_return(venue=venue, period=data["period"], actor=actor(request))
        return Response(return_data(tax_return), status=status.HTTP_201_CREATED)


class ReturnComputeView(HallAPIView):
    @extend_schema(
        operation_id="tax_return_compute",
        summary="Compute the venue's return for a closed period, without filing it (operator, inspector)",
        description="?period=2026-11 (or 2026-Q4). 400 bad_period; 409 period_not_closed, no_rate_table.",
        responses={200: None, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, *READERS)
        data = valid(PeriodSerializer, request.query_params)
        return Response(draft_data(returns.compute_return(venue=venue, period=data["period"])))


class ReturnView(HallAPIView):
    @extend_schema(
        operation_id="tax_return",
        summary="A filed return, and whether recomputing it now gives the same figures (operator, inspector)",
        responses={200: None, **error_responses(403, 404, 409)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int, period: str) -> Response:
        venue = _venue(request, venue_id, *READERS)
        found = returns.filed_one(venue, period)
        if found is None:
            raise NotFound(
                _("No return of %(period)s filed for this venue.") % {"period": period}, code="unknown_return"
            )
        again = returns.recompute(found)
        return Response(
            {**return_data(found), "recomputed_digest": again.digest, "same": again.csv == found.csv}
        )


urlpatterns = [
    path("tax/rate-tables/", RateTablesView.as_view(), name="api-tax-rate-tables"),
    path("tax/rate-tables/<int:table_id>/", RateTableView.as_view(), name="api-tax-rate-table"),
    path("tax/venues/<int:venue_id>/returns/", ReturnsView.as_view(), name="api-tax-returns"),
    path("tax/venues/<int:venue_id>/returns/compute/", ReturnComputeView.as_view(), name="api-tax-compute"),
    path("tax/venues/<int:venue_id>/returns/<str:period>/", ReturnView.as_view(), name="api-tax-return"),
]
