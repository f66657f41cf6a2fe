"""WebSocket routes of the machine gateway (one connection per machine's interface board)."""

from django.urls import URLPattern, URLResolver

websocket_urlpatterns: list[URLPattern | URLResolver] = []
