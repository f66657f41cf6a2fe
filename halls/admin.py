"""The operator's admin: venue configuration is edited here; the audit chain is read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from halls.models import AuditEntry, GameSession, Room, Screen, StaffRole, Venue
from halls.services.verify import verify_audit


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
    list_display = (
        "name",
        "licence_number",
        "jurisdiction",
        "hall_category",
        "time_zone",
        "currency",
        "language",
    )
    inlines = [RoomInline, StaffRoleInline]
    actions = ["verify_audit"]

    @admin.action(description=_("Verify the audit chain and the pools' seals"))
    def verify_audit(self, request: HttpRequest, queryset: QuerySet[Venue]) -> None:
        report = verify_audit(venue_ids=list(queryset.order_by("pk").values_list("pk", flat=True)))
        for chain in report.chains:
            if chain.ok:
                text = gettext("%(kind)s %(name)s: intact, %(length)d links verified.")
                self.message_user(
                    request, text % {"kind": chain.kind, "name": chain.name, "length": chain.length}
                )
            else:
                text = gettext("%(kind)s %(name)s: NOT intact, first bad link %(seq)s: %(reason)s")
                values = {
                    "kind": chain.kind,
                    "name": chain.name,
                    "seq": chain.first_bad_seq,
                    "reason": chain.reason,
                }
                self.message_user(request, text % values, level=messages.ERROR)


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
