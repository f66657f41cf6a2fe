"""Staff pages of the machine floor: the floor itself, the cashier's hand-pays, a machine's reconciliation.

Thin doors (DESIGN §3): login required, the venue checked against the user's roles (another venue's
machines are 404, as in halls.access), one read service, render. The floor and the hand-pays refresh from
their JSON snapshots (`floor_snapshot`, `handpays_snapshot`) every second or two; paying a hit goes through
the REST API (POST /api/machine-hits/<id>/pay/, with the CSRF token) from the page's script, so the pages
hold no business rule.

The venue is chosen with ``?venue=<id>``; without it, the user's first venue (by name) where they hold the
page's role. Every staff role may watch the floor; hand-pays need the cashier role (operators hold all).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import ensure_csrf_cookie

from halls import access, errors
from halls.models import Role, Venue
from machines import services
from machines.models import Machine

FLOOR_ROLES = (Role.OPERATOR, Role.CALLER, Role.CASHIER)
HANDPAY_ROLES = (Role.CASHIER,)

Door = Callable[..., HttpResponse]


def _json_door(view: Door) -> Door:
    """A snapshot answers an anonymous fetch with the API's JSON error, not the login page's HTML."""

    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return _error(403, "not_authenticated", gettext("Log in to see the machine floor."))
        try:
            return view(request, *args, **kwargs)
        except Http404 as exc:
            return _error(404, "not_found", str(exc) or gettext("Not found in your venues."))
        except PermissionDenied as exc:
            return _error(403, "role_required", str(exc) or gettext("Your role does not allow this."))

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return wrapped


def _error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def _venues(request: HttpRequest, roles: tuple[str, ...]) -> list[Venue]:
    """The user's venues where they hold one of `roles` (an operator holds every role), by name."""
    user = request.user
    return list(Venue.objects.filter(pk__in=access.venue_ids_with(user, *roles)).order_by("name", "pk"))


def _venue(request: HttpRequest, roles: tuple[str, ...]) -> tuple[Venue, list[Venue]]:
    """The venue asked for (``?venue=``) or the first one the user may see here, and all of those."""
    venues = _venues(request, roles)
    raw = request.GET.get("venue", "").strip()
    if not raw:
        if not venues:
            raise PermissionDenied(gettext("Your account holds no role for this page in any venue."))
        return venues[0], venues
    if not raw.isdigit():
        raise Http404(gettext("No such venue."))
    try:
        access.require_role(request.user, int(raw), *roles)
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc
    chosen = next((v for v in venues if v.pk == int(raw)), None)
    if chosen is None:  # a role in a venue that no longer exists
        raise Http404(gettext("No such venue."))
    return chosen, venues


def _page(request: HttpRequest, template: str, **context: Any) -> HttpResponse:
    user = request.user
    roles: set[str] = set().union(*(held for _, held in access.roles_in_each(user)))  # one query
    return render(
        request,
        template,
        {"can_call": Role.CALLER in roles, "can_sell": Role.CASHIER in roles, **context},
    )


# --- the floor -------------------------------------------------------------------------------------------


@login_required
@ensure_csrf_cookie
def floor(request: HttpRequest) -> HttpResponse:
    venue, venues = _venue(request, FLOOR_ROLES)
    return _page(
        request,
        "machines/floor.html",
        venue=venue,
        venues=venues,
        can_pay=bool(access.roles_in(request.user, venue.pk).intersection(HANDPAY_ROLES)),
        snapshot_url=f"{reverse('machines:floor-snapshot')}?venue={venue.pk}",
    )


@never_cache
@_json_door
def floor_snapshot(request: HttpRequest) -> JsonResponse:
    """Every machine of the venue as the floor shows it (machines.services.readmodels.floor_view)."""
    venue, _ = _venue(request, FLOOR_ROLES)
    return JsonResponse(
        {
            "venue": venue.pk,
            "currency": venue.currency,
            "at": timezone.now(),
            "machines": services.floor_view(venue),
        },
        encoder=DjangoJSONEncoder,
    )


@login_required
def machine_reconciliation(request: HttpRequest, machine_id: int) -> HttpResponse:
    """A machine's meter snapshots against the plays recorded between them, one row per interval."""
    try:
        machine = access.get_for_user(
            Machine.objects.select_related("venue"),
            request.user,
            *FLOOR_ROLES,
            label="machine",
            pk=machine_id,
        )
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc
    return _page(
        request,
        "machines/reconciliation.html",
        machine=machine,
        venue=machine.venue,
        rows=services.reconciliation(machine),
    )


# --- hand-pays at the cashier ----------------------------------------------------------------------------


@login_required
@ensure_csrf_cookie
def handpays(request: HttpRequest) -> HttpResponse:
    venue, venues = _venue(request, HANDPAY_ROLES)
    return _page(
        request,
        "machines/handpays.html",
        venue=venue,
        venues=venues,
        snapshot_url=f"{reverse('machines:handpays-snapshot')}?venue={venue.pk}",
    )


@never_cache
@_json_door
def handpays_snapshot(request: HttpRequest) -> JsonResponse:
    """The venue's progressive hits waiting to be paid by hand, oldest first."""
    venue, _ = _venue(request, HANDPAY_ROLES)
    return JsonResponse(
        {
            "venue": venue.pk,
            "currency": venue.currency,
            "at": timezone.now(),
            "hits": services.pending_hand_pays(venue),
        },
        encoder=DjangoJSONEncoder,
    )
