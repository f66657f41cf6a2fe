"""Pages of electronic bingo (bingo.electronic.views): the terminal page; the operator's watch."""

from django.urls import path

from bingo.electronic import views

app_name = "electronic"

urlpatterns = [
    path("electronic/terminal/", views.terminal_page, name="terminal"),
    path("electronic/specialities/<int:speciality_id>/watch/", views.watch_page, name="watch"),
]
