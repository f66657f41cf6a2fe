"""The operators' doors of electronic bingo (/api/electronic/): specialities and their versions, terminals
(registered with a token shown once, rotated, out of service and back), approved terminal software, the
verification system (run, list, detail) and sessions (open, close).

Every view is a thin door (DESIGN §3): it validates its body, finds its objects through halls.access with
the operator role (another venue's object is 404 unknown_<thing>), calls one service and renders it.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from bingo.electronic.models import (
    ElectronicSession,
    Speciality,
    SpecialityVersion,
    Terminal,
    TerminalCheck,
    TerminalSoftware,
    Verification,
)
from bingo.electronic.services import four_eyes, games, screen_acks, sessions, terminals, verification
from halls import access, foureyes
from halls.api import HallAPIView, actor, valid
from halls.models import Role, Room, Venue
from halls.proposals_api import proposed
from halls.proposals_serializers import ProposalSerializer
from halls.serializers import error_responses
from halls.services import proposals

OPERATOR = Role.OPERATOR
TAGS = ["electronic bingo (operators)"]

# --- Lookups (all through halls.access, the operator role) ---------------------------------------------


def _venue(request: Request, venue_id: int) -> Venue:
    return access.venue_for(request.user, venue_id, OPERATOR)


def _speciality(request: Request, speciality_id: int) -> Speciality:
    return access.get_for_user(
        Speciality.objects.select_related("room", "venue"),
        request.user,
        OPERATOR,
        label="speciality",
        pk=speciality_id,
    )


def _terminal(request: Request, terminal_id: int) -> Terminal:
    return access.get_for_user(
        Terminal.objects.select_related("device", "speciality"),
        request.user,
        OPERATOR,
        venue_path="speciality.venue_id",
        label="terminal",
        pk=terminal_id,
    )


def _verification(request: Request, verification_id: int) -> Verification:
    return access.get_for_user(
        Verification.objects.select_related("speciality"),
        request.user,
        OPERATOR,
        venue_path="speciality.venue_id",
        label="verification",
        pk=verification_id,
    )


def _session(request: Request, session_id: int) -> ElectronicSession:
    return access.get_for_user(
        ElectronicSession.objects.select_related("speciality"),
        request.user,
        OPERATOR,
        venue_path="speciality.venue_id",
        label="session",
        pk=session_id,
    )


def _software(request: Request, software_id: int) -> TerminalSoftware:
    return access.get_for_user(
        TerminalSoftware.objects.all(), request.user, OPERATOR, label="software", pk=software_id
    )


# --- Shapes ---------------------------------------------------------------------------------------------


class VersionSerializer(serializers.ModelSerializer[SpecialityVersion]):
    class Meta:
        model = SpecialityVersion
        fields = ["number", "rules", "effective_from", "authorisation_ref", "created_at", "created_by"]


class SpecialitySerializer(serializers.ModelSerializer[Speciality]):
    venue = serializers.IntegerField(source="venue_id")
    room = serializers.IntegerField(source="room_id")

    class Meta:
        model = Speciality
        fields = ["id", "venue", "room", "code", "name", "family", "running", "created_at"]


class SpecialityDetailSerializer(SpecialitySerializer):
    versions = VersionSerializer(many=True, source="version_list")
    open_session = serializers.IntegerField(allow_null=True, help_text="The open session's id, if any.")
    latest_verification = serializers.IntegerField(allow_null=True)

    class Meta(SpecialitySerializer.Meta):
        fields = [*SpecialitySerializer.Meta.fields, "versions", "open_session", "latest_verification"]


class SpecialityCreateSerializer(serializers.Serializer[Any]):
    room = serializers.IntegerField(help_text="A room of the venue, with no speciality yet.")
    code = serializers.CharField(max_length=30)
    name = serializers.CharField(max_length=80)
    rules = serializers.JSONField(help_text="The rules and prize table (bingo.electronic.prizetable).")
    authorisation_ref = serializers.CharField(max_length=120)


class RunningSerializer(serializers.Serializer[Any]):
    running = serializers.BooleanField(help_text="Start (true) or stop (false) the speciality's games.")


class VersionCreateSerializer(serializers.Serializer[Any]):
    rules = serializers.JSONField()
    effective_from = serializers.DateTimeField(required=False, allow_null=True, help_text="Now if absent.")
    authorisation_ref = serializers.CharField(max_length=120)


class TerminalSerializer(serializers.ModelSerializer[Terminal]):
    name = serializers.CharField(source="device.name")
    device = serializers.IntegerField(source="device_id")
    speciality = serializers.IntegerField(source="speciality_id")
    state = serializers.CharField(help_text="in_service, failed (its verification) or out_of_service.")
    verified_by = serializers.IntegerField(source="verified_by_id", allow_null=True)

    class Meta:
        model = Terminal
        fields = [
            "id",
            "name",
            "device",
            "speciality",
            "state",
            "software_version",
            "last_seen_at",
            "clock_offset_ms",
            "verified_by",
        ]


class TerminalTokenSerializer(serializers.Serializer[Any]):
    terminal = TerminalSerializer()
    token = serializers.CharField(
        help_text="Shown this once (only its hash is kept): 'Authorization: CashDevice <device>:<token>'."
    )


class TerminalCreateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=80)


class TerminalStateSerializer(serializers.Serializer[Any]):
    state = serializers.CharField(max_length=20, help_text="in_service or out_of_service.")
    reason = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class SoftwareSerializer(serializers.ModelSerializer[TerminalSoftware]):
    class Meta:
        model = TerminalSoftware
        fields = ["id", "version", "authorisation_ref", "approved_at", "withdrawn_at"]


class SoftwareCreateSerializer(serializers.Serializer[Any]):
    version = serializers.CharField(max_length=40)
    authorisation_ref = serializers.CharField(max_length=120)


class CheckSerializer(serializers.Serializer[Any]):
    check = serializers.CharField()
    ok = serializers.BooleanField()
    detail = serializers.CharField()


class RngCheckSerializer(serializers.Serializer[Any]):
    test = serializers.CharField()
    ok = serializers.BooleanField()
    statistic = serializers.FloatField()
    threshold = serializers.FloatField(
        help_text="The statistic fails above it (the critical value at alpha)."
    )
    p_value = serializers.FloatField()
    alpha = serializers.FloatField()
    detail = serializers.CharField()


class TerminalCheckSerializer(serializers.ModelSerializer[TerminalCheck]):
    terminal = serializers.IntegerField(source="terminal_id")
    name = serializers.CharField(source="terminal.device.name")
    checks = CheckSerializer(many=True)

    class Meta:
        model = TerminalCheck
        fields = ["terminal", "name", "passed", "checks"]


class VerificationSerializer(serializers.ModelSerializer[Verification]):
    speciality = serializers.IntegerField(source="speciality_id")
    system_checks = CheckSerializer(many=True)
    rng_checks = RngCheckSerializer(many=True)
    actor = serializers.CharField(source="actor_label")

    class Meta:
        model = Verification
        fields = [
            "id",
            "speciality",
            "started_at",
            "finished_at",
            "passed",
            "system_checks",
            "rng_checks",
            "actor",
        ]


class VerificationDetailSerializer(VerificationSerializer):
    terminals = TerminalCheckSerializer(many=True, source="terminal_checks")

    class Meta(VerificationSerializer.Meta):
        fields = [*VerificationSerializer.Meta.fields, "terminals"]


class ElectronicSessionSerializer(serializers.ModelSerializer[ElectronicSession]):
    speciality = serializers.IntegerField(source="speciality_id")
    verification = serializers.IntegerField(source="verification_id")

    class Meta:
        model = ElectronicSession
        fields = ["id", "speciality", "verification", "opened_at", "opened_by", "closed_at", "closed_by"]


# --- Specialities ---------------------------------------------------------------------------------------


def _detail(speciality: Speciality) -> Any:
    session = sessions.open_session_of(speciality)
    latest = verification.latest(speciality)
    speciality.open_session = session.pk if session else None  # type: ignore[attr-defined]
    speciality.latest_verification = latest.pk if latest else None  # type: ignore[attr-defined]
    speciality.version_list = list(speciality.versions.order_by("number"))  # type: ignore[attr-defined]
    return SpecialityDetailSerializer(speciality).data


class SpecialitiesView(HallAPIView):
    @extend_schema(
        operation_id="electronic_specialities_list",
        summary="The venue's specialities of electronic and automatic bingo (operator)",
        responses={200: SpecialitySerializer(many=True), **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id)
        found = Speciality.objects.filter(venue=venue).order_by("code")
        return Response(SpecialitySerializer(found, many=True).data)

    @extend_schema(
        operation_id="electronic_specialities_create",
        summary="Propose a speciality in a room: version 1 of its rules, a pool per accumulated prize",
        description=(
            "Four eyes: answers 202 with the proposal (kind speciality.create); the speciality is created "
            "when a second operator approves it with their own password (POST /api/proposals/{id}/approve/)."
            " 400 bad_rules (every problem named) / bad_params / bad_authorisation / speciality_taken "
            "(nothing written)."
        ),
        request=SpecialityCreateSerializer,
        responses={202: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id)
        data = valid(SpecialityCreateSerializer, request.data)
        room = access.get_for_user(
            Room.objects.filter(venue=venue).select_related("venue"),
            request.user,
            OPERATOR,
            label="room",
            pk=data["room"],
        )
        proposal = proposals.propose(
            venue=venue,
            kind=four_eyes.SPECIALITY_CREATE,
            target=foureyes.target_of("room", room.pk),
            params={
                "code": data["code"],
                "name": data["name"],
                "rules": data["rules"],
                "authorisation_ref": data["authorisation_ref"],
            },
            actor=actor(request),
        )
        return proposed(proposal)


class SpecialityView(HallAPIView):
    @extend_schema(
        operation_id="electronic_specialities_detail",
        summary="A speciality with its versions, open session and latest verification (operator)",
        responses={200: SpecialityDetailSerializer, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, speciality_id: int) -> Response:
        return Response(_detail(_speciality(request, speciality_id)))


class VersionsView(HallAPIView):
    @extend_schema(
        operation_id="electronic_specialities_add_version",
        summary="Propose a new version of a speciality's rules (its prize table), in force from a date",
        description=(
            "Four eyes: answers 202 with the proposal (kind speciality.rules); the version is added (games "
            "created after play it) when a second operator approves it with their own password. 400 "
            "bad_rules / bad_effective_from / bad_params (nothing written); at the approval 409 "
            "family_changed."
        ),
        request=VersionCreateSerializer,
        responses={202: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, speciality_id: int) -> Response:
        speciality = _speciality(request, speciality_id)
        data = valid(VersionCreateSerializer, request.data)
        start = data.get("effective_from")
        proposal = proposals.propose(
            venue=speciality.venue,
            kind=four_eyes.SPECIALITY_RULES,
            target=foureyes.target_of("speciality", speciality.pk),
            params={
                "rules": data["rules"],
                "effective_from": start.isoformat() if start else None,
                "authorisation_ref": data["authorisation_ref"],
            },
            actor=actor(request),
        )
        return proposed(proposal)


class RunningView(HallAPIView):
    @extend_schema(
        operation_id="electronic_specialities_running",
        summary="Start or stop a speciality's games (operator)",
        description=(
            "Started with a session open, its next game opens its sales now; stopped, the game in play ends "
            "as usual and no next game starts."
        ),
        request=RunningSerializer,
        responses={200: SpecialityDetailSerializer, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def post(self, request: Request, speciality_id: int) -> Response:
        speciality = _speciality(request, speciality_id)
        data = valid(RunningSerializer, request.data)
        changed = games.set_running(speciality=speciality, running=data["running"], actor=actor(request))
        return Response(_detail(changed))


class WatchDeviceSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField(help_text="screen (a hall screen) or terminal (a player terminal).")
    id = serializers.IntegerField()
    name = serializers.CharField()
    shown = serializers.BooleanField(help_text="It acknowledged showing the current ball.")
    late = serializers.BooleanField(help_text="Not shown, and the ball was drawn more than late_after s ago.")
    shown_at = serializers.DateTimeField(allow_null=True, help_text="When it rendered the ball (its clock).")
    last_ack_at = serializers.DateTimeField(
        allow_null=True, help_text="Its latest acknowledgement of anything."
    )


class WatchSerializer(serializers.Serializer[Any]):
    game = serializers.IntegerField(allow_null=True)
    ball = serializers.IntegerField(allow_null=True)
    ordinal = serializers.IntegerField(required=False)
    drawn_at = serializers.DateTimeField(required=False)
    late_after = serializers.FloatField()
    screens = WatchDeviceSerializer(many=True)


class ScreensWatchView(HallAPIView):
    @extend_schema(
        operation_id="electronic_specialities_screens",
        summary="Has each screen and terminal shown the current ball? (operator; from their acks)",
        description=(
            "The speciality's game drawing, its last ball, and per hall screen of its room and per terminal "
            "whether it acknowledged showing it; `late` once HALL_ACK_LATE_SECONDS have passed without it."
        ),
        responses={200: WatchSerializer, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, speciality_id: int) -> Response:
        speciality = _speciality(request, speciality_id)
        return Response(WatchSerializer(screen_acks.operator_watch(speciality)).data)


# --- Terminals ------------------------------------------------------------------------------------------


class TerminalsView(HallAPIView):
    @extend_schema(
        operation_id="electronic_terminals_list",
        summary="A speciality's terminals with what they last reported (operator)",
        responses={200: TerminalSerializer(many=True), **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, speciality_id: int) -> Response:
        speciality = _speciality(request, speciality_id)
        found = Terminal.objects.filter(speciality=speciality).select_related("device").order_by("pk")
        return Response(TerminalSerializer(found, many=True).data)

    @extend_schema(
        operation_id="electronic_terminals_register",
        summary="Register a terminal of the speciality: its device token is shown this once",
        description="It plays once a verification has passed it. 409 device_name_taken.",
        request=TerminalCreateSerializer,
        responses={201: TerminalTokenSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, speciality_id: int) -> Response:
        speciality = _speciality(request, speciality_id)
        data = valid(TerminalCreateSerializer, request.data)
        terminal, token = terminals.register_terminal(
            speciality=speciality, name=data["name"], actor=actor(request)
        )
        return Response(
            TerminalTokenSerializer({"terminal": terminal, "token": token}).data,
            status=status.HTTP_201_CREATED,
        )


class TerminalRotateView(HallAPIView):
    @extend_schema(
        operation_id="electronic_terminals_rotate_token",
        summary="A new device token for a terminal; the old one stops working (operator)",
        description="409 device_retired.",
        request=None,
        responses={200: TerminalTokenSerializer, **error_responses(403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, terminal_id: int) -> Response:
        terminal = _terminal(request, terminal_id)
        token = terminals.rotate_token(terminal=terminal, actor=actor(request))
        return Response(TerminalTokenSerializer({"terminal": terminal, "token": token}).data)


class TerminalStateView(HallAPIView):
    @extend_schema(
        operation_id="electronic_terminals_set_state",
        summary="Take a terminal out of service or put it back (operator)",
        description=(
            "400 bad_state; 409 terminal_failed (a terminal that failed its verification returns by passing "
            "one) / device_retired."
        ),
        request=TerminalStateSerializer,
        responses={200: TerminalSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, terminal_id: int) -> Response:
        terminal = _terminal(request, terminal_id)
        data = valid(TerminalStateSerializer, request.data)
        changed = terminals.set_state(
            terminal=terminal, state=data["state"], reason=data["reason"], actor=actor(request)
        )
        return Response(TerminalSerializer(changed).data)


# --- Terminal software ----------------------------------------------------------------------------------


class SoftwareView(HallAPIView):
    @extend_schema(
        operation_id="electronic_software_list",
        summary="The venue's terminal software versions, approved and withdrawn (operator)",
        responses={200: SoftwareSerializer(many=True), **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id)
        found = TerminalSoftware.objects.filter(venue=venue).order_by("version")
        return Response(SoftwareSerializer(found, many=True).data)

    @extend_schema(
        operation_id="electronic_software_approve",
        summary="Approve a terminal software version (a withdrawn one approved again)",
        description="400 bad_version / bad_authorisation; 409 already_approved.",
        request=SoftwareCreateSerializer,
        responses={201: SoftwareSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id)
        data = valid(SoftwareCreateSerializer, request.data)
        software = verification.approve_software(
            venue=venue,
            version=data["version"],
            authorisation_ref=data["authorisation_ref"],
            actor=actor(request),
        )
        return Response(SoftwareSerializer(software).data, status=status.HTTP_201_CREATED)


class SoftwareWithdrawView(HallAPIView):
    @extend_schema(
        operation_id="electronic_software_withdraw",
        summary="Withdraw a terminal software version: its terminals fail their next verification",
        description="409 already_withdrawn.",
        request=None,
        responses={200: SoftwareSerializer, **error_responses(403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, software_id: int) -> Response:
        software = _software(request, software_id)
        return Response(
            SoftwareSerializer(verification.withdraw_software(software=software, actor=actor(request))).data
        )


# --- Verification ---------------------------------------------------------------------------------------


class VerificationsView(HallAPIView):
    @extend_schema(
        operation_id="electronic_verifications_list",
        summary="A speciality's verifications, newest first (operator)",
        responses={200: VerificationSerializer(many=True), **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, speciality_id: int) -> Response:
        speciality = _speciality(request, speciality_id)
        found = Verification.objects.filter(speciality=speciality).order_by("-finished_at", "-pk")[:100]
        return Response(VerificationSerializer(found, many=True).data)

    @extend_schema(
        operation_id="electronic_verifications_run",
        summary="Run the verification: the system, the RNG self-tests and every terminal, recorded",
        description=(
            "201 with the run, passed or not (a failed terminal is put out of play; a failed system or RNG "
            "check keeps the session from opening). 409 session_open: close the session first."
        ),
        request=None,
        responses={201: VerificationDetailSerializer, **error_responses(403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, speciality_id: int) -> Response:
        speciality = _speciality(request, speciality_id)
        run = verification.run_verification(speciality=speciality, actor=actor(request))
        return Response(VerificationDetailSerializer(run).data, status=status.HTTP_201_CREATED)


class VerificationView(HallAPIView):
    @extend_schema(
        operation_id="electronic_verifications_detail",
        summary="A verification with every terminal's checks (operator)",
        responses={200: VerificationDetailSerializer, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, verification_id: int) -> Response:
        return Response(VerificationDetailSerializer(_verification(request, verification_id)).data)


# --- Sessions -------------------------------------------------------------------------------------------


class SessionsView(HallAPIView):
    @extend_schema(
        operation_id="electronic_sessions_list",
        summary="A speciality's sessions, newest first (operator)",
        responses={200: ElectronicSessionSerializer(many=True), **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, speciality_id: int) -> Response:
        speciality = _speciality(request, speciality_id)
        found = ElectronicSession.objects.filter(speciality=speciality).order_by("-opened_at", "-pk")[:100]
        return Response(ElectronicSessionSerializer(found, many=True).data)

    @extend_schema(
        operation_id="electronic_sessions_open",
        summary="Open a session on the latest verification (passed, recent, not used before)",
        description=(
            "409 session_already_open / verification_missing / verification_failed (the failed checks named) "
            "/ verification_stale."
        ),
        request=None,
        responses={201: ElectronicSessionSerializer, **error_responses(403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, speciality_id: int) -> Response:
        speciality = _speciality(request, speciality_id)
        session = sessions.open_session(speciality=speciality, actor=actor(request))
        return Response(ElectronicSessionSerializer(session).data, status=status.HTTP_201_CREATED)


class SessionCloseView(HallAPIView):
    @extend_schema(
        operation_id="electronic_sessions_close",
        summary="Close a session: no new game and no purchase; the games already created complete",
        description="409 session_closed.",
        request=None,
        responses={200: ElectronicSessionSerializer, **error_responses(403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, session_id: int) -> Response:
        session = _session(request, session_id)
        return Response(
            ElectronicSessionSerializer(sessions.close_session(session=session, actor=actor(request))).data
        )


SPECIALITY = "specialities/<int:speciality_id>/"
urlpatterns = [
    path("venues/<int:venue_id>/specialities/", SpecialitiesView.as_view(), name="electronic-specialities"),
    path(SPECIALITY, SpecialityView.as_view(), name="electronic-speciality"),
    path(SPECIALITY + "versions/", VersionsView.as_view(), name="electronic-versions"),
    path(SPECIALITY + "running/", RunningView.as_view(), name="electronic-running"),
    path(SPECIALITY + "screens/", ScreensWatchView.as_view(), name="electronic-screens"),
    path(SPECIALITY + "terminals/", TerminalsView.as_view(), name="electronic-terminals"),
    path(SPECIALITY + "verifications/", VerificationsView.as_view(), name="electronic-verifications"),
    path(SPECIALITY + "sessions/", SessionsView.as_view(), name="electronic-sessions"),
    path(
        "terminals/<int:terminal_id>/rotate-token/",
        TerminalRotateView.as_view(),
        name="electronic-terminal-rotate",
    ),
    path("terminals/<int:terminal_id>/state/", TerminalStateView.as_view(), name="electronic-terminal-state"),
    path("venues/<int:venue_id>/software/", SoftwareView.as_view(), name="electronic-software"),
    path(
        "software/<int:software_id>/withdraw/",
        SoftwareWithdrawView.as_view(),
        name="electronic-software-withdraw",
    ),
    path("verifications/<int:verification_id>/", VerificationView.as_view(), name="electronic-verification"),
    path("sessions/<int:session_id>/close/", SessionCloseView.as_view(), name="electronic-session-close"),
]
