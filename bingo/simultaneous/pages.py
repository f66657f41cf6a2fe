"""The member hall's page of a simultaneous game (any role in the hall): thin, the read model is
services.pages."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from bingo.simultaneous.models import HallGame
from bingo.simultaneous.services.pages import hall_game_view
from halls import access, errors
from halls.api import ANY_ROLE
from halls.models import Role

app_name = "bingo_simultaneous"


@login_required
def hall_game_page(request: HttpRequest, hall_game_id: int) -> HttpResponse:
    try:
        hall_game = access.get_for_user(
            HallGame.objects.select_related("venue", "game__room"),
            request.user,
            *ANY_ROLE,
            label="network game",
            pk=hall_game_id,
        )
    except errors.NotFound as exc:
        raise Http404(exc.message) from exc
    except errors.PermissionDenied as exc:
        raise PermissionDenied(exc.message) from exc
    roles = access.roles_in(request.user, hall_game.venue_id)
    context = {
        **hall_game_view(hall_game),
        "can_call": Role.CALLER in roles,  # the staff menu's links (bingo/base.html)
        "can_sell": Role.CASHIER in roles,
    }
    return render(request, "simultaneous/hall_game.html", context)


urlpatterns = [
    path("simultaneous/<int:hall_game_id>/", hall_game_page, name="hall-game"),
]
