"""Electronic bingo's records in the admin: read-only, because only the services write them (the balls,
purchases, cards, prizes, verifications and terminal checks are append-only besides)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from bingo.electronic.models import (
    EBall,
    ElectronicGame,
    ElectronicSession,
    EPrize,
    EWin,
    Purchase,
    Speciality,
    SpecialityVersion,
    Terminal,
    TerminalCheck,
    TerminalMessage,
    TerminalSoftware,
    Verification,
)
from halls.admin import ReadOnlyAdmin


class ReadOnlyInline(admin.TabularInline[Any, Any]):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class VersionInline(ReadOnlyInline):
    model = SpecialityVersion
    fields = ("number", "effective_from", "authorisation_ref", "created_by", "rules")
    readonly_fields = fields


@admin.register(Speciality)
class SpecialityAdmin(ReadOnlyAdmin):
    list_display = ("code", "name", "venue", "room", "family", "running")
    list_filter = ("venue", "family", "running")
    inlines = [VersionInline]


@admin.register(TerminalSoftware)
class TerminalSoftwareAdmin(ReadOnlyAdmin):
    list_display = ("version", "venue", "authorisation_ref", "approved_at", "withdrawn_at")
    list_filter = ("venue",)


@admin.register(Terminal)
class TerminalAdmin(ReadOnlyAdmin):
    list_display = ("device", "speciality", "state", "software_version", "last_seen_at", "clock_offset_ms")
    list_filter = ("state", "speciality")


class TerminalCheckInline(ReadOnlyInline):
    model = TerminalCheck
    fields = ("terminal", "passed", "checks")
    readonly_fields = fields


@admin.register(Verification)
class VerificationAdmin(ReadOnlyAdmin):
    list_display = ("pk", "speciality", "finished_at", "passed", "actor_label")
    list_filter = ("passed", "speciality")
    inlines = [TerminalCheckInline]


@admin.register(ElectronicSession)
class ElectronicSessionAdmin(ReadOnlyAdmin):
    list_display = ("pk", "speciality", "verification", "opened_at", "opened_by", "closed_at", "closed_by")
    list_filter = ("speciality",)


class BallInline(ReadOnlyInline):
    model = EBall
    fields = ("ordinal", "number", "drawn_at")
    readonly_fields = fields


class PrizeInline(ReadOnlyInline):
    model = EPrize
    fields = ("code", "type", "ordinal", "won", "winners", "amount", "share", "remainder")
    readonly_fields = fields


@admin.register(ElectronicGame)
class ElectronicGameAdmin(ReadOnlyAdmin):
    list_display = ("pk", "speciality", "number", "state", "cards_sold", "sales_total", "balls_drawn")
    list_filter = ("state", "speciality")
    inlines = [PrizeInline, BallInline]


@admin.register(Purchase)
class PurchaseAdmin(ReadOnlyAdmin):
    list_display = ("pk", "game", "terminal", "player_card", "cards", "amount", "created_at")
    list_filter = ("game__speciality",)


@admin.register(EWin)
class EWinAdmin(ReadOnlyAdmin):
    list_display = ("pk", "prize", "card", "purchase", "amount")


@admin.register(TerminalMessage)
class TerminalMessageAdmin(ReadOnlyAdmin):
    list_display = ("terminal", "seq", "kind", "received_at")
    list_filter = ("kind",)
