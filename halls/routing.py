from django.urls import path

from halls.consumers import ScreenConsumer
from halls.ws_security import browser_socket

websocket_urlpatterns = [
    # A page on a hall display: an allowed Host and Origin (halls.ws_security).
    path("ws/screens/<str:token>/", browser_socket(ScreenConsumer.as_asgi())),
]
