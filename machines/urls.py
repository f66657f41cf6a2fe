"""Staff pages of the machine floor (the floor page, hand-pays at the cashier)."""

from django.urls import URLPattern, URLResolver

app_name = "machines"

urlpatterns: list[URLPattern | URLResolver] = []
