"""Who may act where: staff roles are scoped per venue.

An object of another venue is reported as not found, so staff cannot even learn it exists.

The inspector (``Role.INSPECTOR``) reads everything of their venue and writes nothing. A request that
only reads (GET, HEAD, OPTIONS) runs inside ``reading()`` (set by ``halls.readonly``), and there an
inspector holds every role of the venue, so every page and report that checks a role lets them in; on any
other request (and outside a request: tasks, commands) they hold only the inspector role, which no
write asks for (403). The staff sockets that only read (the caller console's, the till's) check their
role inside ``reading()`` too, so the inspector watches them live. Two more locks behind that:
``halls.readonly`` refuses a write of a user who is only an inspector before it reaches a view, and
``halls.services.audit`` refuses to record anything while an inspector's read rights are in use (every
write of a service is audited).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Model, QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from halls.errors import NotFound, PermissionDenied
from halls.models import Role, StaffRole, Venue

M = TypeVar("M", bound=Model)
AnyUser = AbstractBaseUser | AnonymousUser

# The operator runs the hall: every role's rights in their venue.
ALL_ROLES = frozenset(Role)


@dataclass
class _ReadScope:
    """A request that only reads; ``inspector`` is set once an inspector's read rights were granted."""

    inspector: bool = False


_reading: ContextVar[_ReadScope | None] = ContextVar("hall_reading", default=None)


@contextmanager
def reading() -> Iterator[None]:
    """Run a request that only reads (halls.readonly wraps every GET, HEAD and OPTIONS in it)."""
    token = _reading.set(_ReadScope())
    try:
        yield
    finally:
        _reading.reset(token)


def inspector_reading() -> bool:
    """Whether an inspector's read rights are in use in this request (then nothing may be written)."""
    scope = _reading.get()
    return scope is not None and scope.inspector


def roles_in(user: AnyUser, venue_id: int) -> frozenset[str]:
    if not user.is_authenticated:
        return frozenset()
    if getattr(user, "is_superuser", False):
        return ALL_ROLES
    return _granted(
        frozenset(StaffRole.objects.filter(user_id=user.pk, venue_id=venue_id).values_list("role", flat=True))
    )


def _granted(roles: frozenset[str]) -> frozenset[str]:
    """What the roles a user holds in one venue grant there (roles_in's rule, one venue at a time): the
    operator every role; inside ``reading()`` the inspector every role too, and the read marked as an
    inspector's (then nothing may be written)."""
    if Role.OPERATOR in roles:
        return ALL_ROLES
    scope = _reading.get()
    if Role.INSPECTOR in roles and scope is not None:
        scope.inspector = True
        return ALL_ROLES  # read rights only: this request writes nothing
    return roles


def _held(user: AbstractBaseUser, venue_ids: Sequence[int] | None = None) -> dict[int, frozenset[str]]:
    """The roles ``user`` holds in each venue (only ``venue_ids``' when given), as StaffRole rows say,
    the rule not applied: one query."""
    found = StaffRole.objects.filter(user_id=user.pk)
    if venue_ids is not None:
        found = found.filter(venue_id__in=venue_ids)
    held: dict[int, set[str]] = {}
    for venue_id, role in found.values_list("venue_id", "role"):
        held.setdefault(venue_id, set()).add(role)
    return {venue_id: frozenset(roles) for venue_id, roles in held.items()}


def roles_in_each(
    user: AnyUser, venue_ids: Iterable[int] | None = None
) -> Iterator[tuple[int, frozenset[str]]]:
    """``(venue_id, roles_in(user, venue_id))`` for each of ``venue_ids`` in their order (by default every
    venue where ``user`` holds a role, by pk; a superuser's: every venue), in one query however many venues:
    what a page asking the roles of many venues reads, rather than ``roles_in`` once per venue. The rule
    is roles_in's (``_granted``), applied venue by venue as the pairs are read, so a caller that stops
    early (``any``) marks an inspector's read no further than ``roles_in`` one by one would have."""
    asked = None if venue_ids is None else list(venue_ids)
    if not user.is_authenticated:
        for venue_id in asked or ():
            yield venue_id, frozenset()
        return
    if getattr(user, "is_superuser", False):
        every = Venue.objects.values_list("pk", flat=True) if asked is None else asked
        for venue_id in every:
            yield venue_id, ALL_ROLES
        return
    held = _held(user, asked)
    for venue_id in sorted(held) if asked is None else asked:
        yield venue_id, _granted(held.get(venue_id, frozenset()))


