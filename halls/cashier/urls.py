"""/api/cashier/: every area's routes (halls.cashier.api)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver

from halls.cashier.api import tickets

urlpatterns: list[URLPattern | URLResolver] = []
urlpatterns += tickets.urlpatterns
