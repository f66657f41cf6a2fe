"""Who reads the authority's portal: the authority's own staff, signed in to this node (Django's users, in
the group "authority"; the node's superuser too), and only on a node run as the regulator (HALL_ROLE
=regulator: elsewhere the portal does not exist, 404). An installation has no user here: its credential only
posts its feed, and nothing of the portal answers it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext

# The group of the authority's staff on its node.
AUTHORITY_GROUP = "authority"


def on_node() -> bool:
    return str(settings.HALL_ROLE) == "regulator"


def is_authority(user: Any) -> bool:
    """Whether `user` is of the authority's staff on this node."""
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    if getattr(user, "is_superuser", False):
        return True
    found: bool = user.groups.filter(name=AUTHORITY_GROUP).exists()
    return found


def authority_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A portal page: 404 off the regulator's node, the login page for a visitor, 403 for anyone not of the
    authority's staff."""

    @wraps(view)
    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not on_node():
            raise Http404(gettext("The authority's portal is the regulator node's."))
        if not is_authority(request.user):
            raise PermissionDenied(gettext("The authority's portal is for the authority's staff."))
        return view(request, *args, **kwargs)

    return login_required(checked)
