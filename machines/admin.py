"""Machine records in the admin: read-only. Only the services write them (registration, links, states and
hand pays through the API and pages, play records through the gateway), so each change keeps its audit
entry. The device token's hash is never shown."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from halls.admin import ReadOnlyAdmin
from machines.models import (
    LinkGroup,
    LinkMember,
    Machine,
    MachineAlert,
    MachineEvent,
    MeterSnapshot,
    Play,
    ProgressiveHit,
    SequenceGap,
)


class LinkMemberInline(admin.TabularInline[Any, Any]):
    model = LinkMember
    extra = 0
    can_delete = False
    fields = ("machine", "joined_at", "left_at")
    readonly_fields = fields

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(Machine)
class MachineAdmin(ReadOnlyAdmin):
    list_display = (
        "asset_number",
        "venue",
        "machine_type",
        "modality",
        "denomination",
        "location",
        "state",
        "lock_reason",
        "online",
        "last_seen_at",
        "last_seq",
    )
    list_filter = ("venue", "machine_type", "state", "online")
    search_fields = ("asset_number", "serial", "manufacturer", "model")
    exclude = ("token_hash",)


@admin.register(LinkGroup)
class LinkGroupAdmin(ReadOnlyAdmin):
    list_display = ("code", "name", "venue", "pool", "same_type_and_denomination", "created_at")
    list_filter = ("venue",)
    inlines = [LinkMemberInline]


@admin.register(Play)
class PlayAdmin(ReadOnlyAdmin):
    list_display = ("pk", "machine", "seq", "game_id", "bet", "win", "played_at", "received_at")
    list_filter = ("machine__venue",)
    search_fields = ("machine__asset_number", "game_id")
    show_full_result_count = False


@admin.register(MeterSnapshot)
class MeterSnapshotAdmin(ReadOnlyAdmin):
    list_display = (
        "machine",
        "seq",
        "coin_in",
        "coin_out",
        "games_played",
        "jackpots_paid",
        "credits",
        "taken_at",
    )
    search_fields = ("machine__asset_number",)
    show_full_result_count = False


@admin.register(MachineEvent)
class MachineEventAdmin(ReadOnlyAdmin):
    list_display = ("machine", "seq", "kind", "at")
    list_filter = ("kind",)
    search_fields = ("machine__asset_number",)


@admin.register(SequenceGap)
class SequenceGapAdmin(ReadOnlyAdmin):
    list_display = (
        "machine",
        "first_missing",
        "last_missing",
        "detected_at",
        "reconciled_at",
        "missing_coin_in",
        "missing_games",
    )
    search_fields = ("machine__asset_number",)


@admin.register(ProgressiveHit)
class ProgressiveHitAdmin(ReadOnlyAdmin):
    list_display = (
        "machine",
        "seq",
        "group",
        "level",
        "amount",
        "reported_at",
        "paid_at",
        "paid_by_label",
        "payment_ref",
    )
    list_filter = ("group",)
    search_fields = ("machine__asset_number", "payment_ref")


@admin.register(MachineAlert)
class MachineAlertAdmin(ReadOnlyAdmin):
    list_display = ("machine", "kind", "message", "raised_at", "cleared_at")
    list_filter = ("kind",)
    search_fields = ("machine__asset_number",)
