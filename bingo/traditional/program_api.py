"""REST doors of the accumulated prize programs (bolsa acumulada): programs, versions, picks, simulation.

Thin doors (DESIGN §3), like bingo/traditional/api.py: validate with a serializer, find the room, program or
game
through halls.access (another venue's object answers 404 unknown_<thing>), check the role, call ONE service
of `bingo.traditional.services.programs`, render its read model. A refused configuration answers 400
bad_program with
every problem listed in `details.problems`; nothing is written.

Roles: anyone of the venue reads; the operator activates, versions, deactivates and funds the Bolsa, and
simulates; the caller (the hall manager's hand at the control table) or the operator sets a game's pick.

Four eyes (issue 28): activating a program and changing its terms are *proposed* here (202 with the
proposal, halls.foureyes kinds ``program.activate`` / ``program.change``); the prize table to post in the
hall is printed from the proposal (``signage``), and a second operator approves it on the proposals
page or API with their own password and the digest printed on the posted sheet: only then is it in force.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.http import HttpResponse
from django.urls import URLPattern, URLResolver, path, reverse
from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from bingo.traditional.models import Game, GamePick, PrizeProgram, RoomBolsa
from bingo.traditional.program_serializers import (
    BolsaRequestSerializer,
    BolsaSerializer,
    PickRequestSerializer,
    PickSerializer,
    ProgramActivateSerializer,
    ProgramDetailSerializer,
    ProgramSerializer,
    ProgramTypeSerializer,
    ProgramVersionCreateSerializer,
    SimulationRequestSerializer,
    SimulationSerializer,
)
from bingo.traditional.programs import Program, ProgramError, make_program
from bingo.traditional.programs.plot import render_svg
from bingo.traditional.programs.regulation import HallCategory
from bingo.traditional.programs.rules import Funding
from bingo.traditional.programs.simulate import SalesProfile, SimulationError, simulate
from bingo.traditional.services import four_eyes, programs
from bingo.traditional.services.programs.refusals import refused
from bingo.traditional.signage import prize_table_pdf
from halls import access, foureyes, i18n
from halls.api import ANY_ROLE, HallAPIView, actor, valid
from halls.errors import InvalidInput, NotFound
from halls.models import Proposal, Role, Room
from halls.proposals_api import proposed
from halls.proposals_serializers import ProposalSerializer
from halls.serializers import error_responses
from halls.services import proposals
from jackpots.services.amounts import display
from jackpots.services.readmodels.meters import pool_meters

TAGS = ["programs"]
CONFIG_ERRORS = (
    "400 bad_program lists every problem of the parameters in details.problems (e.g. a Bingo Extra order "
    "below the floor of 50, a Colour Prima over 500 €, an unknown colour), 400 schedule_overlap when the "
    "room's scheduled programs would claim the same game"
)

# --- lookups (all through halls.access) -----------------------------------------------------------------


def _room(request: Request, room_id: int, *roles: str) -> Room:
    return access.get_for_user(
        Room.objects.select_related("venue"), request.user, *roles, label="room", pk=room_id
    )


def _program(request: Request, program_id: int, *roles: str) -> PrizeProgram:
    return access.get_for_user(
        PrizeProgram.objects.select_related("room__venue"),
        request.user,
        *roles,
        venue_path="room.venue_id",
        label="program",
        pk=program_id,
    )


def _game(request: Request, game_id: int, *roles: str) -> Game:
    return access.get_for_user(
        Game.objects.select_related("room__venue"),
        request.user,
        *roles,
        venue_path="room.venue_id",
        label="game",
        pk=game_id,
    )


def _program_of_room(request: Request, room: Room, program_id: int, *roles: str) -> PrizeProgram:
    """A program named in a body: one of this room's (another room's answers 404 like an unknown one)."""
    return access.get_for_user(
        PrizeProgram.objects.filter(room=room).select_related("room__venue"),
        request.user,
        *roles,
        venue_path="room.venue_id",
        label="program",
        pk=program_id,
    )


# --- renderings -----------------------------------------------------------------------------------------


def _proposed(proposal: Proposal) -> Response:
    """202 (halls.proposals_api.proposed): the change waits for its second person; `signage` is the prize
    table to post, `terms_page` the public page its QR code opens."""
    answer = proposed(proposal)
    answer.data["signage"] = reverse("api-program-signage", args=[proposal.pk])
    answer.data["terms_page"] = reverse("bingo:program-terms", args=[proposal.digest])
    return answer


def _bolsa_data(bolsa: RoomBolsa) -> dict[str, Any]:
    meter = pool_meters([bolsa.pool_id]).get(bolsa.pool_id)
    amount = meter.levels[0].amount if meter and meter.levels else Decimal(0)
    return {
        "room": bolsa.room_id,
        "pool": bolsa.pool_id,
        "funding_percent": bolsa.funding_percent,
        "authorisation_ref": bolsa.authorisation_ref,
        "amount": display(amount),
        "created_at": bolsa.created_at,
        "updated_at": bolsa.updated_at,
    }


def _pick_data(pick: GamePick) -> dict[str, Any]:
    return {
        "id": pick.pk,
        "game": pick.game_id,
        "program": pick.program_id,
        "amount": pick.amount,
        "max_ball": pick.max_ball,
        "colour": pick.colour,
        "set_by": pick.set_by.get_username() if pick.set_by else None,
        "set_at": pick.set_at,
    }


def _bad_program(exc: ProgramError) -> InvalidInput:
    return refused(exc.problems, code="bad_program")


# --- the simulator (pure: bingo.traditional.programs.simulate), shared with the admin's "Simulate" action
# ------------


def program_from_params(program_type: str, params: dict[str, Any]) -> Program:
    """The program these parameters would make now, or 400 bad_program listing every problem."""
    try:
        return make_program(program_type, params, program_id="simulation", effective_from=timezone.now())
    except ProgramError as exc:
        raise _bad_program(exc) from exc


def run_simulation(
    *,
    program: Program,
    room: Room,
    profile: dict[str, Any],
    days: int,
    seed: int,
    bolsa_percent: Decimal | None = None,
) -> dict[str, Any]:
    """Play `days` simulated days of `program` in `room`'s hall category and time zone; writes nothing.

    Answers {"report": JSON summary, "text": the readable report, "svg": the plot}. A Super or Colour Prima
    is paid from the Bolsa Acumulada: its funding is `bolsa_percent`, else the room's Bolsa's.
    """
    if program.info.funding is Funding.BOLSA_ACUMULADA:
        if bolsa_percent is None:
            held = RoomBolsa.objects.filter(room=room).values_list("funding_percent", flat=True)
            bolsa_percent = held.first()
        if bolsa_percent is None:
            raise InvalidInput(
                _(
                    "%(label)s is paid from the Bolsa Acumulada and room %(name)s "
                    "has none: give the Bolsa's funding percentage (bolsa_percent)."
                )
                % {"label": program.label, "name": room.name},
                code="bolsa_percent_required",
            )
    else:
        bolsa_percent = None
    try:
        report = simulate(
            program,
            SalesProfile(
                games_per_day=profile["games_per_day"],
                cards_per_game=profile["cards_per_game"],
                cards_spread=profile.get("spread", 40),
                card_price=profile.get("price", Decimal("1.00")),
                first_game=profile.get("first_game", SalesProfile.first_game),
                minutes_per_game=profile.get("minutes_per_game", SalesProfile.minutes_per_game),
                hall_category=HallCategory(room.venue.hall_category),
                time_zone=room.venue.time_zone,
                start_date=profile.get("start_date") or timezone.localdate(),
            ),
            days=days,
            seed=seed,
            bolsa_percent=bolsa_percent,
        )
    except ProgramError as exc:
        raise _bad_program(exc) from exc
    except SimulationError as exc:
        raise refused(exc.problems, code="bad_simulation") from exc
    return {
        "report": report.to_dict(),
        "text": report.text(),
        "svg": render_svg(
            report,
            amount=i18n.amount,
            translate=_,
            ngettext=ngettext,
            number=lambda value: formats.number_format(value, decimal_pos=2),
        ),
    }


# --- views ----------------------------------------------------------------------------------------------


class ProgramTypeListView(HallAPIView):
    @extend_schema(
        operation_id="program_types_list",
        summary="The program types BA-1 … BA-20: name, family, citation and the parameters each takes",
        responses={200: ProgramTypeSerializer(many=True), **error_responses()},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        return Response(ProgramTypeSerializer(programs.program_types(), many=True).data)


class RoomProgramListView(HallAPIView):
    @extend_schema(
        operation_id="rooms_programs_list",
        summary="The room's prize programs, with their pools' amounts",
        responses={200: ProgramSerializer(many=True), **error_responses(404)},
        tags=TAGS,
    )
    def get(self, request: Request, room_id: int) -> Response:
        room = _room(request, room_id, *ANY_ROLE)
        return Response(ProgramSerializer(programs.room_programs(room), many=True).data)

    @extend_schema(
        operation_id="rooms_programs_activate",
        summary="Propose activating a prize program in the room (operator; a second operator approves)",
        description=(
            "Operator. Four eyes: answers 202 with the proposal (kind program.activate; its params are the "
            "program's terms, its digest what the posted prize table prints), `signage` (the prize table "
            "PDF to post) and `terms_page` (the public page its QR code opens). The program is activated, "
            "with its pool, when a second operator approves it (POST /api/proposals/{id}/approve/ with "
            f"their password and the posted digest). {CONFIG_ERRORS}; 400 bad_program_code, "
            "bad_effective_from (nothing is written)."
        ),
        request=ProgramActivateSerializer,
        responses={202: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, room_id: int) -> Response:
        room = _room(request, room_id, Role.OPERATOR)
        data = valid(ProgramActivateSerializer, request.data)
        effective_from = data["effective_from"]
        proposal = proposals.propose(
            venue=room.venue,
            kind=four_eyes.PROGRAM_ACTIVATE,
            target=foureyes.target_of("room", room.pk),
            params={
                "code": data["code"],
                "program_type": data["program_type"],
                "params": data["params"],
                "effective_from": effective_from.isoformat() if effective_from else None,
                "name": data["name"],
            },
            actor=actor(request),
        )
        return _proposed(proposal)


class ProgramDetailView(HallAPIView):
    @extend_schema(
        operation_id="programs_retrieve",
        summary="A prize program: its versions, step state, pool amount and latest games",
        responses={200: ProgramDetailSerializer, **error_responses(404)},
        tags=TAGS,
    )
    def get(self, request: Request, program_id: int) -> Response:
        program = _program(request, program_id, *ANY_ROLE)
        return Response(ProgramDetailSerializer(programs.program_view(program)).data)


class ProgramVersionListView(HallAPIView):
    @extend_schema(
        operation_id="programs_versions_create",
        summary="Propose a new version of the program's parameters (operator; a second operator approves)",
        description=(
            "Operator. Four eyes: answers 202 with the proposal (kind program.change), its `signage` and "
            "`terms_page`, as an activation. A change is a new version, never an edit (BA-G3), made when a "
            f"second operator approves it. {CONFIG_ERRORS}; 400 bad_effective_from; 409 program_inactive "
            "(nothing written); a game in play at the approval refuses it (409 game_in_play)."
        ),
        request=ProgramVersionCreateSerializer,
        responses={202: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, program_id: int) -> Response:
        program = _program(request, program_id, Role.OPERATOR)
        data = valid(ProgramVersionCreateSerializer, request.data)
        effective_from = data["effective_from"]
        proposal = proposals.propose(
            venue=program.room.venue,
            kind=four_eyes.PROGRAM_CHANGE,
            target=foureyes.target_of("program", program.pk),
            params={
                "params": data["params"],
                "effective_from": effective_from.isoformat() if effective_from else None,
            },
            actor=actor(request),
        )
        return _proposed(proposal)


class ProgramDeactivateView(HallAPIView):
    @extend_schema(
        operation_id="programs_deactivate",
        summary="Switch a program off (operator); its pool and history are kept",
        description="Operator. 409 game_in_play while a game of the room is in play, 409 program_inactive.",
        request=None,
        responses={200: ProgramDetailSerializer, **error_responses(403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, program_id: int) -> Response:
        program = _program(request, program_id, Role.OPERATOR)
        program = programs.deactivate_program(program=program, actor=actor(request))
        return Response(ProgramDetailSerializer(programs.program_view(program)).data)


class ProgramSignageView(HallAPIView):
    @extend_schema(
        operation_id="program_proposals_signage",
        summary="The prize table to post in the hall, printed from a program proposal (PDF)",
        description=(
            "Operator or caller of the venue. The proposal's terms (program.activate / program.change), a QR "
            "code of their public page and their digest in groups of four: the approver types (or scans) "
            "that digest. 404 unknown_proposal for another venue's proposal or one of another kind."
        ),
        responses={(200, "application/pdf"): bytes, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, proposal_id: int) -> HttpResponse:
        proposal = access.get_for_user(
            Proposal.objects.filter(kind__in=four_eyes.PROGRAM_KINDS).select_related("venue"),
            request.user,
            Role.OPERATOR,
            Role.CALLER,
            venue_path="venue_id",
            label="proposal",
            pk=proposal_id,
        )
        room = Room.objects.filter(pk=proposal.params.get("room"), venue=proposal.venue).first()
        if room is None:
            raise NotFound(_("The proposal's room is gone."), code="unknown_room")
        url = request.build_absolute_uri(reverse("bingo:program-terms", args=[proposal.digest]))
        pdf = prize_table_pdf(
            terms=proposal.params,
            digest=proposal.digest,
            url=url,
            venue=proposal.venue.name,
            room=room.name,
            proposal=proposal.pk,
            currency=proposal.venue.currency,
        )
        answer = HttpResponse(pdf, content_type="application/pdf")
        answer["Content-Disposition"] = f'inline; filename="prize-table-{proposal.pk}.pdf"'
        return answer


class RoomBolsaView(HallAPIView):
    @extend_schema(
        operation_id="rooms_bolsa_set",
        summary="Open the room's Bolsa Acumulada, or change its funding percentage (operator)",
        description=(
            "Operator. The Bolsa pays the Super Prima and the Colour Prima (BA-G2, OP-36); it is funded at "
            "each close of sales with this percentage of the cards sold. 201 when opened, 200 when changed. "
            "400 bad_program (a percentage out of range or with more than 2 decimals), "
            "authorisation_required, no_change; 409 game_in_play while a game of the room is in play."
        ),
        request=BolsaRequestSerializer,
        responses={
            201: BolsaSerializer,
            200: OpenApiResponse(BolsaSerializer, description="The funding of an open Bolsa changed."),
            **error_responses(400, 403, 404, 409),
        },
        tags=TAGS,
    )
    def post(self, request: Request, room_id: int) -> Response:
        room = _room(request, room_id, Role.OPERATOR)
        data = valid(BolsaRequestSerializer, request.data)
        if RoomBolsa.objects.filter(room=room).exists():
            bolsa = programs.change_bolsa(room=room, actor=actor(request), **data)
            answer: int = status.HTTP_200_OK
        else:
            bolsa = programs.open_bolsa(room=room, actor=actor(request), **data)
            answer = status.HTTP_201_CREATED
        return Response(BolsaSerializer(_bolsa_data(bolsa)).data, status=answer)


class GamePickView(HallAPIView):
    @extend_schema(
        operation_id="games_picks_set",
        summary="The hall manager's pick for a game: Bingo Extra order, Super Prima, Colour Prima (caller)",
        description=(
            "Caller or operator, while the game is scheduled or on sale. A new pick for the same program "
            "replaces the earlier one. 400 bad_pick names what the rules refuse (a colour not of the ball "
            "set, an amount over 500 € for the Colour Prima, an order below 50 for the Bingo Extra, a Bolsa "
            "that cannot pay it...), bad_amount, bad_max_ball; 404 unknown_program for a program of another "
            "room; 409 wrong_state once sales are closed, program_inactive, no_version_in_force."
        ),
        request=PickRequestSerializer,
        responses={201: PickSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, Role.CALLER)
        data = valid(PickRequestSerializer, request.data)
        program = _program_of_room(request, game.room, data["program"], Role.CALLER)
        pick = programs.set_manager_pick(
            game=game,
            program=program,
            amount=data["amount"],
            max_ball=data["max_ball"],
            colour=data["colour"],
            actor=actor(request),
        )
        return Response(PickSerializer(_pick_data(pick)).data, status=status.HTTP_201_CREATED)


class SimulationView(HallAPIView):
    @extend_schema(
        operation_id="program_simulations_run",
        summary="Simulate a program before switching it on: many days of games with the real prize logic",
        description=(
            "Operator. Either a program of your venues (its version in force) or a room with program_type "
            "and params; a sales profile (games per day, cards per game, spread, price), days and seed. "
            "Answers the report (hit frequency, prizes, days to trigger, share of sales returned) and an SVG "
            "plot. Writes nothing. 400 bad_program lists every problem of the parameters, bad_simulation "
            "what the simulator cannot play, bolsa_percent_required for a Super/Colour Prima in a room "
            "without a Bolsa Acumulada; 404 no_version_in_force."
        ),
        request=SimulationRequestSerializer,
        responses={200: SimulationSerializer, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(SimulationRequestSerializer, request.data)
        if data["program"] is not None:
            found = _program(request, data["program"], Role.OPERATOR)
            room = found.room
            program = programs.current_version(found)
        else:
            room = _room(request, data["room"], Role.OPERATOR)
            program = program_from_params(data["program_type"], data["params"])
        result = run_simulation(
            program=program,
            room=room,
            profile=data["profile"],
            days=data["days"],
            seed=data["seed"],
            bolsa_percent=data["bolsa_percent"],
        )
        return Response(SimulationSerializer(result).data)


urlpatterns: list[URLPattern | URLResolver] = [
    path("program-types/", ProgramTypeListView.as_view(), name="api-program-types"),
    path("rooms/<int:room_id>/programs/", RoomProgramListView.as_view(), name="api-room-programs"),
    path("rooms/<int:room_id>/bolsa/", RoomBolsaView.as_view(), name="api-room-bolsa"),
    path("programs/<int:program_id>/", ProgramDetailView.as_view(), name="api-program"),
    path(
        "programs/<int:program_id>/versions/", ProgramVersionListView.as_view(), name="api-program-versions"
    ),
    path(
        "programs/<int:program_id>/deactivate/",
        ProgramDeactivateView.as_view(),
        name="api-program-deactivate",
    ),
    path("games/<int:game_id>/picks/", GamePickView.as_view(), name="api-game-picks"),
    path(
        "program-proposals/<int:proposal_id>/signage.pdf",
        ProgramSignageView.as_view(),
        name="api-program-signage",
    ),
    path("program-simulations/", SimulationView.as_view(), name="api-program-simulations"),
]
