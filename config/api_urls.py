"""The REST API's routes (under /api/): halls' doors (token, venues, sessions), then bingo's."""

from django.urls import URLPattern, URLResolver

from bingo import api as bingo_api
from halls import api as halls_api

urlpatterns: list[URLPattern | URLResolver] = [*halls_api.urlpatterns, *bingo_api.urlpatterns]
