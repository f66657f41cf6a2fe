from django.urls import path

from halls.consumers import ScreenConsumer

websocket_urlpatterns = [
    path("ws/screens/<str:token>/", ScreenConsumer.as_asgi()),
]
