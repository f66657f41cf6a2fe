"""/api/cashier/: every area's routes (halls.cashier.api)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from halls.cashier.api import reports

urlpatterns: list[URLPattern | URLResolver] = [
    path("reports/shifts/<int:shift_id>/", reports.ShiftReportView.as_view(), name="cashier-report-shift"),
    path("reports/cashier/", reports.CashierReportView.as_view(), name="cashier-report-cashier"),
    path("reports/day/", reports.DayReportView.as_view(), name="cashier-report-day"),
    path("reports/day/csv/", reports.DayReportCsvView.as_view(), name="cashier-report-day-csv"),
]
