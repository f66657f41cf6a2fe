"""/api/electronic/: every area's routes (bingo.electronic.api), one line each."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver

from bingo.electronic.api import reports, staff, terminal

urlpatterns: list[URLPattern | URLResolver] = [
    *staff.urlpatterns,
    *terminal.urlpatterns,
    *reports.urlpatterns,
]
