"""The member hall's page of a simultaneous game (any role in the hall): thin, the read model is
services.pages."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from bingo.network.simultaneous.models import HallGame
from bingo.network.simultaneous.services import venue
from bingo.network.simultaneous.services.pages import hall_game_view
from halls import access, errors
from halls.api import ANY_ROLE
from halls.models import Role

app_name = "bingo_simultaneous"


def _hall_game(request: HttpRequest, hall_game_id: int, *roles: str) -> HallGame:
    try:
        return access.get_for_user(
            HallGame.objects.select_related("venue", "game__room"),
            request.user,
            *roles,
            label="network game",
            pk=hall_game_id,
        )
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc


@login_required
@require_POST
def no_more_claims(request: HttpRequest, hall_game_id: int) -> HttpResponse:
    """The caller's answer to "¿alguna línea más? ¿algún bingo más?": none in this hall (a form's POST)."""
    hall_game = _hall_game(request, hall_game_id, Role.CALLER)
    try:
        venue.no_more_claims(hall_game=hall_game, actor=request.user)  # type: ignore[arg-type]
    except errors.Conflict as exc:
        messages.error(request, exc.message)
    return redirect("bingo_simultaneous:hall-game", hall_game_id=hall_game.pk)


@login_required
def hall_game_page(request: HttpRequest, hall_game_id: int) -> HttpResponse:
    hall_game = _hall_game(request, hall_game_id, *ANY_ROLE)
    roles = access.roles_in(request.user, hall_game.venue_id)
    context = {
        **hall_game_view(hall_game),
        "can_call": Role.CALLER in roles,  # the staff menu's links (bingo/base.html)
        "can_sell": Role.CASHIER in roles,
        # Its write (no more claims here) offered only to whom the API lets write it: not an inspector.
        "can_call_write": access.may_write(request.user, hall_game.venue_id, Role.CALLER),
    }
    return render(request, "simultaneous/hall_game.html", context)


urlpatterns = [
    path("simultaneous/<int:hall_game_id>/", hall_game_page, name="hall-game"),
    path("simultaneous/<int:hall_game_id>/no-more-claims/", no_more_claims, name="no-more-claims"),
]
