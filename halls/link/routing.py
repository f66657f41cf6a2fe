"""WebSocket route of the link: the socket a venue installation opens to the central."""

from django.urls import URLPattern, URLResolver, re_path

from halls.link.consumers import LinkConsumer
from halls.ws_security import device_socket

# A device's socket: an allowed Host, no Origin (a venue's link process is no browser page).
websocket_urlpatterns: list[URLPattern | URLResolver] = [
    re_path(r"^ws/link/$", device_socket(LinkConsumer.as_asgi())),
]
