"""REST doors of the door (issue 27): admissions, self-exclusions, and the visits per day.

Who may: the venue's operator and cashier admit and record self-exclusions (the `door` role is a later
step); the inspector reads the daily counts. A document the door cannot read (unknown type, malformed
number, wrong check letter, unknown country) or a birth date in the future answers 400 naming the problem,
in the reader's language, and nothing is written. No answer repeats the document's number.
"""

from __future__ import annotations

from typing import Any

from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access
from halls.api import HallAPIView, actor, valid
from halls.door.models import Register, RegisterVersion, Visit
from halls.door.services import admission
from halls.errors import InvalidInput
from halls.models import Role, Venue
from halls.serializers import error_responses

TAGS = ["door"]
MAX_DAYS = 366


class DocumentSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField(max_length=20, label=gettext_lazy("document type"))
    number = serializers.CharField(max_length=40, label=gettext_lazy("document number"))
    country = serializers.CharField(
        max_length=3, required=False, allow_blank=True, default="", label=gettext_lazy("country")
    )


class AdmissionSerializer(DocumentSerializer):
    birth_date = serializers.DateField(label=gettext_lazy("date of birth"))
    door = serializers.CharField(max_length=60, label=gettext_lazy("door"))


class SelfExclusionSerializer(DocumentSerializer):
    until = serializers.DateField(label=gettext_lazy("until"))


class DailySerializer(serializers.Serializer[Any]):
    # "from" is a Python keyword: the field is declared below under its query name.
    to = serializers.DateField(required=False, label=gettext_lazy("to"))


DailySerializer._declared_fields["from"] = serializers.DateField(label=gettext_lazy("from"))


def _venue(request: Request, venue_id: int, *roles: str) -> Venue:
    return access.venue_for(request.user, venue_id, *roles)


def _register(visit: Visit) -> dict[str, Any] | None:
    """The register that listed the person and its version (None: listed online, no file loaded)."""
    if visit.register_version_id is not None:
        version = RegisterVersion.objects.select_related("register").get(pk=visit.register_version_id)
        return {"code": version.register.code, "version": version.number}
    if visit.register_id is not None:
        code = Register.objects.filter(pk=visit.register_id).values_list("code", flat=True).get()
        return {"code": code, "version": None}
    return None


class AdmissionView(HallAPIView):
    @extend_schema(
        operation_id="door_admit",
        summary="Admit a person at the door, or refuse them (operator, cashier)",
        description=(
            "Decides in order: prohibited (a register in force lists the document), self-excluded here, a "
            "minor, else admitted; every decision is a visit. 400 names a document's problem or a birth "
            "date in the future, and writes nothing."
        ),
        request=AdmissionSerializer,
        responses={201: None, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, Role.OPERATOR, Role.CASHIER)
        data = valid(AdmissionSerializer, request.data)
        document = admission.document_from(data["kind"], data["number"], data["country"])
        visit = admission.admit(
            venue=venue,
            door=data["door"],
            document=document,
            birth_date=data["birth_date"],
            actor=actor(request),
        )
        return Response(
            {
                "visit": visit.pk,
                "decision": visit.decision,
                "decided_by_register": _register(visit),
                "registers_readable": visit.registers_readable,
                "consultation": visit.consultation,
            },
            status=status.HTTP_201_CREATED,
        )


class SelfExclusionView(HallAPIView):
    @extend_schema(
        operation_id="door_self_exclude",
        summary="Record a person's own self-exclusion at the venue (operator, cashier)",
        description="400 for an end in the past; 409 for an end before that of the one in force.",
        request=SelfExclusionSerializer,
        responses={201: None, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, Role.OPERATOR, Role.CASHIER)
        data = valid(SelfExclusionSerializer, request.data)
        document = admission.document_from(data["kind"], data["number"], data["country"])
        found = admission.self_exclude(
            venue=venue, document=document, until=data["until"], actor=actor(request)
        )
        receipt = reverse("cashier-self-exclusion-receipt", kwargs={"venue_id": venue.pk, "pk": found.pk})
        return Response(
            {"self_exclusion": found.pk, "since": found.since, "until": found.until, "receipt": receipt},
            status=status.HTTP_201_CREATED,
        )


class DailyView(HallAPIView):
    @extend_schema(
        operation_id="door_daily",
        summary="Visits per decision per day (operator, cashier, inspector)",
        responses={200: None, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, Role.OPERATOR, Role.CASHIER, Role.INSPECTOR)
        data = valid(DailySerializer, request.query_params)
        day_from = data["from"]
        day_to = data.get("to") or day_from
        if day_to < day_from or (day_to - day_from).days >= MAX_DAYS or not 1900 <= day_from.year <= 9000:
            raise InvalidInput(
                _("The days must run from 'from' to 'to', at most %(n)d of them.") % {"n": MAX_DAYS},
                code="bad_days",
            )
        return Response(
            [
                {
                    "day": c.day,
                    "admitted": c.admitted,
                    "minor": c.minor,
                    "prohibited": c.prohibited,
                    "self_excluded": c.self_excluded,
                    "refused": c.refused,
                    "total": c.total,
                }
                for c in admission.visits_per_day(venue, day_from, day_to)
            ]
        )


urlpatterns = [
    path("venues/<int:venue_id>/admissions/", AdmissionView.as_view(), name="api-door-admissions"),
    path("venues/<int:venue_id>/admissions/daily/", DailyView.as_view(), name="api-door-daily"),
    path(
        "venues/<int:venue_id>/self-exclusions/", SelfExclusionView.as_view(), name="api-door-self-exclusions"
    ),
]
