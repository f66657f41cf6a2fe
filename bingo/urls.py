"""Staff pages of bingo: home, the caller console and the cashier page; the caller's voice clips."""

from django.urls import path

from bingo import views

app_name = "bingo"

urlpatterns = [
    path("", views.home, name="home"),
    path("console/", views.console_index, name="console"),
    path("console/rooms/<int:room_id>/", views.console_room, name="console-room"),
    path("cashier/", views.cashier, name="cashier"),
    path("voice/<str:key>.wav", views.voice_clip, name="voice-clip"),
]
