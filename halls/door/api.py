"""REST doors of the door (issue 27): admissions, exits, self-exclusions, the live count, the visits per day.

Who may: the venue's door staff (Role.DOOR) and operator admit, record exits and read the live count and
the door's last decisions; they and the cashier (at the till) record self-exclusions; the operator, the
cashier and the inspector read the daily counts (the inspector reads everything, writes nothing).

An admission is idempotent: the page and devices send `idempotency_key` (or the `Idempotency-Key` header);
a retry answers the first visit with 200 (201 the first time) and writes nothing. An override (a document
the door cannot read) carries `override: true` and the second person's own `second_username` and
`second_password`, checked here with Django's authenticate (and django-axes' lockout); the service checks
who they are. A document the door cannot read (unknown type, malformed
number, wrong check letter, unknown country) or a birth date in the future answers 400 naming the problem,
in the reader's language, and nothing is written. No answer repeats the document's number.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate
from django.contrib.auth.models import User
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
from halls.door.services import admission, presence
from halls.errors import InvalidInput
from halls.models import Role, Venue
from halls.serializers import error_responses
from halls.throttling import locked_out_message

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
    idempotency_key = serializers.CharField(
        max_length=admission.KEY_LENGTH,
        required=False,
        label=gettext_lazy("idempotency key"),
        help_text="A retry with the same key answers the first visit (200), writing nothing.",
    )
    override = serializers.BooleanField(
        required=False,
        default=False,
        label=gettext_lazy("override"),
        help_text="Admit a document the door cannot read: needs a second person's username and password.",
    )
    second_username = serializers.CharField(
        max_length=150, required=False, allow_blank=True, default="", label=gettext_lazy("second person")
    )
    second_password = serializers.CharField(
        max_length=128,
        required=False,
        allow_blank=True,
        default="",
        trim_whitespace=False,
        label=gettext_lazy("second person's password"),
    )


class ExitSerializer(DocumentSerializer):
    door = serializers.CharField(max_length=60, label=gettext_lazy("door"))
    # An admitted-by-override person leaves with the same unreadable document.
    override = serializers.BooleanField(required=False, default=False, label=gettext_lazy("override"))


class LiveSerializer(serializers.Serializer[Any]):
    door = serializers.CharField(max_length=60, required=False, allow_blank=True, default="")


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
        return {"code": version.register.code, "name": version.register.name, "version": version.number}
    if visit.register_id is not None:
        code, name = Register.objects.filter(pk=visit.register_id).values_list("code", "name").get()
        return {"code": code, "name": name, "version": None}
    return None


ADMIT_ROLES = (Role.OPERATOR, Role.DOOR)
SELF_EXCLUSION_ROLES = (Role.OPERATOR, Role.DOOR, Role.CASHIER)


def _idempotency_key(request: Request, data: dict[str, Any]) -> str | None:
    key = data.get("idempotency_key") or request.headers.get("Idempotency-Key")
    return None if key is None else str(key)


def _second_person(request: Request, username: str, password: str) -> User | None:
    """The override's second person, by their own password (None when they typed nothing)."""
    if not username.strip() or not password:
        return None
    user = authenticate(request._request, username=username.strip(), password=password)
    if getattr(request._request, "axes_locked_out", False):
        raise InvalidInput(locked_out_message(), code="locked_out")
    if not isinstance(user, User):
        raise InvalidInput(
            _("The second person's username or password is wrong."), code="second_person_not_authenticated"
        )
    return user


