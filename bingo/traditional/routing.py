"""WebSocket routes of bingo: the caller console's stream (a staff page: session login, same origin)."""

from channels.auth import AuthMiddlewareStack
from django.urls import URLPattern, URLResolver, path

from bingo.traditional.consumers import ConsoleConsumer
from halls.ws_security import browser_socket

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    path(
        "ws/console/rooms/<int:room_id>/",
        # The session cookie says who is watching; the origin check keeps other sites' pages from
        # opening a logged-in caller's socket (the consumer checks the role itself); the Host is checked too.
        browser_socket(AuthMiddlewareStack(ConsoleConsumer.as_asgi())),
    ),
]
