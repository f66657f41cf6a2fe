from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class VenuewideConfig(AppConfig):
    """Pages that span bingo's wings: setup, the minutes, the inspector (no models of its own)."""

    name = "bingo.venuewide"
    label = "bingo_venuewide"
    verbose_name = _("Venue pages")

    def ready(self) -> None:
        # The gaming-tax returns read the bingo games' figures from here (halls.tax never imports bingo).
        from bingo.venuewide.taxfigures import SOURCE
        from halls.tax.hooks import register_figures

        register_figures(SOURCE)
