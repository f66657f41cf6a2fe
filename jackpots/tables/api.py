"""REST doors of the casino tables: tables with their pool meter, and a hand's commands for the croupier.

Roles: there is no croupier role in halls (halls.models.Role is operator / caller / cashier, and this app
does not change it). A table console is run by staff who hold the CALLER role in the venue (the person
running play at a table or a bingo room) or the OPERATOR role (every right); cashiers and staff of other
venues may read the tables of their venues but not run hands (403 role_required / 404 unknown_table).

Each view validates its body with a serializer, finds its object through halls.access, calls ONE service
and renders the read model. Refusals are DomainErrors rendered as {"error": {"code", "message", ...}}.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import Q
from django.urls import path
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access, money
from halls.api import ANY_ROLE, HallAPIView, actor, valid
from halls.errors import NotFound
from halls.models import Role, Venue
from halls.proposals_api import proposed
from halls.proposals_serializers import ProposalSerializer
from halls.serializers import error_responses
from halls.services import proposals
from jackpots.models import Pool
from jackpots.tables import rules
from jackpots.tables.models import CasinoTable, Hand, TableDrop
from jackpots.tables.serializers import (
    BetsRequestSerializer,
    CardsRequestSerializer,
    CarruselCreateSerializer,
    CarruselFormSerializer,
    HandOpenSerializer,
    HandViewSerializer,
    HandVoidSerializer,
    TableCreateSerializer,
    TableDetailSerializer,
    TableJoinSerializer,
    TableQuerySerializer,
    TableSerializer,
    TableStateSerializer,
)
from jackpots.tables.services import drops, hands, proposal_kinds, readmodels
from jackpots.tables.services import tables as table_services

# Who runs a table console (see the module docstring); the operator holds every role anyway.
CROUPIER = Role.CALLER
TAG = "tables"


def _table(request: Request, table_id: int, *roles: str) -> CasinoTable:
    return access.get_for_user(
        CasinoTable.objects.select_related("venue", "pool"), request.user, *roles, label="table", pk=table_id
    )


def _hand(request: Request, hand_id: int, *roles: str) -> Hand:
    return access.get_for_user(
        Hand.objects.select_related("table", "table__venue", "table__pool", "opened_by"),
        request.user,
        *roles,
        venue_path="table.venue_id",
        label="hand",
        pk=hand_id,
    )


def _hand_answer(hand: Hand, code: int = status.HTTP_200_OK) -> Response:
    return Response(HandViewSerializer(readmodels.hand_view(hand)).data, status=code)


def _created(written_at: datetime, started: datetime) -> int:
    return status.HTTP_201_CREATED if written_at >= started else status.HTTP_200_OK


HAND_ERRORS = "404 unknown_hand; 409 hand_settled / hand_void (the hand is not open)"


class TableListView(HallAPIView):
    @extend_schema(
        operation_id="tables_list",
        summary="Casino tables of your venues, with their pool meter",
        parameters=[TableQuerySerializer],
        responses={200: TableSerializer(many=True), **error_responses(400)},
        tags=[TAG],
    )
    def get(self, request: Request) -> Response:
        query = valid(TableQuerySerializer, request.query_params)
        found = CasinoTable.objects.filter(venue_id__in=access.venue_ids_for(request.user))
        if query.get("venue") is not None:
            found = found.filter(venue_id=query["venue"])
        found = found.order_by("venue_id", "number")
        return Response(TableSerializer(readmodels.table_views(found), many=True).data)

    @extend_schema(
        operation_id="tables_create",
        summary="Create a casino table (operator)",
        description=(
            "400 unknown_game, unknown_rule_pack, rule_pack_jurisdiction (a pack of another jurisdiction), "
            "game_not_in_pack, bad_seats, bad_amount; 409 table_number_taken. A póquer sin descarte table "
            "of a venue whose carrusel is formed by all those tables (ML art. 61, AN96) joins it at once."
        ),
        request=TableCreateSerializer,
        responses={201: TableDetailSerializer, **error_responses(400, 403, 404, 409)},
        tags=[TAG],
    )
    def post(self, request: Request) -> Response:
        data = valid(TableCreateSerializer, request.data)
        venue = access.get_for_user(
            Venue.objects.all(), request.user, Role.OPERATOR, venue_path="pk", label="venue", pk=data["venue"]
        )
        table = table_services.create_table(
            venue=venue,
            number=data["number"],
            name=data["name"],
            game=data["game"],
            table_minimum=data["table_minimum"],
            rule_pack=data["rule_pack"],
            seats=data.get("seats"),
            layout=data["layout"],
            actor=actor(request),
        )
        table = _table(request, table.pk, Role.OPERATOR)
        return Response(
            TableDetailSerializer(readmodels.table_view(table)).data, status=status.HTTP_201_CREATED
        )


class TablePoolView(HallAPIView):
    @extend_schema(
        operation_id="tables_pool_join",
        summary="Propose joining the table to a pool (operator): its pool bets play into it once a second "
        "operator approves (four eyes)",
        description=(
            "400 pool_pack_mismatch, pool_bet_over_limit, carrusel_needs_all_tables (the pool is a carrusel "
            "of all the tables of its game and others are missing: join them together through "
            "POST /api/pools/{id}/tables/); 404 unknown_table / unknown_pool; 409 already_in_pool, "
            "pool_inactive, paytable_awaiting_authorisation."
        ),
        request=TableJoinSerializer,
        responses={202: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=[TAG],
    )
    def post(self, request: Request, table_id: int) -> Response:
        table = _table(request, table_id, Role.OPERATOR)
        data = valid(TableJoinSerializer, request.data)
        pool = _pool(request, data["pool"])
        proposal = proposals.propose(
            venue=table.venue,
            kind=proposal_kinds.JOIN,
            target=f"table:{table.pk}",
            params={"table": table.pk, "pool": pool.pk},
            actor=actor(request),
        )
        return proposed(proposal)

    @extend_schema(
        operation_id="tables_pool_leave",
        summary="Propose taking the table out of its pool (operator); a second operator approves it",
        description=(
            "409 no_pool, hand_open, carrusel_needs_all_tables (a carrusel of all the tables of its game "
            "keeps every one: close the table for a while instead)."
        ),
        request=None,
        responses={202: ProposalSerializer, **error_responses(403, 404, 409)},
        tags=[TAG],
    )
    def delete(self, request: Request, table_id: int) -> Response:
        table = _table(request, table_id, Role.OPERATOR)
        proposal = proposals.propose(
            venue=table.venue,
            kind=proposal_kinds.LEAVE,
            target=f"table:{table.pk}",
            params={"table": table.pk},
            actor=actor(request),
        )
        return proposed(proposal)


class CarruselView(HallAPIView):
    @extend_schema(
        operation_id="pools_tables_join",
        summary="Propose forming a carrusel: several tables join the pool at once, all or none, once a "
        "second operator approves (operator)",
        description=(
            "Where the pool's rule pack forms its carrusel with ALL the tables of its game in the room "
            "(Melilla art. 61, Andalucía 1996 Primero.8; spec §6.2, §6.5, §6.12), every such table must be "
            "named or already a member: 400 carrusel_needs_all_tables names the missing ones "
            "(details.missing: their numbers). Otherwise as POST /api/tables/{id}/pool/ for each table."
        ),
        request=CarruselFormSerializer,
        responses={202: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=[TAG],
    )
    def post(self, request: Request, pool_id: int) -> Response:
        pool = _pool(request, pool_id)
        data = valid(CarruselFormSerializer, request.data)
        chosen = [_table(request, pk, Role.OPERATOR) for pk in data["tables"]]
        proposal = proposals.propose(
            venue=chosen[0].venue,  # at least one (the serializer): the tables' venue proposes
            kind=proposal_kinds.CARRUSEL,
            target=f"pool:{pool.pk}",
            params={"pool": pool.pk, "tables": [t.pk for t in chosen]},
            actor=actor(request),
        )
        return proposed(proposal)


class CarruselCreateView(HallAPIView):
    @extend_schema(
        operation_id="carrusels_create",
        summary="Create a carrusel pool over chosen tables, in one go (operator)",
        description=(
            "The pool (one level: seed, contribution rate, the stipulated bet) and its tables' memberships, "
            "all or nothing. Where the rule pack forms its carrusel with ALL the tables of its game in the "
            "room (Melilla art. 61, Andalucía 1996 Primero.8; spec §6.2, §6.5, §6.12), every such table must "
            "be named: 400 carrusel_needs_all_tables names the missing ones (details.missing: their "
            "numbers) and no pool is created. Also 400 unknown_rule_pack, rule_pack_jurisdiction, "
            "seed_below_minimum, carousel_bet_required, bad_rate, pool_pack_mismatch, pool_bet_over_limit, "
            "authorisation_required; 404 unknown_venue / unknown_table; 409 pool_code_taken, "
            "already_in_pool, paytable_awaiting_authorisation."
        ),
        request=CarruselCreateSerializer,
        responses={201: TableSerializer(many=True), **error_responses(400, 403, 404, 409)},
        tags=[TAG],
    )
    def post(self, request: Request) -> Response:
        data = valid(CarruselCreateSerializer, request.data)
        venue = access.get_for_user(
            Venue.objects.all(), request.user, Role.OPERATOR, venue_path="pk", label="venue", pk=data["venue"]
        )
        chosen = [_table(request, pk, Role.OPERATOR) for pk in data["tables"]]
        pool = table_services.create_carrusel(
            venue=venue,
            name=data["name"],
            code=data["code"],
            rule_pack=data["rule_pack"],
            authorisation_ref=data["authorisation_ref"],
            seed=data["seed"],
            contribution_rate=data["contribution_rate"],
            carousel_bet=data["carousel_bet"],
            tables=chosen,
            actor=actor(request),
        )
        joined = CasinoTable.objects.filter(pool=pool).order_by("number")
        return Response(
            TableSerializer(readmodels.table_views(joined), many=True).data, status=status.HTTP_201_CREATED
        )


class TableStateView(HallAPIView):
    @extend_schema(
        operation_id="tables_state",
        summary="Close the table for a while (out of service) or open it again (operator)",
        description=(
            "A closed table takes no hands (opening one answers 409 table_closed, nothing written), so it "
            "registers no pool bets and contributes nothing; it stays a member of its pool (spec §6.15: a "
            "carrusel of all the tables of its game still counts it) and its meter keeps showing the pool. "
            "400 reason_required (to close), reason_too_long; 409 hand_open (settle or void it first), "
            "already_closed, already_open."
        ),
        request=TableStateSerializer,
        responses={200: TableDetailSerializer, **error_responses(400, 403, 404, 409)},
        tags=[TAG],
    )
    def post(self, request: Request, table_id: int) -> Response:
        table = _table(request, table_id, Role.OPERATOR)
        data = valid(TableStateSerializer, request.data)
        table_services.set_table_state(
            table=table, state=data["state"], reason=data["reason"], actor=actor(request)
        )
        table = _table(request, table_id, Role.OPERATOR)
        return Response(TableDetailSerializer(readmodels.table_view(table)).data)


def _pool(request: Request, pool_id: int) -> Pool:
    """A pool the operator may join tables to: one of their venue's, or a network pool of theirs."""
    venue_ids = access.venue_ids_for(request.user)
    pool = (
        Pool.objects.select_related("network")
        .filter(Q(venue_id__in=venue_ids) | Q(network__venues__in=venue_ids), pk=pool_id)
        .first()
    )
    if pool is None:
        raise NotFound(_("No pool %(pool_id)s in your venues.") % {"pool_id": pool_id}, code="unknown_pool")
    if pool.venue_id is not None:
        access.require_role(request.user, pool.venue_id, Role.OPERATOR)
    return pool


