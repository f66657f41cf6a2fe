"""REST doors of the pool engine: pools with their meters, creation, members, parameter changes,
authorised corrections, the balancing report and the ledger recall.

Thin doors (DESIGN §3): validate with a serializer, find the pool through the user's venues (a pool of
another venue answers 404 unknown_pool), check the role, call ONE service, render. A venue pool belongs to
its venue's staff; a network pool is visible to staff of any of its venues and changed only by someone
who is operator in every venue of the network. The must-hit-by value is never rendered.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import Q, QuerySet
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access, money
from halls.api import ANY_ROLE, HallAPIView, actor, valid
from halls.errors import NotFound, PermissionDenied
from halls.models import Network, Role, Venue
from halls.proposals_api import proposed
from halls.proposals_serializers import ProposalSerializer
from halls.serializers import error_responses
from halls.services import proposals
from jackpots.models import LedgerMove, Pool, PoolLevel, PoolMember
from jackpots.serializers import (
    BalanceQuerySerializer,
    BalanceSerializer,
    CorrectionRequestSerializer,
    CorrectionSerializer,
    LedgerQuerySerializer,
    LedgerSerializer,
    MemberCreateSerializer,
    ParameterChangeRequestSerializer,
    PoolCreateSerializer,
    PoolDetailSerializer,
    PoolQuerySerializer,
    PoolSerializer,
)
from jackpots.services import pools, proposal_kinds, reports
from jackpots.services.readmodels import meters

TAGS = ["pools"]

# --- lookups --------------------------------------------------------------------------------------------


def _visible(user: access.AnyUser) -> QuerySet[Pool]:
    venue_ids = access.venue_ids_for(user)
    return Pool.objects.filter(Q(venue_id__in=venue_ids) | Q(network__venues__in=venue_ids)).distinct()


def _require(user: access.AnyUser, pool: Pool, roles: tuple[str, ...], every_venue: bool) -> None:
    """A venue pool: the role in its venue. A network pool: the role in one of its venues to read, in
    every one of them to change it."""
    if pool.venue_id is not None:
        access.require_role(user, pool.venue_id, *roles)
        return
    venue_ids = sorted(Venue.objects.filter(networks=pool.network_id).values_list("pk", flat=True))
    allowed = [v for v, held in access.roles_in_each(user, venue_ids) if held.intersection(roles)]
    if every_venue and len(allowed) != len(venue_ids):
        raise PermissionDenied(
            _("A network pool is changed by an operator of every venue of the network."), code="role_required"
        )
    if not allowed:
        raise PermissionDenied(
            _("This needs the %(or_join_roles)s role in this venue.") % {"or_join_roles": " or ".join(roles)},
            code="role_required",
        )


def _pool(request: Request, pool_id: int, *roles: str, every_venue: bool = False) -> Pool:
    pool = _visible(request.user).filter(pk=pool_id).first()
    if pool is None:
        raise NotFound(
            _("No pool with pk=%(pool_id)s in your venues.") % {"pool_id": pool_id}, code="unknown_pool"
        )
    _require(request.user, pool, roles or ANY_ROLE, every_venue)
    return pool


def _proposing_venue(request: Request, pool: Pool) -> Venue:
    """The venue a change of the pool is proposed in (and approved by its operator): the pool's own, or
    for a network pool the first of its venues where the user is operator."""
    if pool.venue_id is not None:
        return access.venue_for(request.user, pool.venue_id, Role.OPERATOR)
    venue_ids = sorted(Venue.objects.filter(networks=pool.network_id).values_list("pk", flat=True))
    mine = [
        v for v, held in access.write_roles_in_each(request.user, venue_ids).items() if Role.OPERATOR in held
    ]
    return access.venue_for(request.user, (mine or venue_ids)[0], Role.OPERATOR)


def _level(pool: Pool, level_id: int) -> PoolLevel:
    level = PoolLevel.objects.filter(pool=pool, pk=level_id).first()
    if level is None:
        raise NotFound(
            _("Pool %(code)s has no level %(level_id)s.") % {"code": pool.code, "level_id": level_id},
            code="unknown_level",
        )
    return level


# --- renderings -----------------------------------------------------------------------------------------


def _pool_data(pool: Pool, meter: meters.PoolMeter) -> dict[str, Any]:
    shown = meter.as_dict()
    return {
        "id": pool.pk,
        "code": pool.code,
        "name": pool.name,
        "jurisdiction": pool.jurisdiction,
        "currency": pool.currency,
        "authorisation_ref": pool.authorisation_ref,
        "rule_pack": pool.rule_pack,
        "carousel_bet": money.text(pool.carousel_bet),
        "venue": pool.venue_id,
        "network": pool.network_id,
        "active": pool.active,
        "levels": shown["levels"],
        "last_hits": shown["last_hits"],
    }


def _member_data(member: PoolMember) -> dict[str, Any]:
    return {
        "id": member.pk,
        "source_type": member.source_type,
        "source_id": member.source_id,
        "key": member.key,
        "venue": member.venue_id,
        "added_at": member.added_at,
        "added_by": member.added_by,
        "removed_at": member.removed_at,
        "removed_by": member.removed_by,
    }


def _pool_detail(pool: Pool) -> dict[str, Any]:
    data = _pool_data(pool, meters.pool_meter(pool))
    data["parameters"] = [
        {
            "id": level.pk,
            "position": level.position,
            "params_version": level.params_version,
            **{
                k: (str(v) if isinstance(v, Decimal) else v)
                for k, v in pools.public_parameters(level).items()
            },
        }
        for level in pool.levels.order_by("position")
    ]
    data["members"] = [_member_data(m) for m in pool.members.filter(removed_at__isnull=True).order_by("pk")]
    return data


# --- views ----------------------------------------------------------------------------------------------


class PoolListView(HallAPIView):
    @extend_schema(
        operation_id="pools_list",
        summary="Pools of your venues (venue and network pools), with their meters",
        parameters=[PoolQuerySerializer],
        responses={200: PoolSerializer(many=True), **error_responses(400)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        query = valid(PoolQuerySerializer, request.query_params)
        pools_qs = _visible(request.user)
        if query["venue"] is not None:
            pools_qs = pools_qs.filter(Q(venue_id=query["venue"]) | Q(network__venues=query["venue"]))
        listed = list(pools_qs.order_by("code"))
        found = meters.pool_meters(p.pk for p in listed)
        return Response([_pool_data(p, found[p.pk]) for p in listed])

    @extend_schema(
        operation_id="pools_create",
        summary="Create a pool with its levels (operator)",
        description=(
            "Operator of the venue (of every venue for a network pool). 400 seed_below_minimum when a "
            "level's "
            "seed is under the rule pack's minimum multiple of the carousel bet (AN10 5,000 ×, EU 1,000 × / "
            "2,000 ×), 400 network_not_allowed where the pack may not link establishments, 400 "
            "rule_pack_jurisdiction / scope_jurisdiction on a mismatch, 409 pool_code_taken."
        ),
        request=PoolCreateSerializer,
        responses={201: PoolDetailSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(PoolCreateSerializer, request.data)
        venue = network = None
        if data["venue"] is not None:
            venue = access.get_for_user(
                Venue.objects.all(),
                request.user,
                Role.OPERATOR,
                venue_path="pk",
                label="venue",
                pk=data["venue"],
            )
        else:
            network = Network.objects.filter(pk=data["network"]).first()
            venue_ids = list(network.venues.values_list("pk", flat=True)) if network else []
            if network is None or not set(venue_ids) & set(access.venue_ids_for(request.user)):
                raise NotFound(
                    _("No network with pk=%(network)s in your venues.") % {"network": data["network"]},
                    code="unknown_network",
                )
            if any(Role.OPERATOR not in held for _, held in access.roles_in_each(request.user, venue_ids)):
                raise PermissionDenied(
                    _("A network pool is created by an operator of every venue of the network."),
                    code="role_required",
                )
        levels = [pools.LevelSpec(**level) for level in data["levels"]]
        paytable = None
        if data["authorised_paytable"]:
            paytable = [{k: str(v) for k, v in row.items()} for row in data["authorised_paytable"]]
        pool = pools.create_pool(
            name=data["name"],
            code=data["code"],
            jurisdiction=data["jurisdiction"],
            currency=data["currency"],
            authorisation_ref=data["authorisation_ref"],
            rule_pack=data["rule_pack"],
            venue=venue,
            network=network,
            levels=levels,
            carousel_bet=data["carousel_bet"],
            actor=actor(request),
            authorised_paytable=paytable,
        )
        return Response(_pool_detail(pool), status=status.HTTP_201_CREATED)


class PoolDetailView(HallAPIView):
    @extend_schema(
        operation_id="pools_retrieve",
        summary="A pool: meters, level parameters (never the must-hit-by value) and members",
        responses={200: PoolDetailSerializer, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, pool_id: int) -> Response:
        return Response(_pool_detail(_pool(request, pool_id)))


class MemberListView(HallAPIView):
    @extend_schema(
        operation_id="pools_members_add",
        summary="Propose adding a contributing source (table, bingo room, machine) to the pool (operator); "
        "it joins once a second operator approves (four eyes)",
        description="Contributions then carry the source label '<source_type>:<source_id>[/<detail>]'. "
        "The source must name a real object of the given venue (a table, room, machine or venue id): "
        "400 unknown_source or source_outside_venue otherwise. 409 already_member; 400 "
        "member_outside_scope when the venue is outside the pool's scope.",
        request=MemberCreateSerializer,
        responses={202: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, pool_id: int) -> Response:
        pool = _pool(request, pool_id, Role.OPERATOR)
        data = valid(MemberCreateSerializer, request.data)
        venue = access.get_for_user(
            Venue.objects.all(), request.user, Role.OPERATOR, venue_path="pk", label="venue", pk=data["venue"]
        )
        proposal = proposals.propose(
            venue=venue,
            kind=proposal_kinds.MEMBER_ADD,
            target=f"pool:{pool.pk}",
            params={"pool": pool.pk, "source_type": data["source_type"], "source_id": data["source_id"]},
            actor=actor(request),
        )
        return proposed(proposal)


class MemberDetailView(HallAPIView):
    @extend_schema(
        operation_id="pools_members_remove",
        summary="Propose taking a source out of the pool (operator); it leaves once a second operator "
        "approves",
        request=None,
        responses={202: ProposalSerializer, **error_responses(403, 404)},
        tags=TAGS,
    )
    def delete(self, request: Request, pool_id: int, member_id: int) -> Response:
        pool = _pool(request, pool_id, Role.OPERATOR)
        member = PoolMember.objects.filter(pool=pool, pk=member_id, removed_at__isnull=True).first()
        if member is None:
            raise NotFound(
                _("Pool %(code)s has no member %(member_id)s.") % {"code": pool.code, "member_id": member_id},
                code="unknown_member",
            )
        venue = access.venue_for(request.user, member.venue_id, Role.OPERATOR)
        proposal = proposals.propose(
            venue=venue,
            kind=proposal_kinds.MEMBER_REMOVE,
            target=f"pool:{pool.pk}",
            params={"pool": pool.pk, "member": member.pk},
            actor=actor(request),
        )
        return proposed(proposal)


class ParameterChangeView(HallAPIView):
    @extend_schema(
        operation_id="pools_levels_parameters",
        summary="Propose a change of a level's parameters (operator); it applies, between hands/games, "
        "once a second operator approves it with their password (four eyes)",
        description=(
            "409 pool_in_play while a hand or game is open on the pool; 400 unknown_parameter, bad_rate, "
            "seed_below_minimum, no_change; 409 ceiling_below_meter. A seed raised above the meter is funded "
            "at once as a recorded operator seed."
        ),
        request=ParameterChangeRequestSerializer,
        responses={202: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, pool_id: int, level_id: int) -> Response:
        pool = _pool(request, pool_id, Role.OPERATOR, every_venue=True)
        level = _level(pool, level_id)
        data = valid(ParameterChangeRequestSerializer, request.data)
        proposal = proposals.propose(
            venue=_proposing_venue(request, pool),
            kind=proposal_kinds.PARAMETERS,
            target=f"pool-level:{level.pk}",
            params={
                "level": level.pk,
                "changes": data["changes"],
                "authorisation_ref": data["authorisation_ref"],
            },
            actor=actor(request),
        )
        return proposed(proposal)


class CorrectionView(HallAPIView):
    @extend_schema(
        operation_id="pools_levels_corrections",
        summary="An authorised correction of a level's meter (operator), recorded with its reason",
        description="409 correction_below_seed / correction_above_ceiling; 400 bad_amount, reason_required.",
        request=CorrectionRequestSerializer,
        responses={201: CorrectionSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, pool_id: int, level_id: int) -> Response:
        pool = _pool(request, pool_id, Role.OPERATOR, every_venue=True)
        level = _level(pool, level_id)
        data = valid(CorrectionRequestSerializer, request.data)
        move: LedgerMove = pools.correct_meter(
            level=level,
            amount_delta=data["amount_delta"],
            reason=data["reason"],
            authorised_by=data["authorised_by"],
            actor=actor(request),
        )
        amount = PoolLevel.objects.values_list("amount", flat=True).get(pk=level.pk)
        body = {
            "id": move.pk,
            "pool": pool.pk,
            "level": level.pk,
            "kind": move.kind,
            "amount": str(move.amount),
            "reason": move.reason,
            "authorised_by": move.authorised_by,
            "actor": move.actor,
            "created_at": move.created_at,
            "meter": money.text_cents(amount),
        }
        return Response(body, status=status.HTTP_201_CREATED)


class BalanceView(HallAPIView):
    @extend_schema(
        operation_id="pools_balance",
        summary="Balancing report: opening + seeds + contributions = closing + awards + reserve moves",
        description="Operator. Per level, for the period [start, end) (default: all time to now).",
        parameters=[BalanceQuerySerializer],
        responses={200: BalanceSerializer, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, pool_id: int) -> Response:
        pool = _pool(request, pool_id, Role.OPERATOR)
        query = valid(BalanceQuerySerializer, request.query_params)
        return Response(reports.balance(pool, query["start"], query["end"]).as_dict())


class LedgerView(HallAPIView):
    @extend_schema(
        operation_id="pools_ledger",
        summary="The pool's ledger recall: awards, moves, parameter changes and contributions, newest first",
        description="Operator. Contributions page back with ?before=<next_before>.",
        parameters=[LedgerQuerySerializer],
        responses={200: LedgerSerializer, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, pool_id: int) -> Response:
        pool = _pool(request, pool_id, Role.OPERATOR)
        query = valid(LedgerQuerySerializer, request.query_params)
        page = reports.ledger(pool, limit=query["limit"], before=query["before"])
        return Response(LedgerSerializer(page).data)


urlpatterns = [
    path("pools/", PoolListView.as_view(), name="api-pools"),
    path("pools/<int:pool_id>/", PoolDetailView.as_view(), name="api-pool"),
    path("pools/<int:pool_id>/members/", MemberListView.as_view(), name="api-pool-members"),
    path("pools/<int:pool_id>/members/<int:member_id>/", MemberDetailView.as_view(), name="api-pool-member"),
    path(
        "pools/<int:pool_id>/levels/<int:level_id>/parameters/",
        ParameterChangeView.as_view(),
        name="api-pool-level-parameters",
    ),
    path(
        "pools/<int:pool_id>/levels/<int:level_id>/corrections/",
        CorrectionView.as_view(),
        name="api-pool-level-corrections",
    ),
    path("pools/<int:pool_id>/balance/", BalanceView.as_view(), name="api-pool-balance"),
    path("pools/<int:pool_id>/ledger/", LedgerView.as_view(), name="api-pool-ledger"),
]
