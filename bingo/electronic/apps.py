from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ElectronicConfig(AppConfig):
    """Electronic and automatic bingo (DESIGN §2: they live in bingo; a sub-app keeps their rows apart)."""

    name = "bingo.electronic"
    label = "electronic"
    verbose_name = _("Electronic bingo")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from bingo.electronic import tasks
        from bingo.electronic.services import games

        games.register_draw_enqueuer(tasks.enqueue_draw)
