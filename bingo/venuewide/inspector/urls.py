"""The inspector's pages (bingo.venuewide.inspector.views)."""

from django.urls import path

from bingo.venuewide.inspector import views

app_name = "inspector"

urlpatterns = [
    path("inspector/", views.index, name="index"),
    path("inspector/sessions/<int:session_id>/", views.minutes, name="minutes"),
    path("inspector/sessions/<int:session_id>/minutes.pdf", views.minutes_pdf, name="minutes-pdf"),
    path("inspector/games/<int:game_id>/", views.game_record, name="game"),
    path("inspector/electronic/games/<int:game_id>/", views.electronic_record, name="electronic-game"),
    path("inspector/games/<int:game_id>/record.pdf", views.game_record_pdf, name="game-pdf"),
    path("inspector/venues/<int:venue_id>/statistics/", views.statistics, name="statistics"),
    path("inspector/venues/<int:venue_id>/statistics.csv", views.statistics_csv, name="statistics-csv"),
    path("inspector/venues/<int:venue_id>/statistics.pdf", views.statistics_pdf, name="statistics-pdf"),
    path("inspector/venues/<int:venue_id>/audit/", views.audit, name="audit"),
]
