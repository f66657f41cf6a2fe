"""The inspector's read-only door (spec §8; issue 15): every request that only reads runs inside
``halls.access.reading()``, and a write of a user who is only an inspector is refused here with 403, before
any view, whatever the door (API, page, admin).

Allowed to an inspector: logging in and out, the language switch, the API token exchange and the audit
verification (a read, also offered as POST).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, JsonResponse
from django.utils.translation import gettext as _
from rest_framework.authtoken.models import Token

from halls import access

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
INSPECTOR_MAY_POST = re.compile(
    r"^/(accounts/login/|accounts/logout/|i18n/setlang/|api/auth/token/|api/venues/\d+/audit/verify/)$"
)


def _user(request: HttpRequest) -> access.AnyUser:
    """The session's user, else the API token's (DRF reads the token only inside the view)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return user  # type: ignore[no-any-return]
    header = request.headers.get("Authorization", "")
    kind, _sep, key = header.partition(" ")
    if kind.lower() == "token" and key.strip():
        token = Token.objects.filter(key=key.strip()).select_related("user").first()
        if token is not None and token.user.is_active:
            found: access.AnyUser = token.user
            return found
    return AnonymousUser()


def readonly_middleware(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable[..., HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        if request.method in SAFE_METHODS:
            with access.reading():
                return get_response(request)
        if not INSPECTOR_MAY_POST.match(request.path) and access.only_inspects(_user(request)):
            message = _("The inspector's access is read-only: nothing can be changed with it.")
            if request.path.startswith("/api/"):
                return JsonResponse({"error": {"code": "read_only", "message": message}}, status=403)
            return HttpResponseForbidden(message)
        return get_response(request)

    return middleware
