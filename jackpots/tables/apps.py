from django.apps import AppConfig


class TablesConfig(AppConfig):
    """Casino tables on the pool engine (spec §6): poker and blackjack tables, hands, the console."""

    name = "jackpots.tables"
    label = "tables"
    verbose_name = "Casino tables"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from jackpots.tables.services import register_hooks

        register_hooks()