class TableDetailView(HallAPIView):
    @extend_schema(
        operation_id="tables_retrieve",
        summary="A table: its pool meter, its pool-bet rules and its current hand",
        responses={200: TableDetailSerializer, **error_responses(404)},
        tags=[TAG],
    )
    def get(self, request: Request, table_id: int) -> Response:
        table = _table(request, table_id, *ANY_ROLE)
        return Response(TableDetailSerializer(readmodels.table_view(table)).data)


class HandOpenView(HallAPIView):
    @extend_schema(
        operation_id="tables_hands_open",
        summary="Open the table's next hand (caller / operator)",
        description=(
            "201 for a new hand, 200 for a retry with the same idempotency key. 404 unknown_table; 409 "
            "hand_open (one open hand per table), no_pool, table_closed, pool_inactive."
        ),
        request=HandOpenSerializer,
        responses={
            201: HandViewSerializer,
            200: OpenApiResponse(HandViewSerializer, description="A retry: the hand it opened."),
            **error_responses(400, 403, 404, 409),
        },
        tags=[TAG],
    )
    def post(self, request: Request, table_id: int) -> Response:
        table = _table(request, table_id, CROUPIER)
        data = valid(HandOpenSerializer, request.data)
        started = timezone.now()
        hand = hands.open_hand(table=table, actor=actor(request), idempotency_key=data.get("idempotency_key"))
        return _hand_answer(hand, _created(hand.opened_at, started))


