"""The operator's admin: venue configuration is edited here; the audit chain is read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from halls.models import AuditEntry, GameSession, Room, Screen, StaffRole, Venue


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    """Records that only services write: visible to the operator, never edited by hand."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RoomInline(admin.TabularInline[Any, Any]):
    model = Room
    extra = 0


class StaffRoleInline(admin.TabularInline[Any, Any]):
    model = StaffRole
    extra = 0


@admin.register(Venue)
class VenueAdmin(admin.ModelAdmin[Any]):
    list_display = ("name", "licence_number", "jurisdiction", "hall_category", "time_zone", "currency")
    inlines = [RoomInline, StaffRoleInline]


@admin.register(Screen)
class ScreenAdmin(admin.ModelAdmin[Any]):
    list_display = ("name", "venue", "room", "active", "token")
    readonly_fields = ("token",)


@admin.register(GameSession)
class GameSessionAdmin(ReadOnlyAdmin):
    list_display = ("pk", "room", "opened_at", "opened_by", "closed_at")


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "venue", "actor_label", "action", "object_type", "object_id")
    list_filter = ("venue", "action")
    search_fields = ("object_id", "action")
