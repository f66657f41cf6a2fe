"""WebSocket routes of the machine gateway (one connection per machine's interface board)."""

from django.urls import URLPattern, URLResolver, re_path

from machines.consumers import MachineConsumer

# The asset number as the registry allows it (machines.services.registry.ASSET); the device token and
# the optional venue id come in the query string.
websocket_urlpatterns: list[URLPattern | URLResolver] = [
    re_path(r"^ws/machines/(?P<asset>[A-Za-z0-9][A-Za-z0-9._-]{0,39})/$", MachineConsumer.as_asgi()),
]
