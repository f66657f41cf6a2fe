"""The frame of every staff page: the user's venues with their roles there, rooms and (for operators)
screens, and the page rendered with what its top bar and menus need (who may call, sell, set up, inspect).
Read-only; the pages of every app compose their content inside it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from halls import access
from halls.models import Role, Room, Screen, Venue


@dataclass
class VenueAccess:
    venue: Venue
    roles: frozenset[str]
    inspecting: bool = False  # the venue's inspector: reads everything, writes nothing
    rooms: list[Room] = field(default_factory=list)
    screens: list[Screen] = field(default_factory=list)

    @property
    def can_call(self) -> bool:
        return Role.CALLER in self.roles

    @property
    def can_sell(self) -> bool:
        return Role.CASHIER in self.roles

    @property
    def can_admit(self) -> bool:
        """The door: admit people, record exits and self-exclusions, see who is inside."""
        return Role.DOOR in self.roles

    @property
    def door_only(self) -> bool:
        """Only the door's role here: the games, tills and machines are none of theirs."""
        return self.roles == {Role.DOOR}

    @property
    def is_operator(self) -> bool:
        return Role.OPERATOR in self.roles

    @property
    def can_inspect(self) -> bool:
        return Role.INSPECTOR in self.roles

    @property
    def role_labels(self) -> list[str]:
        if self.inspecting:
            return [str(Role.INSPECTOR.label)]
        if self.is_operator:
            return [str(Role.OPERATOR.label)]
        return [str(Role(r).label) for r in sorted(self.roles)]


def staff_venues(request: HttpRequest) -> list[VenueAccess]:
    """The user's venues with their roles there, rooms and (for operators) screens."""
    user = request.user
    # every venue where they hold a role (the door's too), with roles_in's roles there: one query
    granted = dict(access.roles_in_each(user))
    inspected = access.inspected_venue_ids(user)
    venues = Venue.objects.filter(pk__in=granted).order_by("name")
    found = [VenueAccess(venue=v, roles=granted[v.pk], inspecting=v.pk in inspected) for v in venues]
    by_id = {v.venue.pk: v for v in found}
    for room in Room.objects.filter(venue_id__in=by_id).order_by("venue_id", "name"):
        by_id[room.venue_id].rooms.append(room)
    for screen in (
        Screen.objects.filter(venue_id__in=by_id, active=True).select_related("room").order_by("name")
    ):
        if by_id[screen.venue_id].is_operator:
            by_id[screen.venue_id].screens.append(screen)
    return found


def staff_page(
    request: HttpRequest, template: str, venues: list[VenueAccess], **context: Any
) -> HttpResponse:
    return render(
        request,
        template,
        {
            "venues": venues,
            "can_call": any(v.can_call for v in venues),
            "can_sell": any(v.can_sell for v in venues),
            "is_operator": any(v.is_operator for v in venues),
            "can_inspect": any(v.can_inspect for v in venues),
            "can_admit": any(v.can_admit for v in venues),
            # The machines' pages are for the staff of the games and tills, not the door's.
            "door_only": bool(venues) and all(v.door_only for v in venues),
            **context,
        },
    )
