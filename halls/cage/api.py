"""REST doors of the cage (issue 27): identify a winner, read the compliance lists, review a flag.

Who may: the venue's cashier and operator identify a winner (POST identifications/: the document checked
as at the door, the full name, date of birth, nationality and the scan's reference; the answer is the
identification's id, which the pay request then names); the operator and the inspector read the
compliance lists (payouts tied to a person and flags, by the person's short reference, never the identity:
that is on the compliance page and its reports); the operator marks a flag reviewed. A refusal names the
problem in the reader's language, never the document's number, and writes nothing.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access, money
from halls.api import HallAPIView, actor, valid
from halls.cage.services import flags, identification, readmodels
from halls.door.api import DocumentSerializer
from halls.door.services import admission
from halls.models import Role, Venue
from halls.serializers import error_responses

TAGS = ["cage"]


class IdentificationSerializer(DocumentSerializer):
    full_name = serializers.CharField(max_length=150, label=gettext_lazy("full name"))
    birth_date = serializers.DateField(label=gettext_lazy("date of birth"))
    nationality = serializers.CharField(max_length=3, label=gettext_lazy("nationality"))
    scan_reference = serializers.CharField(max_length=200, label=gettext_lazy("scan reference"))


class DaysSerializer(serializers.Serializer[Any]):
    to = serializers.DateField(required=False, label=gettext_lazy("to"))


DaysSerializer._declared_fields["from"] = serializers.DateField(label=gettext_lazy("from"))


class ReviewSerializer(serializers.Serializer[Any]):
    note = serializers.CharField(max_length=2000, label=gettext_lazy("note"))


def _venue(request: Request, venue_id: int, *roles: str) -> Venue:
    return access.venue_for(request.user, venue_id, *roles)


class IdentificationsView(HallAPIView):
    @extend_schema(
        operation_id="cage_identify",
        summary="Identify a winner at the cage (cashier, operator)",
        description=(
            "The document is checked as at the door. 201 with the identification's id: name it in the pay "
            "request of a prize, a ticket redeemed in cash or a card cashed out (required at or above the "
            "AML threshold). 400 names the problem (document, name, birth date, minor, nationality, scan) "
            "and writes nothing."
        ),
        request=IdentificationSerializer,
        responses={201: None, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, Role.CASHIER, Role.OPERATOR)
        data = valid(IdentificationSerializer, request.data)
        document = admission.document_from(data["kind"], data["number"], data["country"])
        found = identification.identify(
            venue=venue,
            document=document,
            full_name=data["full_name"],
            birth_date=data["birth_date"],
            nationality=data["nationality"],
            scan_reference=data["scan_reference"],
            actor=actor(request),
        )
        return Response(
            {
                "identification": found.pk,
                "identified_at": found.identified_at,
                "keep_until": found.keep_until,
            },
            status=status.HTTP_201_CREATED,
        )


class ComplianceView(HallAPIView):
    @extend_schema(
        operation_id="cage_compliance",
        summary="Payouts tied to a person and AML flags of the venue's days (operator, inspector)",
        responses={200: None, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, Role.OPERATOR, Role.INSPECTOR)
        days = valid(DaysSerializer, request.query_params)
        report = readmodels.compliance(venue, days["from"], days.get("to"))
        return Response(
            {
                "from": report.first,
                "to": report.last,
                "payouts": [
                    {
                        "record": p.record,
                        "at": p.at,
                        "kind": p.kind,
                        "source": p.source,
                        "amount": money.text(p.amount),
                        "paid_by": p.paid_by,
                        "person": p.person,
                        "identification": p.identification.pk if p.identification is not None else None,
                        "flags": list(p.flags),
                    }
                    for p in report.payouts
                ],
                "flags": [
                    {
                        "flag": f.flag.pk,
                        "kind": f.flag.kind,
                        "at": f.flag.at,
                        "person": f.person,
                        "total": money.text(f.flag.total),
                        "cashed_in": money.text(f.flag.cashed_in),
                        "played": money.text(f.flag.played),
                        "payouts": list(f.records),
                        "subject": f.subject,
                        "reviewed_by": f.reviewed_by,
                        "reviewed_at": f.flag.reviewed_at,
                    }
                    for f in report.flags
                ],
            }
        )


class FlagReviewView(HallAPIView):
    @extend_schema(
        operation_id="cage_flag_review",
        summary="Mark an AML flag reviewed, with a note (operator)",
        description="400 bad_review_note; 404 unknown_flag; 409 already_reviewed.",
        request=ReviewSerializer,
        responses={200: None, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int, flag_id: int) -> Response:
        venue = _venue(request, venue_id, Role.OPERATOR)
        data = valid(ReviewSerializer, request.data)
        flag = flags.review_flag(venue_id=venue.pk, flag_id=flag_id, note=data["note"], actor=actor(request))
        return Response({"flag": flag.pk, "reviewed_at": flag.reviewed_at})


urlpatterns = [
    path(
        "cage/venues/<int:venue_id>/identifications/",
        IdentificationsView.as_view(),
        name="api-cage-identifications",
    ),
    path("cage/venues/<int:venue_id>/compliance/", ComplianceView.as_view(), name="api-cage-compliance"),
    path(
        "cage/venues/<int:venue_id>/flags/<int:flag_id>/review/",
        FlagReviewView.as_view(),
        name="api-cage-flag-review",
    ),
]
