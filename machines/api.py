"""REST doors of machines: registry, link groups, the gateway's HTTP batch endpoint, hand-pay clearing."""

from django.urls import URLPattern, URLResolver

urlpatterns: list[URLPattern | URLResolver] = []
