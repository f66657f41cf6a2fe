from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LinkConfig(AppConfig):
    """The link between venue installations and the central (DESIGN §2: the network of venues)."""

    name = "halls.link"
    label = "link"
    verbose_name = _("Network link")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from halls import metrics
        from halls.feed.services import emit
        from halls.link import handlers  # noqa: F401  (registers the HELLO and NOTICE handlers)
        from halls.link.feed_metrics import FeedBacklogCollector
        from halls.link.services import feed_outbox

        # The feed to the regulator's node is written to this outbox (halls.feed offers the hook); its
        # backlog and lag on /metrics.
        emit.register_writer(feed_outbox.write)
        metrics.register_collector(FeedBacklogCollector())
