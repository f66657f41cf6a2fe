"""The pool engine's changes behind four eyes (halls.foureyes): a level's parameters (rates, ceiling,
seed...), and a source joining or leaving a pool. Registered at ``JackpotsConfig.ready``; each applier
calls the ordinary service (jackpots.services.pools) with the approver as the actor.

A network pool's change is applied only by an approver who is operator of every venue of the network (as
its doors always asked). Targets: ``pool-level:<id>`` (params: level, changes, authorisation_ref),
``pool:<id>`` (params: pool, source_type, source_id, venue / pool, member).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from halls import access
from halls.errors import InvalidInput, NotFound, PermissionDenied
from halls.foureyes import Kind, param_id, register_kind
from halls.models import Proposal, Role, Venue
from jackpots.models import Pool, PoolLevel, PoolMember, SourceType
from jackpots.services import pools, sources

PARAMETERS = "pool.parameters"
MEMBER_ADD = "pool.member_add"
MEMBER_REMOVE = "pool.member_remove"


def pool_of_venue(venue: Venue, pool_id: int) -> Pool:
    """The pool if the venue is in its scope (its own, or a network's it belongs to)."""
    pool = Pool.objects.filter(Q(venue=venue) | Q(network__venues=venue), pk=pool_id).distinct().first()
    if pool is None:
        raise NotFound(
            _("No pool with pk=%(pool_id)s in this venue.") % {"pool_id": pool_id}, code="unknown_pool"
        )
    return pool


def _require_network_operator(pool: Pool, approver: User) -> None:
    """A network pool changes only by an operator of every venue of its network (as its doors ask): the
    approver, who applies the change, must be one."""
    if pool.network_id is None:
        return
    venue_ids = Venue.objects.filter(networks=pool.network_id).values_list("pk", flat=True)
    if any(Role.OPERATOR not in held for held in access.write_roles_in_each(approver, venue_ids).values()):
        raise PermissionDenied(
            _("A network pool is changed by an operator of every venue of the network."), code="role_required"
        )


def _validate_parameters(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    level = PoolLevel.objects.filter(pk=param_id(params, "level")).first()
    if level is None:
        raise NotFound(_("No such pool level."), code="unknown_level")
    pool_of_venue(venue, level.pool_id)
    changes = params.get("changes")
    if not isinstance(changes, Mapping):
        raise InvalidInput(_("changes: an object of the parameters to change."), code="bad_params")
    reference = str(params.get("authorisation_ref", "")).strip()
    if not reference:
        raise InvalidInput(
            _("A parameter change needs its authorisation reference."), code="authorisation_required"
        )
    new = pools.check_parameter_change(level=level, changes=dict(changes))
    return {"level": level.pk, "pool": level.pool_id, "changes": new, "authorisation_ref": reference}


def _apply_parameters(proposal: Proposal, approver: User) -> dict[str, Any]:
    level = PoolLevel.objects.get(pk=proposal.params["level"])
    _require_network_operator(Pool.objects.get(pk=level.pool_id), approver)
    change = pools.change_parameters(
        level=level,
        changes=dict(proposal.params["changes"]),
        actor=approver,
        authorisation_ref=proposal.params["authorisation_ref"],
    )
    return {"parameter_change": change.pk}


def _validate_member_add(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    pool = pool_of_venue(venue, param_id(params, "pool"))
    source_type = str(params.get("source_type", ""))
    if source_type not in SourceType.values:
        raise InvalidInput(
            _("Unknown source type %(source_type)r.") % {"source_type": source_type}, code="bad_source_type"
        )
    source_id = str(params.get("source_id", "")).strip()
    if not source_id:
        raise InvalidInput(_("Name the source to add."), code="bad_source")
    owner = sources.source_venue(source_type, source_id)
    if owner is None:
        raise InvalidInput(
            _("There is no %(type)s %(id)s to add to the pool.") % {"type": source_type, "id": source_id},
            code="unknown_source",
        )
    if owner != venue.pk:
        raise InvalidInput(
            _("%(type)s %(id)s belongs to another venue, not to %(venue)s.")
            % {"type": source_type, "id": source_id, "venue": venue},
            code="source_outside_venue",
        )
    return {"pool": pool.pk, "source_type": source_type, "source_id": source_id, "venue": venue.pk}


def _apply_member_add(proposal: Proposal, approver: User) -> dict[str, Any]:
    params = proposal.params
    pool = Pool.objects.get(pk=params["pool"])
    _require_network_operator(pool, approver)
    member = pools.add_source_member(
        pool=pool,
        source_type=params["source_type"],
        source_id=params["source_id"],
        venue=Venue.objects.get(pk=params["venue"]),
        actor=approver,
    )
    return {"member": member.pk}


def _validate_member_remove(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    pool = pool_of_venue(venue, param_id(params, "pool"))
    member = PoolMember.objects.filter(
        pool=pool, pk=param_id(params, "member"), venue=venue, removed_at__isnull=True
    ).first()
    if member is None:
        raise NotFound(_("Pool %(code)s has no such member.") % {"code": pool.code}, code="unknown_member")
    return {"pool": pool.pk, "member": member.pk, "source": member.key}


def _apply_member_remove(proposal: Proposal, approver: User) -> dict[str, Any]:
    pool = Pool.objects.get(pk=proposal.params["pool"])
    _require_network_operator(pool, approver)
    member = PoolMember.objects.filter(
        pool=pool, pk=proposal.params["member"], removed_at__isnull=True
    ).first()
    if member is None:
        raise NotFound(_("The member already left the pool."), code="unknown_member")
    removed = pools.remove_source_member(pool=pool, member=member, actor=approver)
    return {"member": removed.pk}


def register() -> None:
    operator = (Role.OPERATOR,)
    register_kind(
        Kind(
            PARAMETERS,
            gettext_lazy("Change a pool level's parameters"),
            operator,
            _validate_parameters,
            _apply_parameters,
        )
    )
    register_kind(
        Kind(
            MEMBER_ADD,
            gettext_lazy("Add a source to a pool"),
            operator,
            _validate_member_add,
            _apply_member_add,
        )
    )
    register_kind(
        Kind(
            MEMBER_REMOVE,
            gettext_lazy("Take a source out of a pool"),
            operator,
            _validate_member_remove,
            _apply_member_remove,
        )
    )
