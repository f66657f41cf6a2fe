"""Bingo records in the admin: read-only, because only the services write them.

The prize programs too: they are activated, versioned and switched off through the API's services; here
the operator reads them and, with the "Simulate before activation" action, sees what a program would do
over many simulated days (bingo.traditional.programs.simulate) before switching it on. That page writes
nothing.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from bingo.traditional.models import (
    Ball,
    BallSet,
    CardSeries,
    Claim,
    Game,
    GamePick,
    GameProgram,
    PrizeProgram,
    PrizeProgramVersion,
    PrizeResult,
    ProgramAward,
    RoomBolsa,
    SaleOperation,
    ScheduledNotice,
)
from bingo.traditional.program_api import program_from_params, run_simulation
from bingo.traditional.program_serializers import MAX_SIMULATED_GAMES
from halls import access, money
from halls.admin import ReadOnlyAdmin
from halls.errors import DomainError
from halls.models import Role


class BallInline(admin.TabularInline[Any, Any]):
    model = Ball
    extra = 0
    can_delete = False
    readonly_fields = ("ordinal", "number", "source", "drawn_at", "entered_by")


@admin.register(Game)
class GameAdmin(ReadOnlyAdmin):
    list_display = (
        "pk",
        "room",
        "session",
        "number",
        "state",
        "cards_sold",
        "sales_total",
        "line_prize",
        "bingo_prize",
    )
    list_filter = ("state", "room")
    inlines = [BallInline]


@admin.register(CardSeries)
class CardSeriesAdmin(ReadOnlyAdmin):
    list_display = ("code", "venue", "face_value", "strips", "created_at")


@admin.register(BallSet)
class BallSetAdmin(ReadOnlyAdmin):
    list_display = ("name", "venue", "games_played", "certified_games")


@admin.register(SaleOperation)
class SaleOperationAdmin(ReadOnlyAdmin):
    list_display = (
        "game",
        "kind",
        "series",
        "first_serial",
        "last_serial",
        "cards",
        "amount",
        "cashier",
        "created_at",
    )


@admin.register(Claim)
class ClaimAdmin(ReadOnlyAdmin):
    list_display = ("game", "kind", "series", "serial", "bound_ordinal", "valid", "refusal", "created_at")


@admin.register(PrizeResult)
class PrizeResultAdmin(ReadOnlyAdmin):
    list_display = ("game", "kind", "ordinal", "amount", "winners", "share", "remainder")


# --- Prize programs (bolsa acumulada) -------------------------------------------------------------------


class ProgramVersionInline(admin.TabularInline[Any, Any]):
    model = PrizeProgramVersion
    extra = 0
    can_delete = False
    fields = ("version", "effective_from", "params", "authorisation_ref", "created_by", "created_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class SimulationForm(forms.Form):
    """The sales profile the "Simulate before activation" action plays
    (bingo.traditional.programs.simulate)."""

    games_per_day = forms.IntegerField(
        label=gettext_lazy("Games per day"), min_value=1, max_value=200, initial=30
    )
    cards_per_game = forms.IntegerField(
        label=gettext_lazy("Cards per game"), min_value=1, max_value=10_000, initial=120
    )
    spread = forms.IntegerField(
        label=gettext_lazy("Spread"),
        min_value=0,
        max_value=10_000,
        initial=40,
        help_text=gettext_lazy("Cards sold vary uniformly in cards ± spread."),
    )
    price = forms.DecimalField(
        label=gettext_lazy("Price"),
        min_value=money.CENT,
        max_digits=14,
        decimal_places=2,
        initial=Decimal("1.00"),
        localize=True,  # "1,00" on a Spanish page, read back either way
    )
    days = forms.IntegerField(label=gettext_lazy("Days"), min_value=1, max_value=3650, initial=365)
    seed = forms.IntegerField(
        label=gettext_lazy("Seed"),
        min_value=0,
        initial=0,
        help_text=gettext_lazy("Same seed, same simulated games."),
    )
    bolsa_percent = forms.DecimalField(
        label=gettext_lazy("Bolsa percent"),
        required=False,
        localize=True,
        max_digits=7,
        decimal_places=4,
        help_text=gettext_lazy(
            "Super/Colour Prima only: the Bolsa's funding percentage (default: the room's Bolsa's)."
        ),
    )
    params = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6, "cols": 80, "spellcheck": "false"}),
        label=gettext_lazy("Params"),
        help_text=gettext_lazy(
            "The parameters to try (JSON, as a new version takes them); default: the version in force."
        ),
    )

    def clean_params(self) -> dict[str, Any]:
        raw = self.cleaned_data["params"]
        try:
            value = json.loads(raw, parse_float=lambda text: text)  # money is never float: keep the digits
        except ValueError as exc:
            raise forms.ValidationError(_("Not JSON: %(exc)s") % {"exc": exc}) from exc
        if not isinstance(value, dict):
            raise forms.ValidationError(_("Give a JSON object of parameters."))
        return value

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        games = (data.get("days") or 0) * (data.get("games_per_day") or 0)
        if games > MAX_SIMULATED_GAMES:
            raise forms.ValidationError(
                _(
                    "%(games)s simulated games is too many for one page (at most %(max_simulated_games)s): "
                    "fewer days or games per day, or run manage.py simulate_program."
                )
                % {"games": games, "max_simulated_games": MAX_SIMULATED_GAMES}
            )
        return data


@admin.register(PrizeProgram)
class PrizeProgramAdmin(ReadOnlyAdmin):
    """Programs are activated, versioned and switched off through the API (bingo.traditional.program_api),
    which calls
    the services; here the operator reads them and simulates one before switching it on."""

    list_display = ("code", "name", "program_type", "room", "active", "pool", "created_at", "deactivated_at")
    list_filter = ("program_type", "active", "room")
    inlines = [ProgramVersionInline]
    actions = ["simulate_before_activation"]

    @admin.action(description=gettext_lazy("Simulate before activation"))
    def simulate_before_activation(
        self, request: HttpRequest, queryset: QuerySet[PrizeProgram]
    ) -> TemplateResponse | None:
        chosen = list(queryset.select_related("room__venue")[:2])
        if len(chosen) != 1:
            self.message_user(request, _("Choose one program to simulate."), messages.WARNING)
            return None
        program = chosen[0]
        try:
            access.require_role(request.user, program.room.venue_id, Role.OPERATOR)
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return None
        result: dict[str, Any] | None = None
        problems: list[str] = []
        if "simulate" in request.POST:
            form = SimulationForm(request.POST)
            if form.is_valid():
                data = form.cleaned_data
                try:
                    result = run_simulation(
                        program=program_from_params(program.program_type, data["params"]),
                        room=program.room,
                        profile={
                            "games_per_day": data["games_per_day"],
                            "cards_per_game": data["cards_per_game"],
                            "spread": data["spread"],
                            "price": data["price"],
                        },
                        days=data["days"],
                        seed=data["seed"],
                        bolsa_percent=data["bolsa_percent"],
                    )
                except DomainError as exc:
                    problems = list(exc.details.get("problems") or [exc.message])
        else:
            form = SimulationForm(initial={"params": json.dumps(_params_in_force(program), indent=2)})
        context = {
            **self.admin_site.each_context(request),
            "title": _("Simulate %(name)s before activation") % {"name": program.name},
            "opts": self.model._meta,
            "program": program,
            "form": form,
            "problems": problems,
            "result": result,
            # The fraction of sales paid back, as a percentage the page writes in its language ("0,041 %").
            "returned_percent": Decimal(result["report"]["returned_share"]) * 100 if result else None,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/bingo/prizeprogram/simulate.html", context)


def _params_in_force(program: PrizeProgram) -> dict[str, Any]:
    """The parameters of the program's version in force now (else its latest), to start the form from."""
    versions = PrizeProgramVersion.objects.filter(program=program).order_by("-effective_from", "-version")
    version = versions.filter(effective_from__lte=timezone.now()).first() or versions.first()
    return dict(version.params) if version else {}


@admin.register(RoomBolsa)
class RoomBolsaAdmin(ReadOnlyAdmin):
    list_display = ("room", "funding_percent", "authorisation_ref", "pool", "created_at", "updated_at")


class ProgramAwardInline(admin.TabularInline[Any, Any]):
    model = ProgramAward
    extra = 0
    can_delete = False
    readonly_fields = ("claim", "amount")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(GameProgram)
class GameProgramAdmin(ReadOnlyAdmin):
    list_display = (
        "game",
        "program",
        "in_play",
        "amount",
        "max_ball",
        "colour",
        "won",
        "bingo_ordinal",
        "prize",
        "winners",
        "share",
        "remainder",
    )
    list_filter = ("in_play", "won", "program")
    inlines = [ProgramAwardInline]


@admin.register(GamePick)
class GamePickAdmin(ReadOnlyAdmin):
    list_display = ("game", "program", "amount", "max_ball", "colour", "set_by", "set_at")


@admin.register(ScheduledNotice)
class ScheduledNoticeAdmin(ReadOnlyAdmin):
    list_display = ("program", "operating_day", "hour", "created_at")
    list_filter = ("program",)
