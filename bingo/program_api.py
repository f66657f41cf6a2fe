"""REST doors of the accumulated prize programs (bolsa acumulada): programs, versions, picks, simulation."""

from django.urls import URLPattern, URLResolver

urlpatterns: list[URLPattern | URLResolver] = []
