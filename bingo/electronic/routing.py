"""WebSocket routes of electronic bingo: the player terminal's streams (its touch page, or a simulator)."""

from django.urls import URLPattern, URLResolver, path

from bingo.electronic.consumers import TerminalConsumer
from halls.ws_security import device_socket

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    # A device (the terminal's page, or a simulated terminal without a browser): an allowed Host, and an
    # Origin, if one is sent, of an allowed host (halls.ws_security). The device token is what admits it (no
    # cookie is involved, so another site's page gains nothing); it comes in the query string with the
    # device id (config.redact keeps it out of the servers' logs).
    path("ws/electronic/terminal/", device_socket(TerminalConsumer.as_asgi())),
]
