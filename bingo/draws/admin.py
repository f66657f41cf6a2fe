"""The draws' commitments, read-only: only bingo.draws.services writes them. The sealed seed is not shown."""

from __future__ import annotations

from django.contrib import admin

from bingo.draws.models import DrawCommitment
from halls.admin import ReadOnlyAdmin


@admin.register(DrawCommitment)
class DrawCommitmentAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "room",
        "game_ref",
        "venue",
        "commitment",
        "cards",
        "sales_closed_at",
        "revealed_at",
    )
    list_filter = ("room", "venue")
    search_fields = ("game_ref", "commitment")
    exclude = ("sealed_seed",)
