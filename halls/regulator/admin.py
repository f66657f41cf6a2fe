"""The node's rows in the admin, read-only: installations are registered with `manage.py
regulator_register` (halls.regulator.services.registry), messages and refusals are the intake's, alarms
the intake's and the silence sweep's."""

from __future__ import annotations

from django.contrib import admin

from halls.admin import ReadOnlyAdmin
from halls.regulator.models import Alarm, FeedMessage, FeedRefusal, Installation, RegistryChange


@admin.register(Installation)
class InstallationAdmin(ReadOnlyAdmin):
    list_display = (
        "name",
        "uid",
        "kind",
        "licence_number",
        "jurisdiction",
        "accepted_sequence",
        "last_message_at",
    )
    list_filter = ("kind", "jurisdiction")
    search_fields = ("name", "uid", "licence_number")


@admin.register(FeedMessage)
class FeedMessageAdmin(ReadOnlyAdmin):
    list_display = ("installation", "sequence", "kind", "at", "received_at")
    list_filter = ("kind", "installation")
    list_select_related = ("installation",)
    ordering = ("installation", "-sequence")


@admin.register(FeedRefusal)
class FeedRefusalAdmin(ReadOnlyAdmin):
    list_display = ("received_at", "installation", "claimed_installation", "sequence", "kind", "reason")
    list_filter = ("reason",)
    list_select_related = ("installation",)
    ordering = ("-received_at",)


@admin.register(Alarm)
class AlarmAdmin(ReadOnlyAdmin):
    list_display = ("raised_at", "installation", "kind", "cleared_at", "cleared_by")
    list_filter = ("kind",)
    list_select_related = ("installation",)


@admin.register(RegistryChange)
class RegistryChangeAdmin(ReadOnlyAdmin):
    list_display = ("at", "installation", "action", "actor")
    list_filter = ("action",)
    list_select_related = ("installation",)
