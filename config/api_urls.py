"""The REST API's routes (filled in by halls.api and bingo.api)."""

urlpatterns: list = []
