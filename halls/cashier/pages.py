"""Staff pages of the cashier (halls.cashier.views)."""

from django.urls import path

from halls.cashier import views

app_name = "cashier"

urlpatterns = [
    path("cashier/shifts/<int:shift_id>/report/", views.shift_report_page, name="shift-report"),
]