def venue_ids_with(user: AnyUser, *roles: str) -> list[int]:
    """The venues where ``user`` holds one of ``roles`` as ``roles_in`` grants them, venue by venue (an
    inspector's read marked as it marks it), in one query however many venues they hold roles in: what a
    page listing every venue's records asks, rather than ``roles_in`` once per venue."""
    if not user.is_authenticated:
        return []
    if getattr(user, "is_superuser", False):
        return list(Venue.objects.values_list("pk", flat=True))
    wanted = set(roles)
    return [venue_id for venue_id, granted in roles_in_each(user) if granted & wanted]


def inspects(user: AnyUser, venue_id: int) -> bool:
    """Whether ``user`` is the venue's inspector (and not its operator): pages show them as such."""
    if not user.is_authenticated or getattr(user, "is_superuser", False):
        return False
    roles = frozenset(
        StaffRole.objects.filter(user_id=user.pk, venue_id=venue_id).values_list("role", flat=True)
    )
    return _inspector_only(roles)


def _inspector_only(roles: frozenset[str]) -> bool:
    """``inspects``' rule for the roles a user holds in one venue."""
    return Role.INSPECTOR in roles and Role.OPERATOR not in roles


def inspected_venue_ids(user: AnyUser, venue_ids: Sequence[int] | None = None) -> set[int]:
    """Of ``venue_ids`` (by default every venue), those where ``inspects(user, venue)``: in one query."""
    if not user.is_authenticated or getattr(user, "is_superuser", False):
        return set()
    return {venue_id for venue_id, roles in _held(user, venue_ids).items() if _inspector_only(roles)}


def only_inspects(user: AnyUser) -> bool:
    """Whether every role ``user`` holds anywhere is the inspector's (so no write of theirs is allowed)."""
    if not user.is_authenticated or getattr(user, "is_superuser", False):
        return False
    roles = set(StaffRole.objects.filter(user_id=user.pk).values_list("role", flat=True))
    return roles == {Role.INSPECTOR.value}


def write_roles_in(user: AnyUser, venue_id: int) -> frozenset[str]:
    """The roles a write of ``user`` is checked against in the venue, whatever request asks: what
    ``halls.readonly`` and ``require_role`` grant an unsafe request (an inspector's read rights never
    count). Pages offer a write control only to whom this grants its role (``may_write``)."""
    return write_roles_in_each(user, [venue_id])[venue_id]


def write_roles_in_each(user: AnyUser, venue_ids: Iterable[int]) -> dict[int, frozenset[str]]:
    """``write_roles_in(user, venue_id)`` for each of ``venue_ids``, in their order, in two queries
    however many venues."""
    asked = list(venue_ids)
    if not asked:
        return {}
    if only_inspects(user):  # halls.readonly refuses every write of theirs, before any view
        return dict.fromkeys(asked, frozenset())
    token = _reading.set(None)
    try:
        return dict(roles_in_each(user, asked))
    finally:
        _reading.reset(token)


def may_write(user: AnyUser, venue_id: int, *roles: str) -> bool:
    """Whether a write needing one of ``roles`` (or the operator's) in the venue would be let through."""
    return may_write_any(user, [venue_id], *roles)


def may_write_any(user: AnyUser, venue_ids: Iterable[int], *roles: str) -> bool:
    """Whether ``may_write`` lets the write through in one of ``venue_ids``: in two queries however many."""
    return any(lets_write(held, *roles) for held in write_roles_in_each(user, venue_ids).values())


def lets_write(held: frozenset[str], *roles: str) -> bool:
    """``may_write``'s rule for the roles ``write_roles_in`` (or ``write_roles_in_each``) found in a venue:
    whether they let a write needing one of ``roles`` (or the operator's) through."""
    return bool(held.intersection(roles or ALL_ROLES - {Role.INSPECTOR}))


def venue_ids_for(user: AnyUser, *, door: bool = False) -> list[int]:
    """The venues where ``user`` holds a role. A venue where they are only door staff (Role.DOOR) counts
    only with ``door`` (the door's pages and API): the lists of games, tills and machines leave it out."""
    if not user.is_authenticated:
        return []
    if getattr(user, "is_superuser", False):
        return list(Venue.objects.values_list("pk", flat=True))
    return sorted(venue_id for venue_id, roles in _held(user).items() if door or roles != {Role.DOOR.value})


def require_role(user: AnyUser, venue_id: int, *roles: str) -> None:
    """Raise unless ``user`` holds one of ``roles`` (or operator) in the venue."""
    refusal = role_refusal(roles_in(user, venue_id), *roles)
    if refusal is not None:
        raise refusal


