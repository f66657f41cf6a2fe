"""Casino-table records in the admin: read-only, because only jackpots.tables.services writes them."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from halls.admin import ReadOnlyAdmin
from jackpots.tables.models import CasinoTable, Hand, SeatBet, SeatCards, SeatPayout, TableDrop


@admin.register(CasinoTable)
class CasinoTableAdmin(ReadOnlyAdmin):
    list_display = ("number", "name", "venue", "game", "table_minimum", "seats", "rule_pack", "pool", "state")
    list_filter = ("venue", "game", "state")


class SeatBetInline(admin.TabularInline[Any, Any]):
    model = SeatBet
    extra = 0
    can_delete = False
    readonly_fields = (
        "seat",
        "initial_bet",
        "pool_bet",
        "extra_card",
        "forfeited",
        "forfeit_reason",
        "registered_by",
    )
    fields = readonly_fields


class SeatCardsInline(admin.TabularInline[Any, Any]):
    model = SeatCards
    extra = 0
    can_delete = False
    readonly_fields = ("seat", "cards", "discard", "rank", "registered_by")
    fields = readonly_fields


class SeatPayoutInline(admin.TabularInline[Any, Any]):
    model = SeatPayout
    extra = 0
    can_delete = False
    readonly_fields = (
        "order",
        "seat",
        "category",
        "discard",
        "amount",
        "from_meter",
        "from_operator",
        "note",
    )
    fields = readonly_fields


@admin.register(Hand)
class HandAdmin(ReadOnlyAdmin):
    list_display = ("pk", "table", "number", "state", "opened_at", "settled_at", "manual_total")
    list_filter = ("state", "table")
    inlines = [SeatBetInline, SeatCardsInline, SeatPayoutInline]


@admin.register(TableDrop)
class TableDropAdmin(ReadOnlyAdmin):
    list_display = ("table", "day", "amount", "counted_at", "counted_by_label")
    list_filter = ("table__venue",)
