"""Staff pages of the gaming tax (halls.tax.views)."""

from django.urls import path

from halls.tax import views

app_name = "tax"

urlpatterns = [
    path("tax/", views.home, name="home"),
    path("tax/venues/<int:venue_id>/", views.returns_page, name="returns"),
    path("tax/venues/<int:venue_id>/file/", views.file_return, name="file"),
    path("tax/venues/<int:venue_id>/returns/<str:period>.csv", views.return_csv, name="csv"),
    path("tax/venues/<int:venue_id>/returns/<str:period>.pdf", views.return_pdf, name="pdf"),
]
