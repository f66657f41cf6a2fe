"""One JSON shape for every refusal: {"error": {"code": ..., "message": ..., "details"/"fields": ...}}."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from halls.errors import DomainError


def _flatten(detail: Any) -> str:
    if isinstance(detail, dict):
        return "; ".join(f"{k}: {_flatten(v)}" for k, v in detail.items())
    if isinstance(detail, list):
        return " ".join(_flatten(v) for v in detail)
    return str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response({"error": exc.as_dict()}, status=exc.status)
    if isinstance(exc, exceptions.ValidationError):
        return Response(
            {"error": {"code": "invalid", "message": _flatten(exc.detail), "fields": exc.detail}},
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else "error"
        response.data = {"error": {"code": code, "message": _flatten(exc.detail)}}
    return response
