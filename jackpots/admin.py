"""Pool records in the admin: read-only (only the services write them), and never the must-hit-by value."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from halls.admin import ReadOnlyAdmin
from jackpots.models import (
    Award,
    Contribution,
    LedgerMove,
    LedgerSeal,
    ParameterChange,
    Pool,
    PoolLevel,
    PoolMember,
    PoolSettlement,
)

# PoolLevel fields the admin may show: everything but the secret mystery value.
LEVEL_FIELDS = (
    "position",
    "name",
    "kind",
    "seed",
    "contribution_rate",
    "reserve_rate",
    "ceiling",
    "overflow_to",
    "mystery",
    "amount",
    "reserve",
    "folded_through",
    "hits",
    "total_paid",
    "overflow_total",
    "params_version",
    "version",
    "updated_at",
)


class LevelInline(admin.TabularInline[Any, Any]):
    model = PoolLevel
    extra = 0
    can_delete = False
    fields = LEVEL_FIELDS
    readonly_fields = LEVEL_FIELDS

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class MemberInline(admin.TabularInline[Any, Any]):
    model = PoolMember
    extra = 0
    can_delete = False
    readonly_fields = (
        "source_type",
        "source_id",
        "venue",
        "added_at",
        "added_by",
        "removed_at",
        "removed_by",
    )

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(Pool)
class PoolAdmin(ReadOnlyAdmin):
    list_display = ("code", "name", "jurisdiction", "rule_pack", "venue", "network", "carousel_bet", "active")
    list_filter = ("jurisdiction", "rule_pack", "active")
    inlines = [LevelInline, MemberInline]


@admin.register(PoolLevel)
class PoolLevelAdmin(ReadOnlyAdmin):
    list_display = ("pool", "position", "name", "kind", "seed", "amount", "reserve", "hits", "total_paid")
    fields = LEVEL_FIELDS
    readonly_fields = LEVEL_FIELDS


@admin.register(Contribution)
class ContributionAdmin(ReadOnlyAdmin):
    list_display = ("pk", "pool", "level", "source", "bet", "to_meter", "to_reserve", "house", "created_at")
    list_filter = ("pool",)
    show_full_result_count = False


@admin.register(PoolSettlement)
class PoolSettlementAdmin(ReadOnlyAdmin):
    list_display = (
        "pk",
        "pool",
        "level",
        "kind",
        "meter_before",
        "meter_after",
        "operator_seed",
        "created_at",
    )
    list_filter = ("pool", "kind")


@admin.register(Award)
class AwardAdmin(ReadOnlyAdmin):
    list_display = (
        "pk",
        "pool",
        "level",
        "source",
        "seat",
        "hand",
        "category",
        "amount",
        "from_operator",
        "created_at",
    )
    list_filter = ("pool",)


@admin.register(LedgerMove)
class LedgerMoveAdmin(ReadOnlyAdmin):
    list_display = ("pk", "pool", "level", "kind", "amount", "reason", "authorised_by", "actor", "created_at")
    list_filter = ("pool", "kind")


@admin.register(ParameterChange)
class ParameterChangeAdmin(ReadOnlyAdmin):
    list_display = ("pk", "pool", "level", "old", "new", "authorisation_ref", "actor", "changed_at")
    list_filter = ("pool",)


@admin.register(LedgerSeal)
class LedgerSealAdmin(ReadOnlyAdmin):
    list_display = ("pool", "seq", "rows", "hash", "created_at")
    list_filter = ("pool",)
