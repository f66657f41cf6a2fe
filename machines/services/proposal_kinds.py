"""The machines' changes behind four eyes (halls.foureyes): a machine joining or leaving a link group's
pool. Registered at ``MachinesConfig.ready``; each applier calls machines.services.links with the approver
as the actor. Target ``machine:<id>``; params: group, machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from halls.errors import NotFound
from halls.foureyes import Kind, param_id, register_kind
from halls.models import Proposal, Role, Venue
from machines.models import LinkGroup, LinkMember, Machine
from machines.services import links

JOIN = "machine.join_link"
LEAVE = "machine.leave_link"


def _validate(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    group = LinkGroup.objects.filter(venue=venue, pk=param_id(params, "group")).first()
    if group is None:
        raise NotFound(_("No link group with that id in this venue."), code="unknown_link_group")
    machine = Machine.objects.filter(venue=venue, pk=param_id(params, "machine")).first()
    if machine is None:
        raise NotFound(_("No machine with that id in this venue."), code="unknown_machine")
    return {"group": group.pk, "machine": machine.pk, "pool": group.pool_id}


def _validate_leave(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    checked = _validate(venue, target, params)
    if not LinkMember.objects.filter(
        group_id=checked["group"], machine_id=checked["machine"], left_at__isnull=True
    ).exists():
        machine = Machine.objects.get(pk=checked["machine"])
        text = _("Machine %(asset_number)s is not linked to this group.")
        raise NotFound(text % {"asset_number": machine.asset_number}, code="not_linked")
    return checked


def _apply_join(proposal: Proposal, approver: User) -> dict[str, Any]:
    group = LinkGroup.objects.get(pk=proposal.params["group"])
    member = links.join_link(
        group=group, machine=Machine.objects.get(pk=proposal.params["machine"]), actor=approver
    )
    return {"link_member": member.pk}


def _apply_leave(proposal: Proposal, approver: User) -> dict[str, Any]:
    group = LinkGroup.objects.get(pk=proposal.params["group"])
    member = links.leave_link(
        group=group, machine=Machine.objects.get(pk=proposal.params["machine"]), actor=approver
    )
    return {"link_member": member.pk}


def register() -> None:
    operator = (Role.OPERATOR,)
    register_kind(Kind(JOIN, gettext_lazy("A machine joins a link's pool"), operator, _validate, _apply_join))
    register_kind(
        Kind(LEAVE, gettext_lazy("A machine leaves a link's pool"), operator, _validate_leave, _apply_leave)
    )
