"""Electronic bingo's changes behind four eyes (halls.foureyes): a speciality's prize table.

- ``speciality.create``: a speciality created in a room, with version 1 of its rules (its prize table) and
  a pool per accumulated prize;
- ``speciality.rules``: a new version of a speciality's rules, in force from a date.

The validators check the rules as the service will (every problem named, nothing written) and keep them in
their canonical form (bingo.electronic.prizetable.rules_json); the appliers call the ordinary services with
the approver as the actor, inside the approval's transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from bingo.electronic.models import Speciality
from bingo.electronic.prizetable import rules_json
from bingo.electronic.services import specialities
from halls.errors import InvalidInput, NotFound
from halls.foureyes import Kind, register_kind, target_pk
from halls.models import Proposal, Role, Room, Venue

SPECIALITY_CREATE = "speciality.create"
SPECIALITY_RULES = "speciality.rules"


def _room(venue: Venue, target: str) -> Room:
    found = Room.objects.filter(pk=target_pk(target, "room"), venue=venue).first()
    if found is None:
        raise NotFound(_("No room %(target)s in this venue.") % {"target": target}, code="unknown_room")
    return found


def _speciality(venue: Venue, target: str) -> Speciality:
    found = (
        Speciality.objects.filter(pk=target_pk(target, "speciality"), venue=venue)
        .select_related("room")
        .first()
    )
    if found is None:
        raise NotFound(
            _("No speciality %(target)s in this venue.") % {"target": target}, code="unknown_speciality"
        )
    return found


def _text(params: Mapping[str, Any], name: str, limit: int) -> str:
    value = params.get(name, "")
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise InvalidInput(
            _("%(field)s is a text of 1 to %(max)s characters.") % {"field": name, "max": limit},
            code="bad_params",
            field=name,
        )
    return value.strip()


def _when(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    found = parse_datetime(str(value)) if isinstance(value, str) else None
    if found is None or found.tzinfo is None:
        raise InvalidInput(
            _("effective_from is an ISO date and time with its zone, e.g. 2026-01-31T20:00:00+01:00."),
            code="bad_effective_from",
            field="effective_from",
        )
    return found


def _validate_create(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    room = _room(venue, target)
    if Speciality.objects.filter(room=room).exists():
        raise InvalidInput(
            _("Room %(name)s has a speciality already.") % {"name": room.name}, code="speciality_taken"
        )
    return {
        "room": room.pk,
        "code": _text(params, "code", 30),
        "name": _text(params, "name", 80),
        "rules": rules_json(specialities.checked_rules(params.get("rules"))),
        "authorisation_ref": _text(params, "authorisation_ref", 120),
    }


def _apply_create(proposal: Proposal, approver: User) -> dict[str, Any]:
    change = proposal.params
    speciality = specialities.create_speciality(
        room=_room(proposal.venue, proposal.target),
        code=change["code"],
        name=change["name"],
        rules=change["rules"],
        authorisation_ref=change["authorisation_ref"],
        actor=approver,
    )
    return {"speciality": speciality.pk}


def _validate_rules(venue: Venue, target: str, params: Mapping[str, Any]) -> dict[str, Any]:
    speciality = _speciality(venue, target)
    start = _when(params.get("effective_from"))
    return {
        "speciality": speciality.pk,
        "rules": rules_json(specialities.checked_rules(params.get("rules"))),
        "effective_from": start.isoformat() if start else None,
        "authorisation_ref": _text(params, "authorisation_ref", 120),
    }


def _apply_rules(proposal: Proposal, approver: User) -> dict[str, Any]:
    change = proposal.params
    version = specialities.add_version(
        speciality=_speciality(proposal.venue, proposal.target),
        rules=change["rules"],
        effective_from=_when(change["effective_from"]),
        authorisation_ref=change["authorisation_ref"],
        actor=approver,
    )
    return {"speciality": version.speciality_id, "version": version.number}


def register() -> None:
    """Register this wing's kinds (bingo.electronic.apps.ElectronicConfig.ready)."""
    register_kind(
        Kind(
            name=SPECIALITY_CREATE,
            label=gettext_lazy("Create an electronic bingo speciality and its prize table"),
            roles=(Role.OPERATOR,),
            validate=_validate_create,
            apply=_apply_create,
        )
    )
    register_kind(
        Kind(
            name=SPECIALITY_RULES,
            label=gettext_lazy("Change an electronic bingo speciality's prize table"),
            roles=(Role.OPERATOR,),
            validate=_validate_rules,
            apply=_apply_rules,
        )
    )
