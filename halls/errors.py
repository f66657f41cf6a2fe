"""Domain errors: what a service refuses, with a stable code and a sentence a person can act on.

Doors turn them into answers (the API into a 4xx JSON body); a refused command writes nothing, because
services raise before or inside their transaction.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    status = 400
    default_code = "invalid"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            body["details"] = self.details
        return body


class InvalidInput(DomainError):
    """The request names something impossible: a ball out of range, a range outside its series."""


class NotFound(DomainError):
    """Unknown object, or one of another venue (indistinguishable on purpose)."""

    status = 404
    default_code = "not_found"


class PermissionDenied(DomainError):
    status = 403
    default_code = "forbidden"


class Conflict(DomainError):
    """Valid on its own but not now: wrong state, already drawn, already sold."""

    status = 409
    default_code = "conflict"


class Unavailable(DomainError):
    """Valid, but a device it needs did not answer (a till's printer): nothing was done; try again."""

    status = 503
    default_code = "unavailable"
