"""What a pool member names: each source type's resolver says which venue its object belongs to.

The engine knows venues and bingo rooms (halls); casino tables and machines live in apps above it, which
register their resolver at start-up (AppConfig.ready, DESIGN §2). ``other`` has no resolver: it names no
object, so no door can add it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from halls.models import Room, Venue

# source_id -> the venue id of the object it names, or None when there is no such object.
SourceResolver = Callable[[str], "int | None"]

_resolvers: dict[str, SourceResolver] = {}


@dataclass(frozen=True)
class MemberDoor:
    """How an app above the engine makes one of its objects a member, and takes it out again, when the
    membership is more than a row (a casino table keeps its pool and follows its rule pack's checks):
    ``join(pool, source_id, actor)`` and ``leave(pool, source_id, actor)`` return the membership row."""

    join: Callable[[Any, str, Any], Any]
    leave: Callable[[Any, str, Any], Any]


_doors: dict[str, MemberDoor] = {}


def register_member_door(source_type: str, door: MemberDoor) -> None:
    _doors[source_type] = door


def member_door(source_type: str) -> MemberDoor | None:
    return _doors.get(source_type)


def register_source_resolver(source_type: str, resolver: SourceResolver) -> None:
    _resolvers[source_type] = resolver


def _pk(source_id: str) -> int | None:
    """An object id in its canonical form ("12", not "012" or "+12"), within the database's range."""
    if not source_id.isdigit() or source_id != str(int(source_id)) or int(source_id) > 2**63 - 1:
        return None
    return int(source_id)


def by_pk(lookup: Callable[[int], int | None]) -> SourceResolver:
    """A resolver from ``lookup(pk) -> venue id``, for sources named by their primary key."""

    def resolve(source_id: str) -> int | None:
        pk = _pk(source_id)
        return None if pk is None else lookup(pk)

    return resolve


def source_venue(source_type: str, source_id: str) -> int | None:
    """The venue id of the object ``source_type:source_id`` names; None when it names none."""
    resolver = _resolvers.get(source_type)
    return None if resolver is None else resolver(source_id)


register_source_resolver(
    "venue", by_pk(lambda pk: Venue.objects.filter(pk=pk).values_list("pk", flat=True).first())
)
register_source_resolver(
    "bingo_room", by_pk(lambda pk: Room.objects.filter(pk=pk).values_list("venue_id", flat=True).first())
)
