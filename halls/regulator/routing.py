from channels.auth import AuthMiddlewareStack
from django.urls import path

from halls.regulator.consumers import PortalConsumer
from halls.ws_security import browser_socket

websocket_urlpatterns = [
    # The authority's portal (a staff page: session login, same origin; the consumer checks the authority).
    path("ws/authority/", browser_socket(AuthMiddlewareStack(PortalConsumer.as_asgi()))),
]
