"""Pages of electronic bingo (bingo.electronic.views): the player terminal's touch page."""

from django.urls import path

from bingo.electronic import views

app_name = "electronic"

urlpatterns = [
    path("electronic/terminal/", views.terminal_page, name="terminal"),
]