class HandDetailView(HallAPIView):
    @extend_schema(
        operation_id="hands_retrieve",
        summary="A hand, seat by seat: bets, cards and rank, payouts",
        responses={200: HandViewSerializer, **error_responses(404)},
        tags=[TAG],
    )
    def get(self, request: Request, hand_id: int) -> Response:
        return _hand_answer(_hand(request, hand_id, *ANY_ROLE))


class BetsView(HallAPIView):
    @extend_schema(
        operation_id="hands_bets_register",
        summary="Register seats' pool bets, or the hand's total (EU b.1 manual entry)",
        description=(
            "Each seat's pool bet contributes to the pool once (a retry with the same amounts is a no-op). "
            "All or nothing. 400 unknown_seat, pool_bet_over_limit (above half the table minimum), "
            "initial_bet_required, pool_bet_not_stipulated, bad_amount, duplicate_seat, not_manual_entry, "
            f"manual_total_mismatch; {HAND_ERRORS}, bet_already_registered, bets_closed (cards are dealt), "
            "manual_total_registered."
        ),
        request=BetsRequestSerializer,
        responses={200: HandViewSerializer, **error_responses(400, 403, 404, 409)},
        tags=[TAG],
    )
    def post(self, request: Request, hand_id: int) -> Response:
        hand = _hand(request, hand_id, CROUPIER)
        data = valid(BetsRequestSerializer, request.data)
        bets = [
            rules.SeatBetInput(seat=b["seat"], initial_bet=Decimal(b["initial_bet"]), pool_bet=b["pool_bet"])
            for b in data.get("bets") or []
        ]
        hand = hands.register_bets(hand=hand, actor=actor(request), bets=bets, total=data.get("total"))
        return _hand_answer(hand)


