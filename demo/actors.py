"""The demo's one acting user: every self-played sale, draw, claim and hand is recorded as "autoplay"."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

AUTOPLAY_USER = "autoplay"


def autoplay_actor() -> User:
    user, _ = get_user_model().objects.get_or_create(username=AUTOPLAY_USER, defaults={"is_active": False})
    return user
