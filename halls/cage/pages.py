"""Staff pages of the cage (halls.cage.views)."""

from django.urls import path

from halls.cage import views

app_name = "cage"

urlpatterns = [
    path("compliance/", views.compliance_home, name="home"),
    path("compliance/venues/<int:venue_id>/", views.compliance_page, name="compliance"),
    path("compliance/venues/<int:venue_id>/report.csv", views.compliance_csv, name="compliance-csv"),
    path("compliance/venues/<int:venue_id>/report.pdf", views.compliance_pdf, name="compliance-pdf"),
    path(
        "compliance/venues/<int:venue_id>/flags/<int:flag_id>/review/",
        views.review_flag,
        name="review-flag",
    ),
]
