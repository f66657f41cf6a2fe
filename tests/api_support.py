"""REST API clients and refusals, as every API test reads them."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


def api_client(user: User | None) -> APIClient:
    """A client with the user's API token (none: anonymous)."""
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def refused(response: Any, status: int, code: str, *words: str) -> dict[str, Any]:
    """Check an error answer: its status, its code, and that its message names the problem."""
    assert response.status_code == status, response.content
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code, error
    for word in words:
        assert word.lower() in error["message"].lower(), (word, error["message"])
    return error
