"""/api/cashier/: every area's routes (halls.cashier.api)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver

from halls.cashier.api import devices, limits, payables, player_cards, reports, shifts, tickets

urlpatterns: list[URLPattern | URLResolver] = [
    *shifts.urlpatterns,
    *player_cards.urlpatterns,
    *limits.urlpatterns,
    *devices.urlpatterns,
    *reports.urlpatterns,
    *tickets.urlpatterns,
    *payables.urlpatterns,
]
