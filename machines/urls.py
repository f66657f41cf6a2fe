"""Staff pages of the machine floor (the floor page, hand-pays at the cashier)."""

from django.urls import URLPattern, URLResolver, path

from machines import views

app_name = "machines"

urlpatterns: list[URLPattern | URLResolver] = [
    path("machines/floor/", views.floor, name="floor"),
    path("machines/floor/snapshot/", views.floor_snapshot, name="floor-snapshot"),
    path("machines/<int:machine_id>/reconciliation/", views.machine_reconciliation, name="reconciliation"),
    path("machines/handpays/", views.handpays, name="handpays"),
    path("machines/handpays/snapshot/", views.handpays_snapshot, name="handpays-snapshot"),
]
