"""Abuse limits: what an anonymous caller may make the server do, counted per client address in the cache
(rates: settings.HALL_THROTTLE_RATES), and django-axes' lockout per username and address. Refusals are 429:
the JSON error envelope under /api/, a short page elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import sync_and_async_middleware
from django.utils.html import escape
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

# A request, or the client address itself (a WebSocket's scope["client"][0]).
Caller = HttpRequest | Request | str


def client_ip(request: Caller) -> str:
    """The caller's address: REMOTE_ADDR (behind the proxy uvicorn sets it from the trusted X-Forwarded-For;
    a client's own header is never believed)."""
    if isinstance(request, str):
        return request or "unknown"
    return str(request.META.get("REMOTE_ADDR") or "unknown")


class AddressThrottle(SimpleRateThrottle):
    """A fixed-scope rate per client address, usable from DRF views and plain Django code alike."""

    def __init__(self, scope: str) -> None:
        self.scope = self.hall_scope = scope
        super().__init__()

    def get_rate(self) -> str | None:
        rate: str | None = settings.HALL_THROTTLE_RATES[self.hall_scope]
        return rate

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.hall_scope, "ident": client_ip(request)}

    def over(self, request: Caller) -> bool:
        """Whether this address has used up its rate, without counting this request."""
        limit, seconds = self.parse_rate(self.rate)
        if limit is None or seconds is None:
            return False
        self.key = self.get_cache_key(request, None)
        self.history = self.cache.get(self.key, [])
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - seconds:
            self.history.pop()
        return len(self.history) >= limit

    def count(self, request: Caller) -> None:
        """Count one event (a failure) for this address."""
        if self.over(request):
            return  # already over: refused before any token is looked at, nothing more to count
        self.throttle_success()


def over_many(scope: str, addresses: Iterable[str]) -> dict[str, bool]:
    """`AddressThrottle(scope).over` for each address, in one cache read for all of them (a socket door's
    connects of a moment, halls.socket_reads: a cache client and a round trip per address was a quarter of
    the terminals' batched token check, issue 30)."""
    throttle = AddressThrottle(scope)
    wanted = set(addresses)
    limit, seconds = throttle.parse_rate(throttle.rate)
    if limit is None or seconds is None or not wanted:
        return dict.fromkeys(wanted, False)
    keys = {address: throttle.get_cache_key(address, None) for address in wanted}
    found = throttle.cache.get_many(list(keys.values()))
    since = throttle.timer() - seconds
    return {
        address: sum(1 for at in found.get(key, []) if at > since) >= limit for address, key in keys.items()
    }


class AuthRateThrottle(AddressThrottle):
    """DRF throttle of the token exchange, each of which hashes a password (DRF checks throttles before the
    view reads it)."""

    def __init__(self) -> None:
        super().__init__("auth")


def throttled(scope: str, wait: float | None) -> exceptions.Throttled:
    return exceptions.Throttled(
        wait=wait,
        detail=_("Too many attempts from your address; try again later."),
        code="throttled",
    )


def check_failures(request: Caller, scope: str) -> None:
    """Refuse (429) an address that failed too often in ``scope`` (``device_failures``: wrong device tokens,
    ``screen_failures``: unknown screen tokens); call before checking its token. Only failures count, so a
    hall of machines or screens behind one address is never slowed."""
    throttle = AddressThrottle(scope)
    if throttle.over(request):
        raise throttled(scope, throttle.wait())


def count_failure(request: Caller, scope: str) -> None:
    AddressThrottle(scope).count(request)


def too_many_response(request: HttpRequest, wait: float | None = None) -> HttpResponse:
    """429 for plain Django views: the JSON envelope under /api/ (and for JSON snapshots), a line of text
    elsewhere."""
    message = _("Too many attempts from your address; try again later.")
    response: HttpResponse
    if request.path.startswith("/api/") or request.path.endswith("/snapshot/"):
        response = JsonResponse({"error": {"code": "throttled", "message": message}}, status=429)
    else:
        response = HttpResponse(f"<p>{escape(message)}</p>", status=429)
    if wait:
        response["Retry-After"] = str(int(wait) + 1)
    return response


@sync_and_async_middleware
def login_rate_middleware(get_response: Any) -> Any:
    """POSTs to the login pages, per address, before the form (and its password hash) is touched."""

    def refusal(request: HttpRequest) -> HttpResponse | None:
        if request.method != "POST" or request.path not in settings.HALL_LOGIN_PATHS:
            return None
        throttle = AddressThrottle("login")
        if throttle.allow_request(request, None):  # type: ignore[arg-type]
            return None
        return too_many_response(request, throttle.wait())

    if iscoroutinefunction(get_response):

        async def middleware(request: HttpRequest) -> HttpResponse:
            refused = None
            if request.method == "POST":  # the cache is only asked about POSTs
                refused = await sync_to_async(refusal)(request)
            return refused or await get_response(request)

    else:

        def middleware(request: HttpRequest) -> HttpResponse:  # type: ignore[misc]
            return refusal(request) or get_response(request)

    return middleware


def locked_out_message() -> str:
    minutes = max(1, round(float(settings.AXES_COOLOFF_TIME) * 60))  # AXES_COOLOFF_HOURS
    return ngettext(
        "Too many failed logins for this account from your address; try again in %(n)d minute.",
        "Too many failed logins for this account from your address; try again in %(n)d minutes.",
        minutes,
    ) % {"n": minutes}


def axes_lockout(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """django-axes' answer to a locked-out username at an address (AXES_LOCKOUT_CALLABLE)."""
    message = locked_out_message()
    if request.path.startswith("/api/"):
        return JsonResponse({"error": {"code": "locked_out", "message": message}}, status=429)
    return HttpResponse(f"<p>{escape(message)}</p>", status=429)


class LockoutBackend(AxesStandaloneBackend):  # type: ignore[misc]
    """django-axes' lockout check for logins through a door (the login pages, the admin, the token
    exchange: each passes its request). A call without a request (a management command, the test client's
    login) has no client address to lock out and is left to the next backend."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)  # type: ignore[no-any-return]