class CardsView(HallAPIView):
    @extend_schema(
        operation_id="hands_cards_register",
        summary="Register seats' final cards (and a tripóquer table's community cards)",
        description=(
            "Cards are ranked by the pool's rule pack. All or nothing. 400 invalid_cards, duplicate_card "
            "(a card twice in one poker hand), wrong_card_count, unknown_seat, no_discard, no_extra_card, "
            f"no_community_cards, duplicate_seat; {HAND_ERRORS}, no_pool_bet (the seat made no pool bet), "
            "cards_already_registered. An extra card bought after a Euskadi jackpot bet forfeits that bet "
            "(JP-EU11-09): the seat shows forfeited=true."
        ),
        request=CardsRequestSerializer,
        responses={200: HandViewSerializer, **error_responses(400, 403, 404, 409)},
        tags=[TAG],
    )
    def post(self, request: Request, hand_id: int) -> Response:
        hand = _hand(request, hand_id, CROUPIER)
        data = valid(CardsRequestSerializer, request.data)
        seats = [
            rules.SeatCardsInput(
                seat=s["seat"], cards=s["cards"], discard=s["discard"], extra_card=s["extra_card"]
            )
            for s in data.get("seats") or []
        ]
        hand = hands.register_cards(
            hand=hand, actor=actor(request), seats=seats, community=data.get("community")
        )
        return _hand_answer(hand)


