"""Staff pages of the door (halls.door.views)."""

from django.urls import path

from halls.door import views

app_name = "door"

urlpatterns = [
    path("admission/", views.admission_page, name="admission"),
]
