"""Public pool displays: the table-side meter page of one pool, reached by a screen's token."""

from django.urls import path

from jackpots import views

app_name = "jackpots"

urlpatterns = [
    path("screens/<str:token>/pools/<int:pool_id>/", views.meter_page, name="meter"),
    path("screens/<str:token>/pools/<int:pool_id>/snapshot/", views.meter_snapshot, name="meter-snapshot"),
]
