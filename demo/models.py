"""The demo's own record of which rooms play by themselves: a real room has no such switch."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from halls.models import Room


class AutoplayRoom(models.Model):
    """A room the demo plays by itself: sells, draws, claims the winning cards and starts the next game."""

    room = models.OneToOneField(Room, on_delete=models.CASCADE, related_name="+")

    class Meta:
        verbose_name = _("self-playing room")
        verbose_name_plural = _("self-playing rooms")

    def __str__(self) -> str:
        return str(self.room)
