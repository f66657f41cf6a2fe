from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NetworkConfig(AppConfig):
    """Interconnected bingo (IB-01) over the network link (halls.link)."""

    name = "bingo.network.interconnected"
    label = "bingo_network"
    verbose_name = _("Interconnected bingo")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from bingo.electronic import network_hooks
        from bingo.network.interconnected import link_handlers  # noqa: F401 (registers the link's handlers)
        from bingo.network.interconnected.services import gran, screens, venue
        from bingo.traditional import hooks
        from halls import hooks as hall_hooks
        from jackpots.services.readmodels import screens as pool_screens

        hooks.register_game_listener(hooks.GameListener(sales_closed=venue.sales_closed, ended=venue.ended))
        network_hooks.register(
            network_hooks.NetworkListener(
                joins=gran.joins,
                sales_closed=gran.sales_closed,
                decided=gran.decided,
                ended=gran.ended,
                meters=gran.speciality_meters,
            )
        )
        # The network pool is shown by the prize's own block (amount and max ball), not in the pools ribbon.
        pool_screens.register_own_display(screens.network_pool_ids)
        hall_hooks.register_screen_section(
            hall_hooks.ScreenSection(
                name="network",
                snapshot=screens.screen_snapshot,
                template="bingo_network/screen_section.html",
                script="bingo_network/screen.js",
            )
        )
