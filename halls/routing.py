from channels.auth import AuthMiddlewareStack
from django.urls import path

from halls.cashier.consumers import CashierConsumer
from halls.consumers import ScreenConsumer
from halls.door.consumers import DoorConsumer
from halls.ws_security import browser_socket

websocket_urlpatterns = [
    # A page on a hall display: an allowed Host and Origin (halls.ws_security).
    path("ws/screens/<str:token>/", browser_socket(ScreenConsumer.as_asgi())),
    # The till page (a staff page: session login, same origin; the consumer checks the cashier role).
    path("ws/cashier/venues/<int:venue_id>/", browser_socket(AuthMiddlewareStack(CashierConsumer.as_asgi()))),
    # The door's admission page (a staff page; the consumer checks the door role): the live count.
    path("ws/door/venues/<int:venue_id>/", browser_socket(AuthMiddlewareStack(DoorConsumer.as_asgi()))),
]
