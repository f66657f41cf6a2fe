"""One JSON shape for every refusal: {"error": {"code": ..., "message": ..., "details"/"fields": ...}}.

``exception_handler`` renders it for DRF views; ``api_error_middleware`` for everything else under /api/
(no such URL, an id out of range, a body too large, a server error), which Django would answer with HTML.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import sync_and_async_middleware
from django.utils.translation import get_language, override
from django.utils.translation import gettext as _
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler

from halls.errors import DomainError


def name_fields(exc: exceptions.ValidationError, serializer: Any) -> None:
    """Keep the serializer's field labels with its refusal (halls.api.valid), so the message can name each
    field as its reader says it; the `fields` of the answer keep the machine-readable keys."""
    fields = getattr(serializer, "fields", None) or {}
    exc.field_labels = {name: field.label for name, field in fields.items() if field.label}  # type: ignore[attr-defined]


def _field_name(key: Any, labels: dict[str, Any]) -> str | None:
    """How a refusal's message names a field for its reader: in English by its key (as the API always has,
    the same key as in `fields`); in any other language by the field's label translated into it (a model
    field's verbose name, a serializer's label, DRF's label made from the key when the catalogue has it),
    and not at all when there is none (never an English key in a Spanish sentence). Errors that belong to
    no field (DRF's `non_field_errors`) are not prefixed."""
    if key == api_settings.NON_FIELD_ERRORS_KEY:
        return None
    if (get_language() or settings.LANGUAGE_CODE).lower().startswith("en"):
        return str(key)
    label = labels.get(str(key))
    if label is None:
        return None
    with override("en"):
        english = str(label)
    shown = str(label)  # a lazy label (a model field's verbose name) is in the active language already
    if shown == english:
        shown = _(english)
    return shown if shown != english else None


def _flatten(detail: Any, labels: dict[str, Any] | None = None) -> str:
    if isinstance(detail, dict):
        parts = []
        for key, value in detail.items():
            name = _field_name(key, labels or {})
            # Nested fields' labels are not kept: a nested refusal says its own, unprefixed in Spanish.
            text = _flatten(value)
            parts.append(f"{name}: {text}" if name else text)
        return "; ".join(parts)
    if isinstance(detail, list):
        return " ".join(_flatten(v) for v in detail)
    return str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response({"error": exc.as_dict()}, status=exc.status)
    if isinstance(exc, exceptions.ValidationError):
        return Response(
            {
                "error": {
                    "code": "invalid",
                    "message": _flatten(exc.detail, getattr(exc, "field_labels", None)),
                    "fields": exc.detail,
                }
            },
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or _("Not found."))
    if isinstance(exc, exceptions.Throttled):
        seconds: float | None = getattr(exc, "wait", None)
        wait = int(seconds) + 1 if seconds else None
        message = _("Too many requests from your address; try again later.")
        if wait:
            message = _("Too many requests from your address; try again in %(wait)d seconds.") % {
                "wait": wait
            }
        exc = exceptions.Throttled(wait=seconds, detail=message, code="throttled")
    if isinstance(exc, RequestDataTooBig):
        return too_large()
    if isinstance(exc, RecursionError):  # a body nested past what Python's parser can hold
        exc = exceptions.ParseError(_("The JSON body is nested too deeply."), code="too_deep")
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else "error"
        response.data = {"error": {"code": code, "message": _flatten(exc.detail)}}
    return response


# --- Django-level errors under /api/ ---------------------------------------------------------------------

API_PREFIX = "/api/"
# The largest id a database key holds (bigint): a larger one in a URL is no such object, not a crash.
MAX_ID = 2**63 - 1


def _codes() -> dict[int, tuple[str, str]]:
    return {
        400: ("bad_request", _("The request could not be read.")),
        401: ("not_authenticated", _("Authentication credentials were not provided.")),
        403: ("forbidden", _("You do not have permission to do this.")),
        404: ("not_found", _("There is no such resource.")),
        405: ("method_not_allowed", _("This method is not allowed here.")),
        413: ("too_large", _("The request body is too large.")),
        429: ("throttled", _("Too many requests; try again later.")),
    }


def envelope(status: int) -> JsonResponse:
    code, message = _codes().get(status, ("error", _("The request failed.")))
    if status >= 500:
        code, message = "server_error", _("Server error: the request was not completed.")
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def too_large() -> Response:
    return Response(
        {"error": {"code": "too_large", "message": _("The request body is too large.")}},
        status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    )


def _is_json(response: HttpResponse) -> bool:
    return "json" in response.get("Content-Type", "")


def _rewrite(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    if (
        request.path.startswith(API_PREFIX)
        and response.status_code >= 400
        and not response.streaming
        and not _is_json(response)
    ):
        replaced = envelope(response.status_code)
        for header in ("Allow", "Retry-After", "WWW-Authenticate"):
            if header in response:
                replaced[header] = response[header]
        return replaced
    return response


def _id_out_of_range(
    request: HttpRequest, view: Any, args: Any, kwargs: dict[str, Any]
) -> HttpResponse | None:
    if request.path.startswith(API_PREFIX) and any(
        isinstance(v, int) and not 0 <= v <= MAX_ID for v in kwargs.values()
    ):
        return envelope(404)
    return None


def _body_too_large(request: HttpRequest, exc: Exception) -> HttpResponse | None:
    if request.path.startswith(API_PREFIX) and isinstance(exc, RequestDataTooBig):
        return envelope(413)
    return None


@sync_and_async_middleware
def api_error_middleware(get_response: Any) -> Any:
    """Every error under /api/ as the JSON envelope, keeping its status: Django's own 404 (no such URL or a
    malformed id), 400, 413 (a body over DATA_UPLOAD_MAX_MEMORY_SIZE), 500. URL ids beyond the database's
    range are a 404 here, before any query. (Both modes, so an ASGI request never hops to a thread here.)"""
    middleware: Any
    if iscoroutinefunction(get_response):

        async def middleware(request: HttpRequest) -> HttpResponse:
            return _rewrite(request, await get_response(request))

        async def process_view(*args: Any) -> HttpResponse | None:
            return _id_out_of_range(*args)

        async def process_exception(*args: Any) -> HttpResponse | None:
            return _body_too_large(*args)

        middleware.process_view = process_view
        middleware.process_exception = process_exception
    else:

        def middleware(request: HttpRequest) -> HttpResponse:
            return _rewrite(request, get_response(request))

        middleware.process_view = _id_out_of_range
        middleware.process_exception = _body_too_large
    return middleware
