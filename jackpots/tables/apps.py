from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TablesConfig(AppConfig):
    """Casino tables on the pool engine (spec §6): poker and blackjack tables, hands, the console."""

    name = "jackpots.tables"
    label = "tables"
    verbose_name = _("Casino tables")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from jackpots.tables.services import register_hooks

        register_hooks()
        # The gaming-tax returns read the tables' drop from here (halls.tax never imports jackpots).
        from halls.tax.hooks import register_figures
        from jackpots.tables.taxfigures import SOURCE

        register_figures(SOURCE)