def role_refusal(held: frozenset[str], *roles: str) -> NotFound | PermissionDenied | None:
    """What `require_role` raises for a user who holds `held` in the venue, or None if they may."""
    if not held:
        return NotFound(_("Not found in your venues."), code="not_found")
    if not held.intersection(roles):
        wanted = " or ".join(roles)
        return PermissionDenied(
            _("This needs the %(wanted)s role in this venue.") % {"wanted": wanted}, code="role_required"
        )
    return None


def reading_now() -> bool:
    """Whether this runs inside ``reading()`` (where an inspector's read rights count)."""
    return _reading.get() is not None


def write_roles_of(users: Sequence[AnyUser], venue_id: int) -> dict[Any, frozenset[str]]:
    """Each user's roles in the venue by their pk, as `roles_in` finds them outside ``reading()`` (a write:
    an inspector's read rights never count), in one query for them all (a group of writes)."""
    found: dict[Any, set[str]] = {}
    asked = [u.pk for u in users if u.is_authenticated and not getattr(u, "is_superuser", False)]
    if asked:
        for user_id, role in StaffRole.objects.filter(user_id__in=asked, venue_id=venue_id).values_list(
            "user_id", "role"
        ):
            found.setdefault(user_id, set()).add(role)
    held: dict[Any, frozenset[str]] = {}
    for user in users:
        if not user.is_authenticated:
            held[user.pk] = frozenset()
        elif getattr(user, "is_superuser", False):
            held[user.pk] = ALL_ROLES
        else:
            roles = frozenset(found.get(user.pk, ()))
            held[user.pk] = ALL_ROLES if Role.OPERATOR in roles else roles
    return held


# The things a lookup names, as a person reads them in the refusal (the error code keeps the English key).
NOUNS = {
    "card": gettext_lazy("card"),
    "game": gettext_lazy("game"),
    "hand": gettext_lazy("hand"),
    "hit": gettext_lazy("hit"),
    "link group": gettext_lazy("link group"),
    "machine": gettext_lazy("machine"),
    "program": gettext_lazy("program"),
    "room": gettext_lazy("room"),
    "series": gettext_lazy("series"),
    "network game": gettext_lazy("network game"),
    "session": gettext_lazy("session"),
    "speciality": gettext_lazy("speciality"),
    "speciality membership": gettext_lazy("speciality's network prize"),
    "table": gettext_lazy("table"),
    "venue": gettext_lazy("venue"),
}


def get_for_user(
    queryset: QuerySet[M],
    user: AnyUser,
    *roles: str,
    venue_path: str = "venue_id",
    label: str = "",
    **lookup: Any,
) -> M:
    """Fetch one object by ``lookup`` if it belongs to a venue where ``user`` holds one of ``roles``."""
    name = label or str(queryset.model._meta.verbose_name)
    venue_ids = venue_ids_for(user, door=True)  # the door staff's venue too: without the role, a 403
    obj = queryset.filter(**{f"{venue_path.replace('.', '__')}__in": venue_ids}, **lookup).first()
    if obj is None:
        shown = ", ".join(f"{k}={v}" for k, v in lookup.items())
        raise NotFound(
            _("No %(name)s with %(shown)s in your venues.") % {"name": NOUNS.get(name, name), "shown": shown},
            code=f"unknown_{name.replace(' ', '_')}",
        )
    venue_id = obj
    for part in venue_path.split("."):
        venue_id = getattr(venue_id, part)
    require_role(user, int(venue_id), *roles)  # type: ignore[call-overload]
    return obj


def venue_for(user: AnyUser, venue_id: int, *roles: str) -> Venue:
    """The venue `venue_id` for a user holding one of `roles` there: 404 "No venue …" outside their venues
    (in every language the same code, unknown_venue), 403 without the role."""
    return get_for_user(Venue.objects.all(), user, *roles, venue_path="pk", label="venue", pk=venue_id)


def require_installation_operator(user: AnyUser) -> None:
    """Raise unless ``user`` may change what the whole installation shares (regions, operators, the
    agreements between regions): a superuser, or the operator of every venue of the installation."""
    if not user.is_authenticated:
        raise PermissionDenied(_("Log in first."), code="not_authenticated")
    if getattr(user, "is_superuser", False):
        return
    venue_ids = set(Venue.objects.values_list("pk", flat=True))
    operated = set(
        StaffRole.objects.filter(user_id=user.pk, role=Role.OPERATOR).values_list("venue_id", flat=True)
    )
    if not venue_ids or not venue_ids <= operated:
        raise PermissionDenied(
            _("Regions, operators and agreements are changed by the operator of every venue."),
            code="role_required",
        )
