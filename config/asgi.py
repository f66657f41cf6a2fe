"""ASGI entry point: HTTP through Django, WebSockets through Channels."""

import gc
import os

from django.conf import settings
from django.core.asgi import get_asgi_application

from config import redact
from config.http_limit import BoundedHTTP

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()
redact.install()  # no device token in the servers' logs (after Django's logging is configured)

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402  (after Django is set up)

from bingo.electronic.routing import websocket_urlpatterns as terminal_routes  # noqa: E402
from bingo.traditional.routing import websocket_urlpatterns as console_routes  # noqa: E402
from halls.link.routing import websocket_urlpatterns as link_routes  # noqa: E402
from halls.regulator.routing import websocket_urlpatterns as authority_routes  # noqa: E402
from halls.routing import websocket_urlpatterns as screen_routes  # noqa: E402
from machines.routing import websocket_urlpatterns as machine_routes  # noqa: E402

application = ProtocolTypeRouter(
    {
        # At most HALL_WEB_MAX_REQUESTS requests inside Django at once (config.http_limit).
        "http": BoundedHTTP(django_asgi_app, settings.HALL_WEB_MAX_REQUESTS),
        # Every route checks its Host and Origin (halls.ws_security): screens and the caller console are
        # pages (Origin required), machines and player terminals are devices (no Origin, or an allowed one).
        # Screens are reached by their token, machines and terminals by their device token, the console by
        # the staff session, venue installations (/ws/link/, at the central) by their link credential, the
        # authority's portal (/ws/authority/, at the regulator's node) by its staff's session.
        "websocket": URLRouter(
            [
                *screen_routes,
                *machine_routes,
                *console_routes,
                *terminal_routes,
                *link_routes,
                *authority_routes,
            ]
        ),
    }
)

# What is built so far (Django, every app's modules, URL patterns, catalogues) lives as long as the process:
# out of the cyclic collector's reach (gc.freeze), a full collection walks only what came after. A web
# process holding a thousand terminal sockets paused 235 ms on average for each full collection without it
# (bench/electronic_sales.py, "gc pause, generation 2"): the purchases' p99, every screen's frame then.
gc.freeze()
gc.set_threshold(*settings.HALL_WEB_GC_THRESHOLDS)
