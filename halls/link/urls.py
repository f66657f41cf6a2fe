"""The central's network page."""

from django.urls import URLPattern, URLResolver, path

from halls.link import views

app_name = "link"

urlpatterns: list[URLPattern | URLResolver] = [
    path("network/", views.network, name="network"),
]
