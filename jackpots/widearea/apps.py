from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WideAreaConfig(AppConfig):
    """Wide-area progressives across a network's venues (issue 31), on the pool engine and the link."""

    name = "jackpots.widearea"
    label = "widearea"
    verbose_name = _("Wide-area progressives")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from jackpots.widearea import (
            link_handlers,  # noqa: F401  (registers the link's handlers)
            metrics,  # noqa: F401  (the /metrics counters)
        )
