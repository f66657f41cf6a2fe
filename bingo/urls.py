"""Staff pages of bingo: home, the caller console and the cashier page."""

from django.urls import path

from bingo import setup_views, views

app_name = "bingo"

urlpatterns = [
    path("", views.home, name="home"),
    path("console/", views.console_index, name="console"),
    path("console/rooms/<int:room_id>/", views.console_room, name="console-room"),
    path("cashier/", views.cashier, name="cashier"),
    path("setup/", setup_views.setup_page, name="setup"),
]
