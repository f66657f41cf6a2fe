from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class VenuewideConfig(AppConfig):
    """Pages that span bingo's wings: setup, the minutes, the inspector (no models of its own)."""

    name = "bingo.venuewide"
    label = "bingo_venuewide"
    verbose_name = _("Venue pages")