class SettleView(HallAPIView):
    @extend_schema(
        operation_id="hands_settle",
        summary="Settle the hand: the pool pays its prizes (once)",
        description=(
            f"{HAND_ERRORS} (settling twice is hand_settled), manual_total_missing, community_cards_missing."
        ),
        request=None,
        responses={200: HandViewSerializer, **error_responses(403, 404, 409)},
        tags=[TAG],
    )
    def post(self, request: Request, hand_id: int) -> Response:
        hand = hands.settle_hand(hand=_hand(request, hand_id, CROUPIER), actor=actor(request))
        return _hand_answer(hand)


class VoidView(HallAPIView):
    @extend_schema(
        operation_id="hands_void",
        summary="Void the hand, with a reason (no payouts; contributions stay in the pool's ledger)",
        description=f"400 reason_required; {HAND_ERRORS}.",
        request=HandVoidSerializer,
        responses={200: HandViewSerializer, **error_responses(400, 403, 404, 409)},
        tags=[TAG],
    )
    def post(self, request: Request, hand_id: int) -> Response:
        hand = _hand(request, hand_id, CROUPIER)
        data = valid(HandVoidSerializer, request.data)
        return _hand_answer(hands.void_hand(hand=hand, actor=actor(request), reason=data["reason"]))


class DropSerializer(serializers.Serializer[Any]):
    day = serializers.DateField(label=gettext_lazy("day"))
    amount = serializers.CharField(max_length=20, label=gettext_lazy("drop"))


def _drop(drop: TableDrop) -> dict[str, Any]:
    return {
        "table": drop.table_id,
        "day": drop.day,
        "amount": money.text(drop.amount),
        "counted_at": drop.counted_at,
        "counted_by": drop.counted_by_label,
    }


class TableDropsView(HallAPIView):
    @extend_schema(
        operation_id="tables_drops",
        summary="The table's drop counted per day (operator, cashier, inspector)",
        responses={200: None, **error_responses(403, 404)},
        tags=[TAG],
    )
    def get(self, request: Request, table_id: int) -> Response:
        table = _table(request, table_id, Role.OPERATOR, Role.CASHIER, Role.INSPECTOR)
        return Response({"drops": [_drop(d) for d in table.drops.order_by("-day")]})

    @extend_schema(
        operation_id="tables_drop_count",
        summary="Record the table's drop of a day that is over (operator, cashier)",
        description=(
            "Once per table and day (the drop box's count; the gaming tax's table drop). The same count "
            "again answers the row; 400 bad_amount; 409 drop_counted (another amount), day_not_over."
        ),
        request=DropSerializer,
        responses={201: None, **error_responses(400, 403, 404, 409)},
        tags=[TAG],
    )
    def post(self, request: Request, table_id: int) -> Response:
        table = _table(request, table_id, Role.OPERATOR, Role.CASHIER)
        data = valid(DropSerializer, request.data)
        drop = drops.record_drop(table=table, day=data["day"], amount=data["amount"], actor=actor(request))
        return Response(_drop(drop), status=status.HTTP_201_CREATED)


urlpatterns = [
    path("tables/", TableListView.as_view(), name="api-tables"),
    path("tables/<int:table_id>/", TableDetailView.as_view(), name="api-table"),
    path("tables/<int:table_id>/hands/", HandOpenView.as_view(), name="api-table-hands"),
    path("tables/<int:table_id>/pool/", TablePoolView.as_view(), name="api-table-pool"),
    path("tables/<int:table_id>/state/", TableStateView.as_view(), name="api-table-state"),
    path("tables/<int:table_id>/drops/", TableDropsView.as_view(), name="api-table-drops"),
    path("carrusels/", CarruselCreateView.as_view(), name="api-carrusels"),
    path("pools/<int:pool_id>/tables/", CarruselView.as_view(), name="api-pool-tables"),
    path("hands/<int:hand_id>/", HandDetailView.as_view(), name="api-hand"),
    path("hands/<int:hand_id>/bets/", BetsView.as_view(), name="api-hand-bets"),
    path("hands/<int:hand_id>/cards/", CardsView.as_view(), name="api-hand-cards"),
    path("hands/<int:hand_id>/settle/", SettleView.as_view(), name="api-hand-settle"),
    path("hands/<int:hand_id>/void/", VoidView.as_view(), name="api-hand-void"),
]
