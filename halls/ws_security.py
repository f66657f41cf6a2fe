"""Who may open a WebSocket: the Host and Origin checks that Django's HTTP stack does not do for sockets.
Both read ``ALLOWED_HOSTS`` when a socket connects (not at import), so a changed setting applies.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import ParseResult

from channels.security.websocket import OriginValidator, WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host


def allowed_hosts() -> list[str]:
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:  # as Django's HTTP check does in DEBUG
        hosts = [".localhost", "127.0.0.1", "[::1]"]
    return hosts


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            try:
                return str(value.decode("latin1"))
            except UnicodeDecodeError:
                return ""
    return None


def host_allowed(scope: dict[str, Any]) -> bool:
    """The Host header names an allowed host, as for every HTTP request, whatever the socket (a socket
    without one is allowed only under ``*``)."""
    hosts = allowed_hosts()
    host = _header(scope, b"host")
    if host is None:
        return "*" in hosts
    domain, _port = split_domain_port(host.lower())
    return bool(domain) and validate_host(domain, hosts)


class _SettingsOrigins(OriginValidator):  # type: ignore[misc]
    """Channels' origin check against ``ALLOWED_HOSTS`` as they are now, after a Host check."""

    def __init__(self, application: Any, *, origin_required: bool) -> None:
        super().__init__(application, [])
        self.origin_required = origin_required

    @property
    def allowed_origins(self) -> list[str]:
        return allowed_hosts()

    @allowed_origins.setter
    def allowed_origins(self, value: Any) -> None:
        """OriginValidator.__init__ sets it; the settings decide instead."""

    def valid_origin(self, parsed_origin: ParseResult | None) -> bool:
        if parsed_origin is None and not self.origin_required:
            return True  # a device: no browser page behind it
        return bool(super().valid_origin(parsed_origin))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope.get("type") == "websocket" and not host_allowed(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await super().__call__(scope, receive, send)


def browser_socket(application: Any) -> Any:
    """A socket a page opens (the hall screens, the caller console): allowed Host and allowed Origin,
    required, since a browser always sends one: another site's page cannot open a socket in a visitor's
    browser (as Channels' ``AllowedHostsOriginValidator``)."""
    return _SettingsOrigins(application, origin_required=True)


def device_socket(application: Any) -> Any:
    """A socket a device opens (machine interface boards, the simulator): allowed Host; no Origin is
    accepted (only a browser page could abuse a socket on someone's behalf, and a browser always names its
    page's origin), but one that is sent must be an allowed host."""
    return _SettingsOrigins(application, origin_required=False)
