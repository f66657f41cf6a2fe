from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RegulatorConfig(AppConfig):
    """The gaming authority's node (HALL_ROLE=regulator): the feed received, the portal."""

    name = "halls.regulator"
    label = "regulator"
    verbose_name = _("Gaming authority node")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from halls import metrics
        from halls.regulator.metrics import NodeLagCollector

        metrics.register_collector(NodeLagCollector())  # the feed's lag per installation on /metrics
