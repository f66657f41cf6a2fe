"""WebSocket routes of the machine gateway (one connection per machine's interface board)."""

from django.urls import URLPattern, URLResolver, re_path

from halls.ws_security import device_socket
from machines.consumers import MachineConsumer

# The asset number as the registry allows it (machines.services.registry.ASSET); the device token and
# the optional venue id come in the query string.
websocket_urlpatterns: list[URLPattern | URLResolver] = [
    # A device: an allowed Host; boards send no Origin, one that is sent must be allowed (halls.ws_security).
    re_path(
        r"^ws/machines/(?P<asset>[A-Za-z0-9][A-Za-z0-9._-]{0,39})/$", device_socket(MachineConsumer.as_asgi())
    ),
]
