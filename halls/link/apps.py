from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LinkConfig(AppConfig):
    """The link between venue installations and the central (DESIGN §2: the network of venues)."""

    name = "halls.link"
    label = "link"
    verbose_name = _("Network link")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from halls.link import handlers  # noqa: F401  (registers the HELLO and NOTICE handlers)
