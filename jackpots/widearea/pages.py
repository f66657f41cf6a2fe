"""Staff pages of wide-area pools (jackpots.widearea.views)."""

from django.urls import path

from jackpots.widearea import views

app_name = "widearea"

urlpatterns = [
    path("widearea/reconciliations/", views.reconciliations_page, name="reconciliations"),
]
