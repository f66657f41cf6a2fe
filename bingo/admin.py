"""Bingo records in the admin: read-only, because only the services write them."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from bingo.models import Ball, BallSet, CardSeries, Claim, Game, PrizeResult, SaleOperation
from halls.admin import ReadOnlyAdmin


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
