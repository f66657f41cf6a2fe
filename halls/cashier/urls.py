"""/api/cashier/: every area's routes (halls.cashier.api)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver

<<<<<<< HEAD
from halls.cashier.api import cards, devices, payables, reports, shifts
=======
from halls.cashier.api import cards, devices, reports, shifts, tickets
>>>>>>> main

urlpatterns: list[URLPattern | URLResolver] = [
    *shifts.urlpatterns,
    *cards.urlpatterns,
    *devices.urlpatterns,
    *reports.urlpatterns,
<<<<<<< HEAD
    *payables.urlpatterns,
=======
    *tickets.urlpatterns,
>>>>>>> main
]