class AdmissionView(HallAPIView):
    @extend_schema(
        operation_id="door_admit",
        summary="Admit a person at the door, or refuse them (door, operator)",
        description=(
            "Decides in order: prohibited (a register in force lists the document), self-excluded here, a "
            "minor, else admitted; every decision is a visit. 400 names a document's problem or a birth "
            "date in the future, and writes nothing. 201 a new visit; 200 a retry of its idempotency key "
            "(the first visit, nothing written); 409 idempotency_key_reused. An override needs a second "
            "person (second_person_required, second_person_same, second_person_not_authenticated, "
            "second_person_not_allowed) and a document the door cannot read (override_not_needed)."
        ),
        request=AdmissionSerializer,
        responses={201: None, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, *ADMIT_ROLES)
        data = valid(AdmissionSerializer, request.data)
        override = data["override"]
        if override:
            document = admission.override_document(data["kind"], data["number"], data["country"])
            second = _second_person(request, data["second_username"], data["second_password"])
        else:
            document = admission.document_from(data["kind"], data["number"], data["country"])
            second = None
        done = admission.admit_once(
            venue=venue,
            door=data["door"],
            document=document,
            birth_date=data["birth_date"],
            actor=actor(request),
            idempotency_key=_idempotency_key(request, data),
            override=override,
            confirmed_by=second,
        )
        visit = done.visit
        return Response(
            {
                "visit": visit.pk,
                "decision": visit.decision,
                "decided_by_register": _register(visit),
                "registers_readable": visit.registers_readable,
                "override": visit.override,
                "replayed": done.replayed,
                "consultation": visit.consultation,
            },
            status=status.HTTP_200_OK if done.replayed else status.HTTP_201_CREATED,
        )


class ExitView(HallAPIView):
    @extend_schema(
        operation_id="door_exit",
        summary="Record a person leaving: their admitted visit of the day is closed (door, operator)",
        description=(
            "The same document scanned at the exit. 201 the first time, 200 when already recorded as "
            "leaving (nothing written); 409 not_admitted_today."
        ),
        request=ExitSerializer,
        responses={201: None, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, *ADMIT_ROLES)
        data = valid(ExitSerializer, request.data)
        if data["override"]:
            document = admission.override_document(data["kind"], data["number"], data["country"])
        else:
            document = admission.document_from(data["kind"], data["number"], data["country"])
        done = presence.record_exit(venue=venue, door=data["door"], document=document, actor=actor(request))
        count = presence.presence(venue)
        return Response(
            {"visit": done.visit.pk, "replayed": done.replayed, "inside": count.inside},
            status=status.HTTP_200_OK if done.replayed else status.HTTP_201_CREATED,
        )


class LiveView(HallAPIView):
    @extend_schema(
        operation_id="door_live",
        summary="Who is inside now, and the door's last decisions (door, operator, inspector)",
        description=(
            "The door day's admitted visits, those who left and those inside; the last decisions (of "
            "`door` when named), newest first, with no document."
        ),
        responses={200: None, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, *ADMIT_ROLES)
        data = valid(LiveSerializer, request.query_params)
        count = presence.presence(venue)
        recent = presence.recent_visits(venue, door=data["door"])
        return Response(
            {
                "day": count.day,
                "admitted": count.admitted,
                "left": count.left,
                "inside": count.inside,
                "recent": [
                    {
                        "visit": r.visit_id,
                        "at": r.at,
                        "decision": r.decision,
                        "register": r.register,
                        "override": r.override,
                        "left_at": r.left_at,
                    }
                    for r in recent
                ],
            }
        )


class SelfExclusionView(HallAPIView):
    @extend_schema(
        operation_id="door_self_exclude",
        summary="Record a person's own self-exclusion at the venue (door, operator, cashier)",
        description="400 for an end in the past; 409 for an end before that of the one in force.",
        request=SelfExclusionSerializer,
        responses={201: None, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, *SELF_EXCLUSION_ROLES)
        data = valid(SelfExclusionSerializer, request.data)
        document = admission.document_from(data["kind"], data["number"], data["country"])
        found = admission.self_exclude(
            venue=venue, document=document, until=data["until"], actor=actor(request)
        )
        receipt = reverse("api-door-self-exclusion-receipt", kwargs={"venue_id": venue.pk, "pk": found.pk})
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
    path("venues/<int:venue_id>/admissions/live/", LiveView.as_view(), name="api-door-live"),
    path("venues/<int:venue_id>/admissions/exits/", ExitView.as_view(), name="api-door-exits"),
    path(
        "venues/<int:venue_id>/self-exclusions/", SelfExclusionView.as_view(), name="api-door-self-exclusions"
    ),
]
